import CChuteLinux
import Foundation
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// The system calls Chute makes on paths, each given the path's own bytes (`withPlatformString`).
///
/// A file name need not be valid UTF-8 (a Latin-1 `caf\xe9.jpg` from an old Windows client, Samba or unzip):
/// `FilePath.string` repairs such bytes into U+FFFD, which names a file that does not exist, so no path goes to the
/// file system as a `String`, and no Foundation API that takes a path as a `String` or `URL` sees a user's file name.
/// Each function returns what its C function returns and leaves `errno` set as it does; ``check(_:_:)`` turns such a
/// result into a value or a ``SystemCallError``.
package enum SystemCall {
    /// Calls `body`, a C function that returns a negative value (-1) and sets `errno` when it fails, again for as long
    /// as it fails with `EINTR` (swift-system: `valueOrErrno(retryOnInterrupt:_:)`; swift-nio: `syscall(blocking:)`).
    ///
    /// - Parameters:
    ///   - call: the C function's name, for the error.
    ///   - body: the call.
    /// - Returns: what the call returned.
    /// - Throws: ``SystemCallError`` with `call` and the `errno` read right after the call.
    @discardableResult
    package static func check<Value: FixedWidthInteger>(
        _ call: String,
        _ body: () -> Value
    ) throws(SystemCallError) -> Value {
        while true {
            let value = body()
            guard value < 0 else { return value }
            let cause = Errno(rawValue: errno)
            guard cause == .interrupted else { throw SystemCallError(call, cause: cause) }
        }
    }

    /// The corresponding C function is `unlink`.
    @discardableResult
    package static func unlink(_ path: FilePath) -> Int32 {
        path.withPlatformString { Glibc.unlink($0) }
    }

    /// The corresponding C function is `rmdir`.
    @discardableResult
    package static func rmdir(_ path: FilePath) -> Int32 {
        path.withPlatformString { Glibc.rmdir($0) }
    }

    /// The corresponding C function is `rename`.
    @discardableResult
    package static func rename(_ source: FilePath, _ target: FilePath) -> Int32 {
        source.withPlatformString { source in target.withPlatformString { Glibc.rename(source, $0) } }
    }

    /// The corresponding C function is `link`.
    package static func link(_ source: FilePath, _ target: FilePath) -> Int32 {
        source.withPlatformString { source in target.withPlatformString { Glibc.link(source, $0) } }
    }

    /// The corresponding C function is `access`.
    package static func access(_ path: FilePath, _ mode: Int32) -> Int32 {
        path.withPlatformString { Glibc.access($0, mode) }
    }

    /// The corresponding C function is `mkdir`.
    package static func mkdir(_ path: FilePath, _ mode: mode_t) -> Int32 {
        path.withPlatformString { Glibc.mkdir($0, mode) }
    }

    /// The corresponding C function is `stat`, called as `fstatat` from the current folder (in Swift, `Glibc.stat`
    /// names the structure).
    package static func stat(_ path: FilePath, _ status: inout Glibc.stat) -> Int32 {
        path.withPlatformString { fstatat(AT_FDCWD, $0, &status, 0) }
    }

    /// The corresponding C function is `lchown`.
    package static func lchown(_ path: FilePath, _ owner: uid_t, _ group: gid_t) -> Int32 {
        path.withPlatformString { Glibc.lchown($0, owner, group) }
    }

    /// The corresponding C function is `chmod`.
    @discardableResult
    package static func chmod(_ path: FilePath, _ mode: mode_t) -> Int32 {
        path.withPlatformString { Glibc.chmod($0, mode) }
    }

    /// The names in `folder`, without `.` and `..`, as the directory holds them (their bytes). The corresponding C
    /// functions are `opendir`, `readdir` and `closedir`.
    ///
    /// - Throws: `Errno` when the folder cannot be opened or read.
    package static func entries(of folder: FilePath) throws(Errno) -> [FilePath.Component] {
        guard let stream = folder.withPlatformString({ opendir($0) }) else { throw Errno(rawValue: errno) }
        defer { closedir(stream) }
        var names: [FilePath.Component] = []
        while true {
            errno = 0
            guard let record = readdir(stream) else {
                if errno != 0 { throw Errno(rawValue: errno) }
                return names
            }
            let name = withUnsafeMutablePointer(to: &record.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: tuple.pointee)) {
                    FilePath.Component(platformString: $0)
                }
            }
            if let name, name.kind == .regular { names.append(name) }
        }
    }

    /// The files below `folder` at any depth (not following symbolic links), relative to it, with their bytes: what
    /// `FileManager`'s enumerator lists, without repairing names.
    package static func files(below folder: FilePath) -> [FilePath] {
        var result: [FilePath] = []
        var pending: [FilePath] = [FilePath()]
        while let relative = pending.popLast() {
            guard let names = try? Self.entries(of: folder.pushing(relative)) else { continue }
            for name in names {
                let path = relative.appending(name)
                var status = Glibc.stat()
                let isFolder =
                    folder.pushing(path).withPlatformString { lstat($0, &status) } == 0
                    && (status.st_mode & S_IFMT) == S_IFDIR
                if isFolder { pending.append(path) } else { result.append(path) }
            }
        }
        return result
    }

    /// The whole content of the file at `path`. The corresponding C functions are `open` and `read`.
    ///
    /// - Throws: `Errno` when the file cannot be opened or read.
    package static func contents(of path: FilePath) throws(Errno) -> Data {
        do {
            let descriptor = try FileDescriptor.open(path, .readOnly, options: [.closeOnExec])
            return try descriptor.closeAfter {
                var data = Data()
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    let count = try buffer.withUnsafeMutableBytes { try descriptor.read(into: $0) }
                    guard count > 0 else { return data }
                    data.append(contentsOf: buffer[..<count])
                }
            }
        } catch {
            throw error as? Errno ?? .ioError
        }
    }
}
