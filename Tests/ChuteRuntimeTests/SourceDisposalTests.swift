import ChuteCatalog
import ChuteCore
import ChuteRuntime
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// A source moved after its job to a folder on another file system (`/dev/shm`, a tmpfs), where a rename cannot
/// take it: it is copied under a hidden name, synced, renamed into place, and only then removed.
@Suite struct SourceDisposalTests {
    @Test func aMoveAcrossFileSystemsCopiesTheSourceWholeAndRemovesTheOriginal() throws {
        let directory = try TemporaryDirectory(prefix: "disposal")
        defer { directory.remove() }
        var template = Array("/dev/shm/chute-test-done-XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        let done = FilePath(String(cString: try #require(created)))
        defer { try? FileManager.default.removeItem(atPath: done.string) }
        let source = try directory.makeDirectory("in/holiday").appending("photo.png")
        let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0) })
        try bytes.write(to: URL(fileURLWithPath: source.string))
        let output = directory.appending("photo.jpg")
        try Data("output".utf8).write(to: URL(fileURLWithPath: output.string))
        let rule = Rule(
            name: "photos",
            match: [try GlobPattern("*.png")],
            to: try #require(Engines.registry.format(named: "jpg")),
            output: directory.path,
            sourcePolicy: .move(to: done)
        )
        let job = Job(
            source: source,
            root: directory.appending("in"),
            rule: rule,
            plan: OutputPlan(directory: directory.path, name: "photo.jpg"),
            fingerprint: try SourceInspector.status(of: source).fingerprint,
            sniffed: .png
        )

        let moved = try SourceDisposal.afterSuccess(job, output: output, marker: nil)

        #expect(moved == done.appending("holiday/photo.png"))
        #expect(try SystemCall.contents(of: done.appending("holiday/photo.png")) == bytes)
        #expect(try SystemCall.entries(of: done.appending("holiday")).map(\.string) == ["photo.png"])
        #expect(SystemCall.access(source, F_OK) != 0)
    }
}
