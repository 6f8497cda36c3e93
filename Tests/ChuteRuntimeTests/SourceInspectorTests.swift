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
}

/// The hash a thread produced, handed to the thread that waited for it.
private final class ResultBox: @unchecked Sendable {
    // Written once by the hashing thread before it signals, read only after the signal.
    private var value: String?

    func set(_ value: String?) { self.value = value }
    func get() -> String? { self.value }
}
