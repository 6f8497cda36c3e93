import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The daemon's log is machine-readable: logfmt by default, JSON lines with `--log-format json`.
@Suite(.timeLimit(.minutes(3)))
struct LogFormatEndToEndTests {
    private static let name = "Screenshot 2024-06-01 at 10.00.00.png"

    /// Drops a screenshot whose name has spaces and waits for its sidecar.
    private func convertScreenshot(_ harness: DaemonHarness) async throws {
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending(Self.name))
        try harness.moveIn([Self.name], from: staging)
        try await harness.waitForSidecars(1)
    }

    @Test func everyRecordIsLogfmtAndAPathWithSpacesReadsBackWhole() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        try await harness.start()
        try await self.convertScreenshot(harness)

        let log = try #require(harness.daemon).log
        let malformed = log.filter { Logfmt.parse($0) == nil }
        #expect(malformed.isEmpty, "lines that are not logfmt: \(malformed.prefix(3))")
        let records = log.compactMap(Logfmt.parse)
        #expect(records.allSatisfy { $0["time"] != nil && $0["level"] != nil && $0["msg"] != nil })
        let source = harness.inbox.appending(Self.name).string
        let completed = records.filter { $0["msg"] == "Job completed" && $0["input.path"] == source }
        #expect(completed.count == 1, "\(log.filter { $0.contains("Job completed") })")
        let output = try #require(completed.first?["output.path"])
        #expect(FileManager.default.fileExists(atPath: output), "\(output)")
    }

    @Test func jsonLogsOneObjectPerLine() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        try await harness.start(arguments: ["--log-format", "json"])
        try await self.convertScreenshot(harness)

        let log = try #require(harness.daemon).log
        let objects = log.map { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
        let malformed = zip(log, objects).filter { $0.1 == nil }.map(\.0)
        #expect(malformed.isEmpty, "lines that are not JSON objects: \(malformed.prefix(3))")
        let records = objects.compactMap { $0 }
        #expect(records.allSatisfy { $0["time"] is String && $0["level"] is String && $0["msg"] is String })
        let source = harness.inbox.appending(Self.name).string
        let completed = records.filter {
            $0["msg"] as? String == "Job completed" && $0["input.path"] as? String == source
        }
        #expect(completed.count == 1)
        let output = try #require(completed.first?["output.path"] as? String)
        #expect(FileManager.default.fileExists(atPath: output), "\(output)")
        #expect(completed.first?["job.id"] is String && completed.first?["rule.name"] as? String == "to-jpg")
    }
}
