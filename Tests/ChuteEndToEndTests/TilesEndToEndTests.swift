import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// `tiles: 3x3` on the real daemon: one input, nine outputs that put together give the input back, committed all or
/// none, listed in one sidecar, and exactly once across a kill -9 at any point of the job.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct TilesEndToEndTests {
    /// The tile names of `photo.png` cut 3x3, row by row.
    private static let tileNames = (1...3).flatMap { row in (1...3).map { column in "photo-r\(row)c\(column).png" } }

    /// A daemon whose rule cuts PNGs into 3 columns × 3 rows, with the harness's sentinels taken by a plain rule.
    private static func harness() throws -> DaemonHarness {
        try DaemonHarness(
            rules: """
                  - name: sentinels
                    match: "zz-sentinel-*.png"
                    to: jpg
                    output: ./outbox
                  - name: puzzle
                    match: "*.png"
                    to: png
                    tiles: 3x3
                    output: ./outbox
                """
        )
    }

    /// Makes `photo.png` (`width` × `height`) in a staging folder, keeps a copy as `original.png`, and moves it in.
    private static func dropPhoto(into harness: DaemonHarness, width: Int, height: Int) throws -> FilePath {
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("photo.png"), width: width, height: height)
        let original = harness.directory.appending("original.png")
        try FileManager.default.copyItem(atPath: staging.appending("photo.png").string, toPath: original.string)
        try harness.moveIn(["photo.png"], from: staging)
        return original
    }

    /// The outputs of the puzzle rule in the outbox (sentinels and sidecars left out).
    private static func tiles(in harness: DaemonHarness) -> [String] {
        harness.directory.files(below: "outbox").filter { $0.hasSuffix(".png") && !$0.contains("zz-sentinel") }
            .sorted()
    }

    /// Puts the nine tiles together again, row by row (`convert … +append` per row, then `-append`), and returns the
    /// root-mean-square difference from `original` that `compare -metric RMSE` prints (0 for identical pixels).
    private static func reassembledDifference(_ harness: DaemonHarness, original: FilePath) throws -> String {
        var arguments = [Fixtures.convert]
        for row in 0..<3 {
            arguments += ["("] + Self.tileNames[(row * 3)..<(row * 3 + 3)].map { harness.outbox.appending($0).string }
            arguments += ["+append", ")"]
        }
        let joined = harness.directory.appending("joined.png")
        try CommandLineTool.run(arguments + ["-append", joined.string])
        // compare exits 1 when the images differ, which the caller judges from the metric.
        let result = try CommandLineTool.run(
            ["compare-im6.q16", "-metric", "RMSE", original.string, joined.string, "null:"],
            check: false
        )
        return result.standardError.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The sidecar of the set, as JSON, and the paths its `outputs` list.
    private static func setSidecar(_ harness: DaemonHarness) throws -> (json: [String: Any], outputs: [String]) {
        let path = harness.outbox.appending("photo.png.chute.json")
        let data = try #require(FileManager.default.contents(atPath: path.string), "no sidecar photo.png.chute.json")
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let outputs = (json["outputs"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        return (json, outputs)
    }

    /// Checks the finished set: nine tiles of the expected sizes, whose reassembly is the original, one sidecar that
    /// lists them in order with `output` the first, and no temporary file anywhere.
    private static func expectWholeSet(_ harness: DaemonHarness, original: FilePath) throws {
        let tiles = Self.tiles(in: harness)
        #expect(tiles == Self.tileNames.sorted(), "\(tiles)")
        guard tiles == Self.tileNames.sorted() else { return }
        // 301 = 100 + 100 + 101 columns, 200 = 66 + 67 + 67 rows: the remainder goes to the later tiles.
        let (widths, heights) = ([100, 100, 101], [66, 67, 67])
        for (index, name) in Self.tileNames.enumerated() {
            let info = try Fixtures.identify(harness.outbox.appending(name))
            #expect(
                info.format == "PNG" && info.width == widths[index % 3] && info.height == heights[index / 3],
                "\(name)"
            )
        }
        let difference = try Self.reassembledDifference(harness, original: original)
        #expect(difference == "0 (0)", "the tiles put together differ from the source: \(difference)")

        let (json, outputs) = try Self.setSidecar(harness)
        #expect(json["status"] as? String == "completed")
        #expect(outputs == Self.tileNames.map { harness.outbox.appending($0).string })
        #expect(
            (json["output"] as? [String: Any])?["path"] as? String == harness.outbox.appending(Self.tileNames[0]).string
        )
        let sidecars = harness.sidecars().keys.filter { !$0.contains("zz-sentinel") }
        #expect(sidecars == ["photo.png.chute.json"], "one sidecar for the set: \(sidecars)")
        #expect(harness.temporaryFiles().isEmpty, "\(harness.temporaryFiles())")
    }

    @Test func tiles3x3GiveNineOutputsInOneSidecar() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        let original = try Self.dropPhoto(into: harness, width: 301, height: 200)

        try await harness.waitForSidecars(1)

        try Self.expectWholeSet(harness, original: original)
        #expect(FileManager.default.fileExists(atPath: harness.inbox.appending("photo.png").string), "source kept")
    }

    @Test func aTakenNameMovesTheWholeSetToTheNextFreeName() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        // One tile's name is taken before the job: the rule's default onConflict, rename, applies to the set.
        try FileManager.default.createDirectory(atPath: harness.outbox.string, withIntermediateDirectories: true)
        try "not a tile".write(
            toFile: harness.outbox.appending("photo-r2c2.png").string,
            atomically: true,
            encoding: .utf8
        )
        try await harness.start()
        _ = try Self.dropPhoto(into: harness, width: 301, height: 200)

        try await harness.waitForSidecars(1)

        let tiles = Self.tiles(in: harness)
        #expect(
            tiles
                == (["photo-r2c2.png"] + Self.tileNames.map { $0.replacingOccurrences(of: "photo-", with: "photo-1-") })
                .sorted(),
            "\(tiles)"
        )
        let sidecar = harness.sidecars()["photo-1.png.chute.json"]
        #expect(sidecar?.outputs?.count == 9)
        #expect(sidecar?.output?.path == harness.outbox.appending("photo-1-r1c1.png").string)
        #expect(
            try String(contentsOfFile: harness.outbox.appending("photo-r2c2.png").string, encoding: .utf8)
                == "not a tile"
        )
    }

    @Test func aKillInTheMiddleOfTheSetsRenamesLeavesNoPartialSet() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        // The daemon kills itself right after the 4th tile is renamed into place: 4 of 9 are visible.
        try await harness.start(environment: ["CHUTE_TEST_KILL_AFTER_PART_RENAME": "4"])
        let original = try Self.dropPhoto(into: harness, width: 301, height: 200)
        let exit = try await #require(harness.daemon).waitForExit(timeout: 60)
        #expect(exit.signalled, "the crash point killed the daemon")
        let partial = Self.tiles(in: harness)
        print("tiles after the kill: \(partial.count) of 9 (\(partial.joined(separator: ", ")))")
        #expect(partial.count == 4, "the kill hit the middle of the set: \(partial)")

        try await harness.start()
        let daemon = try #require(harness.daemon)
        let opened = try #require(daemon.logLines(containing: "Journal opened").first)
        #expect(opened.contains("withdrawn=1"), "\(opened)")
        try await harness.waitForSidecars(1)

        try Self.expectWholeSet(harness, original: original)
    }

    @Test func aKillAfterTheWholeSetIsRenamedCompletesItAtRestart() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        // Right after the set is in place, before its sidecar and journal row: recovery finds all nine by inode.
        try await harness.start(environment: ["CHUTE_TEST_KILL_AFTER_RENAME": "1"])
        let original = try Self.dropPhoto(into: harness, width: 301, height: 200)
        let exit = try await #require(harness.daemon).waitForExit(timeout: 60)
        #expect(exit.signalled, "the crash point killed the daemon")
        #expect(Self.tiles(in: harness).count == 9)

        try await harness.start()
        let daemon = try #require(harness.daemon)
        let opened = try #require(daemon.logLines(containing: "Journal opened").first)
        #expect(opened.contains("completed=1"), "\(opened)")
        try await harness.waitForSidecars(1)

        try Self.expectWholeSet(harness, original: original)
    }

    @Test func aKillWhileTheWorkerCutsTheTilesLeavesNoPartialSet() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        // Large enough that the worker takes a while over each tile: the kill comes once it has written the first
        // under its temporary name, with the rest still to come.
        let original = try Self.dropPhoto(into: harness, width: 3000, height: 2000)
        try await waitUntil("the first tile under its temporary name", timeout: 120) {
            harness.temporaryFiles().contains { $0.hasSuffix(".partial-r1c1") } ? true : nil
        }
        daemon.send(SIGKILL)
        _ = try await daemon.waitForExit(timeout: 30)
        print(
            "after the kill: tiles in place \(Self.tiles(in: harness).count) of 9, "
                + "temporary tiles \(harness.temporaryFiles().count)"
        )
        #expect(Self.tiles(in: harness).isEmpty, "nothing is renamed before every tile is written")

        try await harness.start()
        try await harness.waitForSidecars(1, timeout: 180)

        let tiles = Self.tiles(in: harness)
        #expect(tiles == Self.tileNames.sorted(), "\(tiles)")
        let difference = try Self.reassembledDifference(harness, original: original)
        #expect(difference == "0 (0)", "the tiles put together differ from the source: \(difference)")
        #expect(try Self.setSidecar(harness).outputs.count == 9)
        #expect(harness.temporaryFiles().isEmpty, "\(harness.temporaryFiles())")
    }
}
