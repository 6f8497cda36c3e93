import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Writers that append a file in chunks, opening and closing it each time and pausing for longer than the quiet
/// period in between: the structure of the file, not the quiet period, must hold it back until it is whole. With
/// quarantine on, a part taken too early would fail and be moved away, and the next chunk would start a new file.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct ChunkedWriterEndToEndTests {
    @Test func aTIFFAppendedInFourChunksIsTakenOnceWhole() async throws {
        let harness = try Self.harness(matching: "*.tiff", to: "jpg")
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        let source = staging.appending("scan.tiff")
        // Uncompressed 8-bit RGB, 9 MB: the strips come first, the IFD that points at them last.
        try Fixtures.makeImage(at: source, width: 2000, height: 1500, extraArguments: ["-depth", "8"])

        let size = try await Self.appendInChunks(source, to: harness.inbox.appending("chunked.tiff"))

        try await Self.expectOneWholeJob(harness, source: "chunked.tiff", output: "chunked.jpg", size: size)
        let output = try Fixtures.identify(harness.outbox.appending("chunked.jpg"))
        #expect(output.width == 2000 && output.height == 1500)
    }

    @Test func aTIFFAppendedInFourChunksUnderSourceMoveIsMovedOnceWhole() async throws {
        let harness = try Self.harness(matching: "*.tiff", to: "jpg", policy: "source: move\n    doneFolder: ./done")
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        let source = staging.appending("scan.tiff")
        try Fixtures.makeImage(at: source, width: 2000, height: 1500, extraArguments: ["-depth", "8"])

        let size = try await Self.appendInChunks(source, to: harness.inbox.appending("chunked.tiff"))

        let daemon = try #require(harness.daemon)
        let sidecars = try await harness.waitForSidecars(1, timeout: 120)
        #expect(Array(sidecars.keys) == ["chunked.jpg.chute.json"])
        #expect(sidecars["chunked.jpg.chute.json"]?.status == .completed)
        #expect(
            daemon.logLines(containing: "Job queued", "chunked.tiff").count == 1,
            "\(daemon.logLines(containing: "chunked.tiff").joined(separator: "\n"))"
        )
        #expect(daemon.logLines(containing: "Job failed").isEmpty)
        // The whole source, and only it, was moved to the done folder once its output was verified.
        let moved = harness.directory.appending("done/chunked.tiff")
        try await waitUntil("the source in the done folder") {
            FileManager.default.fileExists(atPath: moved.string) ? true : nil
        }
        #expect(harness.directory.files(below: "done") == ["chunked.tiff"])
        let attributes = try FileManager.default.attributesOfItem(atPath: moved.string)
        #expect((attributes[.size] as? NSNumber)?.int64Value == size)
        #expect(harness.directory.files(below: "inbox").filter { !$0.contains("zz-sentinel-") }.isEmpty)
        let output = try Fixtures.identify(harness.outbox.appending("chunked.jpg"))
        #expect(output.width == 2000 && output.height == 1500)
    }

    @Test func aFLACAppendedInFourChunksIsTakenOnceWhole() async throws {
        let harness = try Self.harness(matching: "*.flac", to: "mp3")
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        let source = staging.appending("song.flac")
        try MediaFixtures.makeClip(at: source, width: nil, seconds: 30, codecArguments: ["-c:a", "flac"])

        let size = try await Self.appendInChunks(source, to: harness.inbox.appending("chunked.flac"))

        try await Self.expectOneWholeJob(harness, source: "chunked.flac", output: "chunked.mp3", size: size)
        let duration = try #require(try MediaFixtures.probe(harness.outbox.appending("chunked.mp3")).duration)
        #expect(abs(duration - 30) < 0.5)
    }

    @Test func anOggVorbisFileAppendedInFourChunksIsTakenOnceWhole() async throws {
        let harness = try Self.harness(matching: "*.ogg", to: "mp3")
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        let source = staging.appending("song.ogg")
        try MediaFixtures.makeClip(at: source, width: nil, seconds: 60, codecArguments: ["-c:a", "libvorbis"])

        let size = try await Self.appendInChunks(source, to: harness.inbox.appending("chunked.ogg"))

        try await Self.expectOneWholeJob(harness, source: "chunked.ogg", output: "chunked.mp3", size: size)
        let duration = try #require(try MediaFixtures.probe(harness.outbox.appending("chunked.mp3")).duration)
        #expect(abs(duration - 60) < 0.5)
    }

    /// Appends `source` to `target` in four chunks with `dd oflag=append conv=notrunc`, each a separate
    /// open-append-close, pausing 750 ms (2.5 quiet periods) between chunks. The pauses are the writer's behaviour
    /// under test, not a way to wait for the daemon.
    ///
    /// - Returns: the size of the whole file.
    private static func appendInChunks(_ source: FilePath, to target: FilePath) async throws -> Int64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: source.string)
        let size = try #require((attributes[.size] as? NSNumber)?.int64Value)
        let chunk = size / 4 + 1
        for index in 0..<4 {
            try CommandLineTool.run([
                "dd", "if=\(source.string)", "of=\(target.string)", "bs=\(chunk)", "skip=\(index)", "count=1",
                "oflag=append", "conv=notrunc", "status=none",
            ])
            if index < 3 { try await Task.sleep(for: .milliseconds(750)) }
        }
        return size
    }

    /// Expects one completed job on the whole source, its output, nothing failed and nothing in quarantine.
    private static func expectOneWholeJob(
        _ harness: DaemonHarness,
        source: String,
        output: String,
        size: Int64
    ) async throws {
        let daemon = try #require(harness.daemon)
        let sidecars = try await harness.waitForSidecars(1, timeout: 120)
        #expect(Array(sidecars.keys) == ["\(output).chute.json"])
        let sidecar = try #require(sidecars["\(output).chute.json"])
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        #expect(sidecar.source.size == size)
        #expect(
            daemon.logLines(containing: "Job queued", source).count == 1,
            "\(daemon.logLines(containing: source).joined(separator: "\n"))"
        )
        #expect(daemon.logLines(containing: "Job failed").isEmpty)
        #expect(harness.directory.files(below: "quarantine").isEmpty)
        #expect(harness.directory.files(below: "inbox").filter { !$0.contains("zz-sentinel-") } == [source])
        // The quiet periods between chunks did end; the structure held the file back.
        #expect(!daemon.logLines(containing: "Waiting until the file is ready", source, "incomplete").isEmpty)
    }

    /// A harness whose rule converts `pattern` to `format` with quarantine on and the source `policy` (rule keys,
    /// the lines after the first indented by four spaces), plus the rule for the sentinel PNGs of
    /// ``DaemonHarness/waitForSidecars(_:timeout:)``.
    private static func harness(
        matching pattern: String,
        to format: String,
        policy: String = "source: keep"
    ) throws -> DaemonHarness {
        try DaemonHarness(
            rules: """
                  - name: files
                    match: "\(pattern)"
                    to: \(format)
                    output: ./outbox
                    quarantine: ./quarantine
                    \(policy)
                  - name: sentinels
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                """
        )
    }
}
