import Foundation
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// A new file that readers must see whole or not at all: created exclusively under a temporary name in the folder
/// where it ends up, written, synced, then kept under that name for the supervisor to rename into place (an engine's
/// output), or renamed into place here (a sidecar); dropped unfinished, it is closed and removed.
///
/// The name is created with `O_CREAT | O_EXCL | O_NOFOLLOW`, so an existing file, or a symbolic link planted at the
/// name, is never written through. A `TemporaryFile` dropped before ``keep()`` or ``rename(to:beforeRename:)``
/// finished, because a later step threw, closes and unlinks its file in `deinit`, which no cancellation can skip
/// (swift-nio: `OpenOptions.swift`, `transactionalCreation`).
///
/// - Important: not `Sendable`: create, write and finish it on one thread (a worker's engine, or one blocking closure
///   of the supervisor).
package struct TemporaryFile: ~Copyable {
    /// The open descriptor, for writing and, when created readable, reading back; closed when the file is finished or
    /// dropped.
    package let descriptor: FileDescriptor
    /// The file's temporary path.
    package let path: FilePath
    /// Set once the descriptor is closed and the file kept or renamed; `deinit` then leaves the file alone.
    private var isFinished = false

    /// Creates the file at `path`, which must not exist, with mode 0644 (less the umask). The corresponding C
    /// function is `open` with `O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC`.
    ///
    /// - Parameters:
    ///   - path: the temporary path, in the folder the file ends up in, so that its rename stays on one file system.
    ///   - readable: whether the file is also read through ``descriptor`` (FFmpeg reads its output back).
    /// - Throws: ``SystemCallError`` from `open`, with `EEXIST` when the name is taken.
    package init(creatingAt path: FilePath, readable: Bool = false) throws(SystemCallError) {
        self.descriptor = try Self.calling("open") {
            try FileDescriptor.open(
                path,
                readable ? .readWrite : .writeOnly,
                options: [.create, .exclusiveCreate, .noFollow, .closeOnExec],
                permissions: [.ownerReadWrite, .groupRead, .otherRead]
            )
        }
        self.path = path
    }

    deinit {
        guard !self.isFinished else { return }
        try? self.descriptor.close()
        SystemCall.unlink(self.path)
    }

    /// Appends `bytes`, however many `write` calls that takes. The corresponding C function is `write`.
    ///
    /// - Throws: ``SystemCallError`` from `write` (`ENOSPC`, `EDQUOT`, `EFBIG` past the worker's `RLIMIT_FSIZE`).
    package func write(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
        try Self.calling("write") { _ = try self.descriptor.writeAll(bytes) }
    }

    /// Flushes the file's data to storage, leaving it open. The corresponding C function is `fsync`.
    ///
    /// - Throws: ``SystemCallError`` from `fsync`.
    package func sync() throws(SystemCallError) {
        try SystemCall.check("fsync") { fsync(self.descriptor.rawValue) }
    }

    /// Syncs and closes the file and leaves it under its temporary name, for the supervisor to rename into place
    /// (``OutputCommitter``). The corresponding C functions are `fsync` and `close`.
    ///
    /// - Throws: ``SystemCallError`` from `fsync` or `close`, after removing the file.
    package consuming func keep() throws(SystemCallError) {
        // Leaving through a throw runs deinit, which closes and unlinks.
        try self.sync()
        // `discard self` would end the file's life here, but Swift only allows it for types whose stored properties
        // are all trivial, and FilePath is not; the flag does the same job.
        self.isFinished = true
        // After fsync a close error cannot mean lost data, but it is reported all the same rather than keep a file
        // whose state is unknown. close is not retried on EINTR: Linux has already released the descriptor.
        do {
            try self.descriptor.close()
        } catch {
            SystemCall.unlink(self.path)
            throw SystemCallError("close", cause: error as? Errno ?? .ioError)
        }
    }

    /// Syncs and closes the file, then renames it to `target`, replacing what is there, so that a reader sees the old
    /// file or the whole new one. The corresponding C functions are `fsync`, `close` and `rename`.
    ///
    /// - Parameters:
    ///   - target: the final path, in the same folder.
    ///   - beforeRename: called with the synced temporary path just before the rename (to set its owner).
    /// - Throws: ``SystemCallError`` from `fsync`, `close` or `rename`, after removing the temporary file.
    package consuming func rename(
        to target: FilePath,
        beforeRename: (FilePath) -> Void = { _ in }
    ) throws(SystemCallError) {
        let temporary = self.path
        try self.keep()
        beforeRename(temporary)
        do throws(SystemCallError) {
            try SystemCall.check("rename") { SystemCall.rename(temporary, target) }
        } catch {
            SystemCall.unlink(temporary)
            throw error
        }
    }

    /// Runs a swift-system call, which retries `EINTR` itself and throws `Errno`, as the C function `call`.
    private static func calling<Value>(_ call: String, _ body: () throws -> Value) throws(SystemCallError) -> Value {
        do {
            return try body()
        } catch {
            throw SystemCallError(call, cause: error as? Errno ?? .ioError)
        }
    }
}
