import ChuteCore
import ChuteRuntime
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

@Suite struct OutputCommitterTests {
    private func write(_ text: String, to path: FilePath) throws {
        try text.write(toFile: path.string, atomically: false, encoding: .utf8)
    }

    private func read(_ path: FilePath) throws -> String {
        try String(contentsOfFile: path.string, encoding: .utf8)
    }

    @Test func aSetMovesWholeToTheNextFreeNameOrNotAtAll() throws {
        let directory = try TemporaryDirectory(prefix: "commit")
        defer { directory.remove() }
        let temporary = directory.appending(".chute-job.partial")
        let parts = ["r1c1", "r1c2", "r2c1"].map { OutputPart(label: $0, bytes: 1) }
        func writeParts() throws {
            for part in parts { try self.write(part.label, to: part.temporaryPath(beside: temporary)) }
        }
        // The third tile's name is taken: the whole set moves to the next name.
        try self.write("old", to: directory.appending("p-r2c1.png"))
        try writeParts()
        let plan = OutputPlan(directory: directory.path, name: "p.png")
        let set = try OutputCommitter.commit(parts, beside: temporary, as: plan, policy: .rename)
        #expect(set.set == directory.appending("p-1.png"))
        #expect(set.paths == ["p-1-r1c1.png", "p-1-r1c2.png", "p-1-r2c1.png"].map { directory.appending($0) })
        #expect(try self.read(directory.appending("p-1-r1c2.png")) == "r1c2")
        #expect(!FileManager.default.fileExists(atPath: directory.appending("p-r1c1.png").string), "put back")

        // With skip, a taken name fails the set, and every part is under its temporary name again.
        try writeParts()
        #expect(throws: ConversionFailure.self) {
            try OutputCommitter.commit(parts, beside: temporary, as: plan, policy: .skip)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.appending("p-r1c1.png").string))
        for part in parts {
            #expect(FileManager.default.fileExists(atPath: part.temporaryPath(beside: temporary).string))
        }
        OutputCommitter.removeTemporaries(of: temporary)
        #expect(directory.files().filter { $0.hasPrefix(".chute-") }.isEmpty)
    }

    @Test func renamePolicyPicksTheNextFreeName() throws {
        let directory = try TemporaryDirectory(prefix: "commit")
        defer { directory.remove() }
        try self.write("old", to: directory.appending("a.jpg"))
        try self.write("older", to: directory.appending("a-1.jpg"))
        try self.write("new", to: directory.appending(".chute-x.partial"))
        let (path, warning) = try OutputCommitter.commit(
            directory.appending(".chute-x.partial"),
            as: OutputPlan(directory: directory.path, name: "a.jpg"),
            policy: .rename
        )
        #expect(path == directory.appending("a-2.jpg"))
        #expect(warning == nil)
        #expect(try self.read(directory.appending("a.jpg")) == "old")
        #expect(try self.read(path) == "new")
        #expect(directory.files() == ["a-1.jpg", "a-2.jpg", "a.jpg"])
    }

    @Test func skipPolicyLeavesTheExistingFile() throws {
        let directory = try TemporaryDirectory(prefix: "commit")
        defer { directory.remove() }
        try self.write("old", to: directory.appending("a.jpg"))
        try self.write("new", to: directory.appending(".chute-x.partial"))
        #expect(throws: ConversionFailure.self) {
            try OutputCommitter.commit(
                directory.appending(".chute-x.partial"),
                as: OutputPlan(directory: directory.path, name: "a.jpg"),
                policy: .skip
            )
        }
        #expect(try self.read(directory.appending("a.jpg")) == "old")
    }

    @Test func overwritePolicyReplacesAndWarns() throws {
        let directory = try TemporaryDirectory(prefix: "commit")
        defer { directory.remove() }
        try self.write("old", to: directory.appending("a.jpg"))
        try self.write("new", to: directory.appending(".chute-x.partial"))
        let (path, warning) = try OutputCommitter.commit(
            directory.appending(".chute-x.partial"),
            as: OutputPlan(directory: directory.path, name: "a.jpg"),
            policy: .overwrite
        )
        #expect(path == directory.appending("a.jpg"))
        #expect(warning?.contains("replaced") == true)
        #expect(try self.read(path) == "new")
    }

    @Test func sidecarsRoundTripAndStaleTemporariesAreRemoved() throws {
        let directory = try TemporaryDirectory(prefix: "commit")
        defer { directory.remove() }
        let sidecar = Sidecar.sample
        let path = OutputCommitter.sidecarPath(for: directory.appending("a.jpg"))
        #expect(path == directory.appending("a.jpg.chute.json"))
        try OutputCommitter.writeSidecar(sidecar, at: path)
        #expect(Sidecar.read(at: path) == sidecar)
        try directory.makeDirectory("sub")
        try self.write("x", to: directory.appending("sub/.chute-dead.partial"))
        let removed = OutputCommitter.removeStaleTemporaries(below: directory.path)
        #expect(removed == [directory.appending("sub/.chute-dead.partial")])
        #expect(directory.files() == ["a.jpg.chute.json"])
    }

    @Test func logTextEscapesControlAndBidiCharacters() {
        #expect(LogText.escaped("a\nb") == "a\\u{a}b")
        #expect(LogText.escaped("x\u{1B}[31m") == "x\\u{1b}[31m")
        #expect(LogText.escaped("\u{202E}gpj.exe") == "\\u{202e}gpj.exe")
        #expect(LogText.escaped(String(repeating: "a", count: 5000)).count == LogText.maximumLength + 1)
    }
}
