import ChuteCore
import Glibc
import SystemPackage

/// Wakes the watch thread from `poll` to make it stop: a connected pair of local sockets, one end written by
/// ``signal()`` and the other polled by the thread.
///
/// The corresponding C function is `socketpair`. An `eventfd` or a `pipe2` would do, but Swift's Glibc module
/// declares neither (both need `_GNU_SOURCE`), and a plain `pipe` cannot set close-on-exec atomically; `socketpair`
/// takes `SOCK_CLOEXEC`, so no worker process spawned meanwhile inherits the descriptors.
///
/// - Important: ``signal()`` may be called from any thread; both ends stay open until the owner is destroyed.
struct StopSignal: ~Copyable, Sendable {
    /// The end the watch thread polls; readable once ``signal()`` was called.
    let readEnd: FileDescriptor
    private let writeEnd: FileDescriptor

    /// Creates the socket pair.
    ///
    /// - Throws: ``WatchError`` with code `createInstance` (`EMFILE`, `ENFILE`).
    init() throws(WatchError) {
        var descriptors: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &descriptors) == 0 else {
            throw .lastError(.createInstance, function: "socketpair")
        }
        self.readEnd = FileDescriptor(rawValue: descriptors[0])
        self.writeEnd = FileDescriptor(rawValue: descriptors[1])
    }

    deinit {
        try? self.readEnd.close()
        try? self.writeEnd.close()
    }

    /// Makes ``readEnd`` readable.
    ///
    /// The corresponding C function is `send`, with `MSG_NOSIGNAL`. The owner calls it at most once, so the socket
    /// buffer cannot be full; with both ends open, nothing but a bug can make it fail.
    func signal() {
        var byte: UInt8 = 1
        do throws(SystemCallError) {
            let sent = try SystemCall.check("send") { send(self.writeEnd.rawValue, &byte, 1, Int32(MSG_NOSIGNAL)) }
            precondition(sent == 1, "send on the watcher's stop socket sent \(sent) bytes")
        } catch {
            preconditionFailure("the watcher's stop socket: \(error)")
        }
    }
}
