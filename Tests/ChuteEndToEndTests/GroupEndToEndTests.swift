import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Rules with `groupBy: folder` on the real daemon: a folder of PDFs copied in with `cp -r` becomes one merged PDF
/// in natural name order, a file added afterwards is reported and starts no job, the `doneSuffix` marker of a folder
/// holds the group back, a damaged file fails its group by name, and a kill -9 leaves exactly one output.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct GroupEndToEndTests {
    /// The sentinel rule, then a rule merging the PDFs of each sub-folder into one PDF in the outbox.
    private static func harness(settings: String = "", watchOptions: String = "") throws -> DaemonHarness {
        try DaemonHarness(
            rules: """
                  - name: sentinels
                    match: "zz-sentinel-*.png"
                    to: jpg
                    output: ./outbox
                  - name: merge
                    match: "*.pdf"
                    to: pdf
                    output: ./outbox
                    groupBy: folder
                """,
            settings: settings,
            watchOptions: watchOptions
        )
    }

    /// Each file's pages: `1.pdf`, `2.pdf` and `10.pdf`, whose natural order differs from their byte order.
    private static let pages: [(name: String, pages: [String])] = [
        ("10.pdf", ["ten a", "ten b", "ten c"]), ("1.pdf", ["one a", "one b"]), ("2.pdf", ["two"]),
    ]

    /// Writes the fixture PDFs into a staging folder `name` and returns it.
    private static func stage(_ name: String, in harness: DaemonHarness) throws -> FilePath {
        let folder = try harness.directory.makeDirectory("staging/\(name)")
        for (file, pages) in Self.pages {
            try Data(PDFFixtures.make(pages: pages)).write(to: URL(fileURLWithPath: folder.appending(file).string))
        }
        return folder
    }

    /// Copies a staged folder into the inbox as `cp -r` does: the folder first, then its files one by one.
    private static func copyIn(_ folder: FilePath, to harness: DaemonHarness) throws {
        try CommandLineTool.run(["cp", "-r", folder.string, harness.inbox.string])
    }

    /// The page count `pdfinfo` gives.
    private static func pageCount(_ path: FilePath) throws -> Int? {
        let info = try CommandLineTool.run(["pdfinfo", path.string]).standardOutput
        let line = info.split(separator: "\n").first { $0.hasPrefix("Pages:") }
        return line.flatMap { Int($0.dropFirst("Pages:".count).trimmingCharacters(in: .whitespaces)) }
    }

    /// The text of each page, as `pdftotext` extracts it.
    private static func pageTexts(_ path: FilePath) throws -> [String] {
        let text = try CommandLineTool.run(["pdftotext", "-layout", path.string, "-"]).standardOutput
        return text.split(separator: "\u{0C}", omittingEmptySubsequences: false).dropLast()
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// The PDFs in the outbox.
    private static func outputs(of harness: DaemonHarness) -> [String] {
        harness.directory.files(below: "outbox").filter { $0.hasSuffix(".pdf") }
    }

    /// The merged pages in natural name order: 1.pdf, 2.pdf, 10.pdf.
    private static let mergedPages = ["one a", "one b", "two", "ten a", "ten b", "ten c"]

    /// Checks the merged output of the group `name` and its sidecar: every page in order, every input listed in
    /// order with its size and SHA-256.
    private static func checkMerged(_ name: String, sidecar: Sidecar, in harness: DaemonHarness) throws {
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        let output = harness.outbox.appending("\(name).pdf")
        #expect(try Self.pageCount(output) == 6)
        #expect(try Self.pageTexts(output) == Self.mergedPages)
        let folder = harness.inbox.appending(name)
        #expect(sidecar.source.path == folder.string)
        let inputs = try #require(sidecar.inputs, "the sidecar lists no inputs")
        #expect(inputs.map(\.path) == ["1.pdf", "2.pdf", "10.pdf"].map { folder.appending($0).string })
        for input in inputs {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: input.path))
            #expect(input.size == Int64(bytes.count))
            let sum = try CommandLineTool.run(["sha256sum", input.path]).standardOutput.prefix(64)
            #expect(input.sha256 == String(sum), "\(input.path)")
        }
        #expect(sidecar.details["inputFiles"] == "3")
    }

    @Test func aFolderCopiedInBecomesOneMergedPDFInNaturalOrder() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        try Self.copyIn(try Self.stage("scans", in: harness), to: harness)

        let sidecars = try await harness.waitForSidecars(1)
        let sidecar = try #require(sidecars["scans.pdf.chute.json"], "\(sidecars.keys)")
        try Self.checkMerged("scans", sidecar: sidecar, in: harness)
        // One output for the folder, none for its files alone.
        #expect(Self.outputs(of: harness) == ["scans.pdf"])
        #expect(harness.temporaryFiles().isEmpty, "\(harness.temporaryFiles())")
    }

    @Test func aFileAddedToATakenGroupIsReportedAndStartsNoJob() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        try Self.copyIn(try Self.stage("scans", in: harness), to: harness)
        let sidecar = try #require(try await harness.waitForSidecars(1)["scans.pdf.chute.json"])
        try Self.checkMerged("scans", sidecar: sidecar, in: harness)

        let staging = try harness.directory.makeDirectory("late")
        try Data(PDFFixtures.make(pages: ["late"])).write(to: URL(fileURLWithPath: staging.appending("3.pdf").string))
        try FileManager.default.moveItem(
            atPath: staging.appending("3.pdf").string,
            toPath: harness.inbox.appending("scans/3.pdf").string
        )
        let daemon = try #require(harness.daemon)
        let report = try await daemon.waitForLog("A file arrived in a group already taken", "3.pdf")
        print("late file: \(report[0])")
        #expect(report[0].contains("job.id=\(sidecar.jobID)"), "\(report[0])")

        // The sentinel after it: a job for the late file would have been queued before the sentinel's.
        let after = try await harness.waitForSidecars(1)
        #expect(after.count == 1, "\(after.keys)")
        #expect(Self.outputs(of: harness) == ["scans.pdf"])
        #expect(try Self.pageCount(harness.outbox.appending("scans.pdf")) == 6)
        #expect(daemon.logLines(containing: "Job completed", "inbox/scans").count == 1)
    }

    @Test func aFoldersDoneMarkerHoldsTheGroupBack() async throws {
        let harness = try Self.harness(watchOptions: "    doneSuffix: .done")
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        try Self.copyIn(try Self.stage("scans", in: harness), to: harness)

        let waiting = try await daemon.waitForLog("Group waiting for a marker", "scans.done")
        print("before the marker: \(waiting[0])")
        #expect(Self.outputs(of: harness).isEmpty)
        #expect(daemon.logLines(containing: "Job started").isEmpty)

        #expect(FileManager.default.createFile(atPath: harness.inbox.appending("scans.done").string, contents: Data()))
        let sidecarPath = harness.outbox.appending("scans.pdf.chute.json")
        let sidecar = try await waitUntil("the group's sidecar", timeout: 60) {
            try? JSONDecoder().decode(Sidecar.self, from: Data(contentsOf: URL(fileURLWithPath: sidecarPath.string)))
        }
        try Self.checkMerged("scans", sidecar: sidecar, in: harness)
        #expect(Self.outputs(of: harness) == ["scans.pdf"])
    }

    @Test func aDamagedFileFailsItsGroupByName() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        let folder = try Self.stage("mixed", in: harness)
        // Whole by its structure (a header and an end marker), but no PDF qpdf can read.
        try Data("%PDF-1.4\nnot a single object here\n%%EOF\n".utf8)
            .write(to: URL(fileURLWithPath: folder.appending("5.pdf").string))
        try Self.copyIn(folder, to: harness)

        let sidecar = try #require(try await harness.waitForSidecars(1)["mixed.pdf.chute.json"])
        #expect(sidecar.status == .failed)
        let message = sidecar.error?.message ?? ""
        print("group failure: \(sidecar.error?.code ?? "") \(message)")
        #expect(message.contains("5.pdf (file 3 of 4 of the group)"), "\(message)")
        #expect(sidecar.inputs?.count == 4)
        #expect(Self.outputs(of: harness).isEmpty)
    }

    @Test func killsMidGroupLeaveExactlyOneOutputAfterRestart() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        // 1. Killed right after the merged PDF is renamed into place, before its sidecar and journal row.
        try await harness.start(environment: ["CHUTE_TEST_KILL_AFTER_RENAME": "1"])
        try Self.copyIn(try Self.stage("first", in: harness), to: harness)
        let killed = try await #require(harness.daemon).waitForExit(timeout: 60)
        #expect(killed.signalled, "the crash point killed the daemon")
        #expect(Self.outputs(of: harness) == ["first.pdf"])

        // 2. Killed from outside as the next group's job starts.
        try await harness.start()
        let daemon = try #require(harness.daemon)
        try Self.copyIn(try Self.stage("second", in: harness), to: harness)
        _ = try await daemon.waitForLog("Job started", "inbox/second")
        daemon.send(SIGKILL)
        _ = try await daemon.waitForExit(timeout: 30)

        // 3. A restart completes the first from the journal and finishes the second, once each.
        try await harness.start()
        let sidecars = try await harness.waitForSidecars(2, timeout: 120)
        for name in ["first", "second"] {
            let sidecar = try #require(sidecars["\(name).pdf.chute.json"], "\(sidecars.keys)")
            try Self.checkMerged(name, sidecar: sidecar, in: harness)
        }
        let outputs = Self.outputs(of: harness)
        print("kill test: outputs \(outputs)")
        #expect(outputs == ["first.pdf", "second.pdf"])
        #expect(harness.temporaryFiles().isEmpty, "\(harness.temporaryFiles())")
    }
}
