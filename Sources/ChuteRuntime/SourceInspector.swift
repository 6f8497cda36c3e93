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
        /// Whether it is a folder (a group's, ``RuleGrouping``).
        package var isDirectory = false
        /// Whether it is a symbolic link (never followed).
        package var isSymbolicLink = false
        /// How many names the file has: more than one for a hard link.
        package var linkCount: Int
    }

    /// Reads a path's metadata without following a final symlink.
    ///
    /// With `root`, the path is looked up below that folder without following any symbolic link on the way, not
    /// even a folder that was swapped for one; a path that would leave `root` fails with `ELOOP` or `EXDEV`. The
    /// corresponding C functions are `lstat`, or `openat2` with `O_PATH` and `fstat` (``chute_stat_beneath``).
    /// - Parameter root: the watched folder the path is below, for a source; `nil` for Chute's own files.
    /// - Throws: the `Errno` of the lookup (`ENOENT` when the file is gone).
    package static func status(of path: FilePath, beneath root: FilePath? = nil) throws(Errno) -> Status {
        var info = stat()
        if let root {
            var relative = path
            guard relative.removePrefix(root), !relative.isEmpty else { throw Errno.improperLink }
            let result = root.withPlatformString { rootName in
                relative.withPlatformString { chute_stat_beneath(rootName, $0, &info) }
            }
            guard result == 0 else { throw Errno(rawValue: errno) }
        } else {
            let result = path.withPlatformString { lstat($0, &info) }
            guard result == 0 else { throw Errno(rawValue: errno) }
        }
        let fingerprint = SourceFingerprint(
            device: UInt64(info.st_dev),
            inode: UInt64(info.st_ino),
            size: Int64(info.st_size),
            modifiedNanoseconds: Self.nanoseconds(info.st_mtim),
            changedNanoseconds: Self.nanoseconds(info.st_ctim)
        )
        return Status(
            fingerprint: fingerprint,
            isRegularFile: info.st_mode & S_IFMT == S_IFREG,
            isDirectory: info.st_mode & S_IFMT == S_IFDIR,
            isSymbolicLink: info.st_mode & S_IFMT == S_IFLNK,
            linkCount: Int(info.st_nlink)
        )
    }

    /// A file time in nanoseconds since the epoch, saturated at `Int64`'s bounds: anyone who can write a file can date
    /// it past the year 2262, where the product no longer fits.
    private static func nanoseconds(_ time: timespec) -> Int64 {
        let (scaled, overflow) = Int64(time.tv_sec).multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow else { return time.tv_sec < 0 ? .min : .max }
        let (total, overflowAgain) = scaled.addingReportingOverflow(Int64(time.tv_nsec))
        return overflowAgain ? .max : total
    }

    /// Opens `path`, which is below the folder `root`, following no symbolic link on the way and never leaving
    /// `root`. The corresponding C function is `openat2` (``chute_open_beneath``).
    ///
    /// - Returns: the descriptor, which the caller closes.
    /// - Throws: `EXDEV` when the path is not below `root`; otherwise the lookup's `Errno`.
    private static func open(_ path: FilePath, beneath root: FilePath, flags: Int32) throws(Errno) -> Int32 {
        var relative = path
        guard relative.removePrefix(root), !relative.isEmpty else { throw Errno.improperLink }
        let descriptor = root.withPlatformString { rootName in
            relative.withPlatformString { chute_open_beneath(rootName, $0, flags) }
        }
        guard descriptor >= 0 else { throw Errno(rawValue: errno) }
        return descriptor
    }

    /// Recognises a regular file's type from its first bytes (``MediaType/headerLength``).
    ///
    /// The file is opened without following symlinks and without blocking (a FIFO posing as media cannot hang it).
    /// - Returns: the type, or `nil` when the file cannot be read or is not recognised.
    package static func sniff(_ path: FilePath, beneath root: FilePath? = nil) -> MediaType? {
        guard let (descriptor, _) = Self.openRegularFile(path, beneath: root) else { return nil }
        defer { try? descriptor.close() }
        var header = [UInt8](repeating: 0, count: MediaType.headerLength)
        let count = (try? header.withUnsafeMutableBytes { try descriptor.read(into: $0) }) ?? 0
        if let type = MediaType.sniff(header.prefix(count)) { return type }
        // A ZIP that the header did not tell may be an office document whose telling member comes after a large
        // first one (Word's thumbnail): its local headers are walked further, as far as ``zipScanLength``.
        guard header.starts(with: [0x50, 0x4B, 0x03, 0x04]) else { return nil }
        var start = [UInt8](repeating: 0, count: Self.zipScanLength)
        let read = (try? start.withUnsafeMutableBytes { try descriptor.read(fromAbsoluteOffset: 0, into: $0) }) ?? 0
        return MediaType.officeDocument(inZip: Array(start.prefix(read)))
    }

    /// How much of a ZIP file ``sniff(_:beneath:)`` walks for the members of an office document.
    static let zipScanLength = 1 << 20

    /// Why a file is not ready to be taken yet, or `nil` when it is: a process still has it open for writing (a
    /// writer idle for longer than the quiet period), it is empty (SMB and FTP clients create a file at 0 bytes,
    /// then fill it), or its structure is cut short for its type (``Completeness``: a writer that closes and re-opens
    /// between chunks).
    ///
    /// The file is opened once, read-only, without following symlinks and without blocking. Where the kernel cannot
    /// tell about writers (a file of another user for a daemon without CAP_LEASE, a network file system), that check
    /// is skipped. The corresponding C functions are `fcntl` with `F_SETLEASE`, and `pread`.
    ///
    /// - Parameters:
    ///   - type: the type sniffed from the file's first bytes.
    ///   - root: the watched folder, below which the path is looked up without following links.
    package static func notReady(_ path: FilePath, type: MediaType?, beneath root: FilePath? = nil) -> String? {
        guard let (descriptor, size) = Self.openRegularFile(path, beneath: root) else { return nil }
        defer { try? descriptor.close() }
        if chute_file_has_writers(descriptor.rawValue) == 1 {
            return "a process has it open for writing"
        }
        guard size > 0 else { return "it is empty" }
        guard case .incomplete(let reason) = Self.judge(descriptor, size: size, type: type) else { return nil }
        return "it looks incomplete: \(reason)"
    }

    /// Whether a process has the file open for writing (told by a read lease); `false` when it cannot be opened.
    ///
    /// - Parameter root: the watched folder, below which the path is looked up without following links.
    package static func hasWriters(_ path: FilePath, beneath root: FilePath? = nil) -> Bool {
        guard let (descriptor, _) = Self.openRegularFile(path, beneath: root) else { return false }
        defer { try? descriptor.close() }
        return chute_file_has_writers(descriptor.rawValue) == 1
    }

    /// Whether a file can be taken without waiting for a quiet period: the kernel says no process has it open for
    /// writing (a read lease was granted) and its structure shows it whole for its type (``Completeness``). `false`
    /// wherever either cannot be told: a type without a structural check, a file of another user for a daemon
    /// without CAP_LEASE, a network file system.
    ///
    /// - Parameters:
    ///   - type: the type sniffed from the file's first bytes.
    ///   - root: the watched folder, below which the path is looked up without following links.
    package static func isFinished(_ path: FilePath, type: MediaType?, beneath root: FilePath? = nil) -> Bool {
        guard let (descriptor, size) = Self.openRegularFile(path, beneath: root) else { return false }
        defer { try? descriptor.close() }
        return size > 0 && chute_file_has_writers(descriptor.rawValue) == 0
            && Self.judge(descriptor, size: size, type: type) == .whole
    }

    /// Whether a file's structure shows it whole for its type (``Completeness``), so that no writer that closes
    /// between chunks can still be adding to it; `false` when its type has no such check or it cannot be read.
    ///
    /// - Parameters:
    ///   - type: the type sniffed from the file's first bytes.
    ///   - root: the watched folder, below which the path is looked up without following links.
    package static func isWhole(_ path: FilePath, type: MediaType?, beneath root: FilePath? = nil) -> Bool {
        guard let (descriptor, size) = Self.openRegularFile(path, beneath: root) else { return false }
        defer { try? descriptor.close() }
        return size > 0 && Self.judge(descriptor, size: size, type: type) == .whole
    }

    /// What a file's headers say about its size as media (``MediaHeader``), for the scheduler's estimates; empty when
    /// the file cannot be read.
    ///
    /// - Parameters:
    ///   - type: the type sniffed from the file's first bytes.
    ///   - root: the watched folder, below which the path is looked up without following links.
    package static func header(of path: FilePath, type: MediaType, beneath root: FilePath? = nil) -> MediaHeader {
        guard let (descriptor, size) = Self.openRegularFile(path, beneath: root) else { return MediaHeader() }
        defer { try? descriptor.close() }
        return MediaHeader.read(type, size: size) { offset, count in
            var bytes = [UInt8](repeating: 0, count: count)
            let read = bytes.withUnsafeMutableBytes { try? descriptor.read(fromAbsoluteOffset: offset, into: $0) }
            return read.map { Array(bytes.prefix($0)) }
        }
    }

    /// ``Completeness/judge(_:size:read:)`` on an open file, reading it with `pread`; `.unknown` without a type.
    private static func judge(_ descriptor: FileDescriptor, size: Int64, type: MediaType?) -> Completeness {
        guard let type else { return .unknown }
        return Completeness.judge(type, size: size) { offset, count in
            var bytes = [UInt8](repeating: 0, count: count)
            let read = bytes.withUnsafeMutableBytes { try? descriptor.read(fromAbsoluteOffset: offset, into: $0) }
            return read.map { Array(bytes.prefix($0)) }
        }
    }

    /// Opens a regular file for reading, without following a symlink (with `root`, none on the whole way) and
    /// without blocking (a FIFO posing as media cannot hang the supervisor).
    ///
    /// - Returns: the descriptor, which the caller closes, and the file's size; `nil` when it cannot be opened or is
    ///   not a regular file.
    private static func openRegularFile(_ path: FilePath, beneath root: FilePath?) -> (FileDescriptor, Int64)? {
        let opened: FileDescriptor?
        if let root {
            opened = (try? Self.open(path, beneath: root, flags: O_RDONLY | O_NOFOLLOW | O_NONBLOCK))
                .map { FileDescriptor(rawValue: $0) }
        } else {
            opened = try? FileDescriptor.open(
                path,
                .readOnly,
                options: [.noFollow, .nonBlocking, .closeOnExec],
                retryOnInterrupt: true
            )
        }
        guard let descriptor = opened else { return nil }
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
    package static func sha256(of path: FilePath, beneath root: FilePath? = nil) throws -> String {
        guard let (descriptor, size) = Self.openRegularFile(path, beneath: root) else { throw Errno.invalidArgument }
        defer { try? descriptor.close() }
        var hasher = SHA256()
        // At most 1 MB, and no larger than the file: neither zeroed nor faulted in beyond what the reads fill.
        let buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: Int(clamping: min(max(size, 1), 1 << 20)),
            alignment: 16
        )
        defer { buffer.deallocate() }
        while true {
            let count = try descriptor.read(into: buffer)
            if count == 0 { break }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
        return hasher.finalize().map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
