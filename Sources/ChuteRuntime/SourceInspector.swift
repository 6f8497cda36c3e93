import CChuteLinux
import ChuteCore
import Crypto
import Foundation
import SystemPackage

/// Looks at a source file without decoding it: its metadata, its first bytes and its SHA-256.
package enum SourceInspector {
    /// What `lstat` says about a path.
    package struct Status: Sendable, Equatable {
        package var fingerprint: SourceFingerprint
        package var isRegularFile: Bool
    }

    /// Reads a path's metadata without following a final symlink.
    ///
    /// The corresponding C function is `lstat`.
    /// - Throws: the `Errno` of `lstat` (`ENOENT` when the file is gone).
    package static func status(of path: FilePath) throws(Errno) -> Status {
        var info = stat()
        let result = path.withPlatformString { lstat($0, &info) }
        guard result == 0 else { throw Errno(rawValue: errno) }
        let fingerprint = SourceFingerprint(
            device: UInt64(info.st_dev),
            inode: UInt64(info.st_ino),
            size: Int64(info.st_size),
            modifiedNanoseconds: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        )
        return Status(fingerprint: fingerprint, isRegularFile: info.st_mode & S_IFMT == S_IFREG)
    }

    /// Recognises a regular file's type from its first 512 bytes.
    ///
    /// The file is opened without following symlinks and without blocking (a FIFO posing as media cannot hang it).
    /// - Returns: the type, or `nil` when the file cannot be read or is not recognised.
    package static func sniff(_ path: FilePath) -> MediaType? {
        guard let (descriptor, _) = Self.openRegularFile(path) else { return nil }
        defer { try? descriptor.close() }
        var header = [UInt8](repeating: 0, count: 512)
        let count = (try? header.withUnsafeMutableBytes { try descriptor.read(into: $0) }) ?? 0
        return MediaType.sniff(header.prefix(count))
    }

    /// Why a file is not ready to be taken yet, or `nil` when it is: a process still has it open for writing (a
    /// writer idle for longer than the quiet period), or its structure is cut short for its type (``Completeness``:
    /// a writer that closes and re-opens between chunks).
    ///
    /// The file is opened once, read-only, without following symlinks and without blocking. Where the kernel cannot
    /// tell about writers (a file of another user for a daemon without CAP_LEASE, a network file system), that check
    /// is skipped. The corresponding C functions are `fcntl` with `F_SETLEASE`, and `pread`.
    ///
    /// - Parameter type: the type sniffed from the file's first bytes.
    package static func notReady(_ path: FilePath, type: MediaType?) -> String? {
        guard let (descriptor, size) = Self.openRegularFile(path) else { return nil }
        defer { try? descriptor.close() }
        if chute_file_has_writers(descriptor.rawValue) == 1 {
            return "a process has it open for writing"
        }
        guard let type else { return nil }
        let verdict = Completeness.judge(type, size: size) { offset, count in
            var bytes = [UInt8](repeating: 0, count: count)
            let read = bytes.withUnsafeMutableBytes { try? descriptor.read(fromAbsoluteOffset: offset, into: $0) }
            return read.map { Array(bytes.prefix($0)) }
        }
        guard case .incomplete(let reason) = verdict else { return nil }
        return "it looks incomplete: \(reason)"
    }

    /// Opens a regular file for reading, without following a symlink and without blocking (a FIFO posing as media
    /// cannot hang the supervisor).
    ///
    /// - Returns: the descriptor, which the caller closes, and the file's size; `nil` when it cannot be opened or is
    ///   not a regular file.
    private static func openRegularFile(_ path: FilePath) -> (FileDescriptor, Int64)? {
        guard
            let descriptor = try? FileDescriptor.open(
                path,
                .readOnly,
                options: [.noFollow, .nonBlocking, .closeOnExec],
                retryOnInterrupt: true
            )
        else { return nil }
        var info = stat()
        guard fstat(descriptor.rawValue, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            try? descriptor.close()
            return nil
        }
        return (descriptor, Int64(info.st_size))
    }

    /// The SHA-256 of a file's content as lowercase hex, read in 1 MiB chunks.
    ///
    /// The file is opened like the other checks here, without following a symlink and without blocking: the job
    /// runner hashes a source right after an `lstat` found a regular file, and a FIFO swapped in meanwhile would
    /// otherwise hold the hashing thread, and the job with it, until someone wrote to it.
    ///
    /// - Throws: the `Errno` of `read`; `EINVAL` when the file cannot be opened or is not a regular file.
    package static func sha256(of path: FilePath) throws -> String {
        guard let (descriptor, _) = Self.openRegularFile(path) else { throw Errno.invalidArgument }
        defer { try? descriptor.close() }
        var hasher = SHA256()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try descriptor.read(into: $0) }
            if count == 0 { break }
            buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
        return hasher.finalize().map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
