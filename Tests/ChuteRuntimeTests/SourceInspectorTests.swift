import CChuteLinux
import ChuteCore
import ChuteRuntime
import ChuteTestSupport
import Foundation
import Glibc
import SystemPackage
import Testing

/// The source inspector never blocks on what an uploader put in place of a file.
@Suite(.timeLimit(.minutes(1)))
struct SourceInspectorTests {
    /// The job runner hashes a source right after its `lstat` found a regular file; a FIFO swapped in between must
    /// not hold the hashing thread (and with it the job and its lane) until someone writes to it.
    @Test func hashingAFIFORefusesItWithoutBlocking() async throws {
        let directory = try TemporaryDirectory(prefix: "inspector")
        defer { directory.remove() }
        let fifo = directory.appending("photo.jpg")
        guard mkfifo(fifo.string, 0o644) == 0 else { throw Errno(rawValue: errno) }

        let (blocked, hash) = try await onOwnThread {
            let done = DispatchSemaphore(value: 0)
            let result = ResultBox()
            let thread = Thread {
                result.set(try? SourceInspector.sha256(of: fifo))
                done.signal()
            }
            thread.start()
            guard done.wait(timeout: .now() + 10) == .timedOut else { return (false, result.get()) }
            // Blocked in open(2): connecting a writer frees it, so the thread ends with the test.
            let writer = open(fifo.string, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            done.wait()
            return (true, result.get())
        }

        #expect(!blocked, "sha256(of:) blocked in open(2) on a FIFO")
        #expect(hash == nil, "a FIFO was hashed as if it were a file")
    }

    @Test func anEmptyFileIsNotReadyAndOnlyAStructureThatEndsIsWhole() throws {
        let directory = try TemporaryDirectory(prefix: "inspector")
        defer { directory.remove() }
        let empty = directory.appending("upload.png")
        #expect(FileManager.default.createFile(atPath: empty.string, contents: nil))
        #expect(SourceInspector.notReady(empty, type: nil) == "it is empty")
        #expect(!SourceInspector.isWhole(empty, type: .png))

        let png = directory.appending("photo.png")
        try Fixtures.makeImage(at: png, width: 64, height: 48)
        #expect(SourceInspector.notReady(png, type: .png) == nil)
        #expect(SourceInspector.isWhole(png, type: .png))
        let part = directory.appending("part.png")
        try Fixtures.truncatedCopy(of: png, to: part, keeping: 0.5)
        #expect(!SourceInspector.isWhole(part, type: .png))
        // Bytes of no known type have no structural end to look for: never whole.
        let noise = directory.appending("noise.bin")
        try Fixtures.makeRandomFile(at: noise, bytes: 4096)
        #expect(!SourceInspector.isWhole(noise, type: SourceInspector.sniff(noise)))
    }

    /// A rename sets a file's change time, so a file moved back where it was has a new fingerprint.
    @Test func aFileMovedAwayAndBackHasANewFingerprint() throws {
        let directory = try TemporaryDirectory(prefix: "inspector")
        defer { directory.remove() }
        let file = directory.appending("noise.png")
        try Fixtures.makeRandomFile(at: file, bytes: 64)
        let before = try SourceInspector.status(of: file).fingerprint
        let away = directory.appending("away.png")
        try FileManager.default.moveItem(atPath: file.string, toPath: away.string)
        try FileManager.default.moveItem(atPath: away.string, toPath: file.string)
        let after = try SourceInspector.status(of: file).fingerprint
        #expect(after.inode == before.inode && after.size == before.size)
        #expect(after.modifiedNanoseconds == before.modifiedNanoseconds)
        #expect(after != before)
    }
}

/// The hash a thread produced, handed to the thread that waited for it.
private final class ResultBox: @unchecked Sendable {
    // Written once by the hashing thread before it signals, read only after the signal.
    private var value: String?

    func set(_ value: String?) { self.value = value }
    func get() -> String? { self.value }
}

/// Sources are looked up beneath their watched folder, never through a symbolic link on the way.
@Suite struct BeneathRootTests {
    @Test func aLinkAnywhereOnThePathIsRefusedAndAFinalOneDescribedItself() throws {
        let (directory, root, outside) = try Self.makeTree()
        defer { directory.remove() }
        #expect(symlink(outside.appending("a.jpg").string, root.appending("link.jpg").string) == 0)

        let inside = try SourceInspector.status(of: root.appending("real/a.jpg"), beneath: root)
        #expect(inside.isRegularFile && inside.fingerprint.size == 6)
        #expect(throws: Errno.tooManySymbolicLinkLevels) {
            try SourceInspector.status(of: root.appending("swapped/a.jpg"), beneath: root)
        }
        #expect(try !SourceInspector.status(of: root.appending("link.jpg"), beneath: root).isRegularFile)
        #expect(SourceInspector.sniff(root.appending("swapped/a.jpg"), beneath: root) == nil)
        #expect(throws: (any Error).self) { try SourceInspector.sha256(of: root.appending("link.jpg"), beneath: root) }
    }

    /// A watched folder `inbox` with `real/a.jpg`, a folder `outside` with its own `a.jpg`, and `inbox/swapped`, a
    /// link to `outside`.
    private static func makeTree() throws -> (TemporaryDirectory, root: FilePath, outside: FilePath) {
        let directory = try TemporaryDirectory(prefix: "beneath")
        let root = try directory.makeDirectory("inbox")
        let outside = try directory.makeDirectory("outside")
        try Data("outside".utf8).write(to: URL(fileURLWithPath: outside.appending("a.jpg").string))
        _ = try directory.makeDirectory("inbox/real")
        try Data("inside".utf8).write(to: URL(fileURLWithPath: root.appending("real/a.jpg").string))
        guard symlink(outside.string, root.appending("swapped").string) == 0 else { throw Errno(rawValue: errno) }
        return (directory, root, outside)
    }

    /// The lookup for kernels without `openat2`, tried directly since this kernel has it.
    @Test func theComponentByComponentLookupRefusesLinksAndParents() throws {
        let (directory, root, _) = try Self.makeTree()
        defer { directory.remove() }
        let rootDescriptor = open(root.string, O_RDONLY | O_DIRECTORY)
        defer { close(rootDescriptor) }
        func attempt(_ relative: String) -> Int32 {
            let descriptor = chute_open_beneath_by_component(rootDescriptor, relative, O_RDONLY)
            defer { if descriptor >= 0 { close(descriptor) } }
            return descriptor >= 0 ? 0 : errno
        }
        #expect(attempt("real/a.jpg") == 0)
        // A folder component that is a link is not a folder to O_NOFOLLOW.
        #expect(attempt("swapped/a.jpg") == ENOTDIR)
        #expect(attempt("real/../../outside/a.jpg") == EXDEV)
        #expect(attempt("real//a.jpg") == 0)
    }
}
