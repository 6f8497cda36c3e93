import ChuteCore
import Foundation
import Glibc
import SystemPackage

/// The lock that keeps a second daemon off a journal: an exclusive `flock` on a file beside the database
/// (`journal.sqlite.lock`), which holds the process id of the daemon that has it.
///
/// Two daemons on one journal would both watch the same folders and convert every file twice. The lock is taken
/// before the journal is opened and lasts as long as the process (the kernel drops it at exit, however the process
/// ends), so a killed daemon never leaves a stale lock. It is a separate file because SQLite uses POSIX record locks
/// on the database, which closing any descriptor of that file would drop.
///
/// - Important: Keep the value alive for as long as the daemon runs; its `deinit` closes the descriptor, which
///   releases the lock. The descriptor is close-on-exec, so workers never inherit it.
package final class JournalLock: Sendable {
    /// The lock file.
    package let path: FilePath
    private let descriptor: FileDescriptor

    /// Takes the lock of the journal at `journal`, creating its folder and lock file if needed, and writes this
    /// process's id into the lock file.
    ///
    /// The corresponding C function is `flock`, with `LOCK_EX | LOCK_NB`.
    ///
    /// - Throws: ``JournalLockError``: `.held` with the holder's process id when another process has the lock,
    ///   `.unavailable` when the lock file cannot be created or locked.
    package init(journal: FilePath) throws(JournalLockError) {
        let path = FilePath(journal.string + ".lock")
        let descriptor: FileDescriptor
        do {
            try FileManager.default.createDirectory(
                atPath: journal.removingLastComponent().string,
                withIntermediateDirectories: true
            )
            descriptor = try FileDescriptor.open(
                path,
                .readWrite,
                options: [.create, .closeOnExec, .noFollow],
                permissions: [.ownerReadWrite, .groupRead, .otherRead],
                retryOnInterrupt: true
            )
        } catch {
            throw .unavailable(path: path, cause: "\(error)")
        }
        do throws(SystemCallError) {
            try SystemCall.check("flock") { flock(descriptor.rawValue, LOCK_EX | LOCK_NB) }
        } catch {
            let holder = Self.holder(in: descriptor)
            try? descriptor.close()
            if error.cause == .wouldBlock { throw .held(path: path, journal: journal, pid: holder) }
            throw .unavailable(path: path, cause: "\(error)")
        }
        // Locked: the process id is ours to write. Truncated first, so that a shorter id leaves no digits behind.
        let pid = Array("\(getpid())\n".utf8)
        let written = (try? descriptor.resize(to: 0)).flatMap { try? descriptor.writeAll(toAbsoluteOffset: 0, pid) }
        guard written == pid.count else {
            try? descriptor.close()
            throw .unavailable(path: path, cause: "cannot write the process id")
        }
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        try? self.descriptor.close()
    }

    /// The process id written in a lock file, or `nil` when it holds none (the holder has not written it yet).
    private static func holder(in descriptor: FileDescriptor) -> Int32? {
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = (try? bytes.withUnsafeMutableBytes { try descriptor.read(fromAbsoluteOffset: 0, into: $0) }) ?? 0
        return Int32(
            String(decoding: bytes.prefix(count), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        )
    }
}

/// The journal's lock cannot be taken.
package enum JournalLockError: Error, CustomStringConvertible {
    /// Another process holds it: another daemon runs on the same journal.
    case held(path: FilePath, journal: FilePath, pid: Int32?)
    /// The lock file cannot be created, written or locked.
    case unavailable(path: FilePath, cause: String)

    package var description: String {
        switch self {
        case .held(_, let journal, let pid):
            let holder = pid.map { "pid \($0)" } ?? "a process that has not written its id yet"
            return "another chute (\(holder)) is running on the journal \(journal); stop it first, "
                + "or give this one another journal with chute run --journal FILE"
        case .unavailable(let path, let cause):
            return "cannot lock the journal with \(path): \(cause); give a writable file with chute run --journal FILE"
        }
    }
}
