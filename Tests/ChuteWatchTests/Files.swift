import Foundation
import Glibc
import SystemPackage

/// File operations for the tests, as single system calls so that the events they cause are known.
enum Files {
    /// Creates or truncates a file, writes `text` and closes it: `IN_CREATE` (when new), then `IN_CLOSE_WRITE`.
    static func write(_ path: FilePath, _ text: String = "content\n") throws {
        let descriptor = try FileDescriptor.open(
            path,
            .writeOnly,
            options: [.create, .truncate],
            permissions: [.ownerReadWrite, .groupRead, .otherRead]
        )
        try descriptor.closeAfter { _ = try descriptor.writeAll(text.utf8) }
    }

    /// Creates a folder: `IN_CREATE | IN_ISDIR`.
    static func makeFolder(_ path: FilePath) throws {
        guard mkdir(path.string, 0o755) == 0 else { throw Errno(rawValue: errno) }
    }

    /// Creates a folder and any missing parents.
    static func makeFolders(_ path: FilePath) throws {
        try FileManager.default.createDirectory(atPath: path.string, withIntermediateDirectories: true)
    }

    /// Renames within one file system: `IN_MOVED_FROM` and `IN_MOVED_TO` with one cookie.
    static func rename(_ source: FilePath, to destination: FilePath) throws {
        guard Glibc.rename(source.string, destination.string) == 0 else { throw Errno(rawValue: errno) }
    }

    /// Makes a FIFO (named pipe).
    static func makeFIFO(_ path: FilePath) throws {
        guard mkfifo(path.string, 0o644) == 0 else { throw Errno(rawValue: errno) }
    }

    /// Makes a symbolic link at `path` pointing to `target`.
    static func symlink(_ path: FilePath, to target: FilePath) throws {
        guard Glibc.symlink(target.string, path.string) == 0 else { throw Errno(rawValue: errno) }
    }

    /// Deletes a file: `IN_DELETE`.
    static func remove(_ path: FilePath) throws {
        guard unlink(path.string) == 0 else { throw Errno(rawValue: errno) }
    }
}
