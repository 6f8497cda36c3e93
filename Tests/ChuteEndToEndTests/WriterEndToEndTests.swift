import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Real writers that the quiet period alone cannot be trusted with: each file yields exactly one job, on the whole
/// file, never on a part of it.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct WriterEndToEndTests {
    @Test func aFileWrittenInChunksWithPausesAndReopensIsTakenOnceWhole() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("photo.png"), width: 1600, height: 1200)
        let data = try Data(contentsOf: URL(fileURLWithPath: staging.appending("photo.png").string))
        let target = harness.inbox.appending("chunked.png")
        guard FileManager.default.createFile(atPath: target.string, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }

        // A slow uploader that reconnects: each chunk opens the file, appends and closes it (an IN_CLOSE_WRITE each
        // time), then the writer pauses for three quiet periods. The pauses are the writer's behaviour under test,
        // not a way to wait for the daemon.
        let chunk = data.count / 4 + 1
        for start in stride(from: 0, to: data.count, by: chunk) {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: target.string))
            try handle.seekToEnd()
            try handle.write(contentsOf: data[start..<min(data.count, start + chunk)])
            try handle.close()
            if start + chunk < data.count { try await Task.sleep(for: .milliseconds(900)) }
        }

        let sidecars = try await harness.waitForSidecars(1)
        let sidecar = try #require(sidecars["chunked.jpg.chute.json"])
        #expect(sidecar.status == .completed)
        #expect(sidecar.source.size == Int64(data.count))
        // The quiet periods between chunks did end; the missing IEND chunk held the file back.
        #expect(!daemon.logLines(containing: "Waiting until the file is ready", "chunked.png", "IEND").isEmpty)
        let output = try Fixtures.identify(harness.outbox.appending("chunked.jpg"))
        #expect(output.width == 1600 && output.height == 1200)
    }

    @Test func aWriterThatKeepsTheFileOpenAndIdleIsWaitedFor() async throws {
        // The writer keeps the file open: the check for writers, made before the structure's, holds it back.
        let harness = try Self.harness(matching: "*.tif", to: "jpg")
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("scan.tif"), width: 1200, height: 900)
        let data = try Data(contentsOf: URL(fileURLWithPath: staging.appending("scan.tif").string))
        let target = harness.inbox.appending("scan.tif")
        guard FileManager.default.createFile(atPath: target.string, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }

        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: target.string))
        try handle.write(contentsOf: data.prefix(data.count / 2))
        // Idle with the file open, until the daemon has seen it quiet and found the writer.
        try await waitUntil("the daemon to find the writer", timeout: 30) {
            daemon.logLines(containing: "Waiting until the file is ready", "scan.tif", "open for writing").isEmpty
                ? nil : true
        }
        try handle.write(contentsOf: data.suffix(from: data.count / 2))
        try handle.close()

        let sidecars = try await harness.waitForSidecars(1)
        let sidecar = try #require(sidecars["scan.jpg.chute.json"])
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        #expect(sidecar.source.size == Int64(data.count))
    }

    @Test func cpOfALargeFileIsTakenOnceWhole() async throws {
        let harness = try Self.harness(matching: "*.wav", to: "mp3")
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        // Three minutes of 48 kHz stereo: 34 MB.
        try MediaFixtures.makeClip(
            at: staging.appending("long.wav"),
            width: nil,
            seconds: 180,
            codecArguments: ["-c:a", "pcm_s16le"]
        )
        let attributes = try FileManager.default.attributesOfItem(atPath: staging.appending("long.wav").string)
        let size = try #require((attributes[.size] as? NSNumber)?.int64Value)

        try CommandLineTool.run([
            "cp", staging.appending("long.wav").string, harness.inbox.appending("long.wav").string,
        ])

        let sidecars = try await harness.waitForSidecars(1, timeout: 120)
        let sidecar = try #require(sidecars["long.mp3.chute.json"])
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        #expect(sidecar.source.size == size)
        let duration = try #require(try MediaFixtures.probe(harness.outbox.appending("long.mp3")).duration)
        #expect(abs(duration - 180) < 0.5)
    }

    /// A harness whose one rule converts `pattern` to `format`, plus the rule for the sentinel PNGs of
    /// ``DaemonHarness/waitForSidecars(_:timeout:)``.
    private static func harness(matching pattern: String, to format: String) throws -> DaemonHarness {
        try DaemonHarness(
            rules: """
                  - name: files
                    match: "\(pattern)"
                    to: \(format)
                    output: ./outbox
                  - name: sentinels
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                """
        )
    }
}
