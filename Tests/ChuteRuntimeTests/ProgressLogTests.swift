import ChuteCore
import Logging
import Testing

@testable import ChuteRuntime

@Suite struct ProgressLogTests {
    @Test func mediaJobsGetPercentSpeedAndTimeLeft() {
        // 30 s of a 120 s clip converted in 10 s: a quarter done, 3x real time, 30 s to go at this pace.
        let metadata = ProgressLog.metadata(
            JobProgress(fraction: 0.25, mediaSeconds: 30),
            elapsed: .seconds(10),
            remaining: .seconds(30)
        )

        #expect(metadata["progress"] == "25%")
        #expect(metadata["speed"] == "3.00x")
        #expect(metadata["eta"] == "30s")
    }

    @Test func speedIsOnlyGivenForMedia() {
        let metadata = ProgressLog.metadata(
            JobProgress(fraction: 0.5),
            elapsed: .milliseconds(2500),
            remaining: .milliseconds(2500)
        )

        #expect(metadata["progress"] == "50%")
        #expect(metadata["speed"] == nil)
        #expect(metadata["eta"] == "3s")
    }

    @Test func nothingDoneYetHasNoEstimate() {
        let metadata = ProgressLog.metadata(
            JobProgress(fraction: 0, mediaSeconds: 0),
            elapsed: .seconds(4),
            remaining: nil
        )

        #expect(metadata["progress"] == "0%")
        #expect(metadata["speed"] == "0.00x")
        #expect(metadata["eta"] == nil)
    }

    @Test func recordsComeOncePerInterval() {
        let start = Duration.zero
        var log = ProgressLog(start: start)
        let records = RecordingLogHandler.Box()
        let logger = Logger(label: "test") { _ in RecordingLogHandler(box: records) }

        for tenth in 1...200 {  // 20 s of reports, ten a second
            log.record(JobProgress(fraction: Double(tenth) / 200), to: logger, at: start + .milliseconds(tenth * 100))
        }

        #expect(records.count == 4)  // at 5, 10, 15 and 20 s
    }
}
