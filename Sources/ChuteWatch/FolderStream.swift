import ChuteCore
import Glibc
import SystemPackage

/// Owns one open directory stream (`DIR *`), opened without following a symbolic link below the watch root.
///
/// The corresponding C functions are `open`/`openat` (with `O_DIRECTORY`, `O_NOFOLLOW`), `fdopendir`, `readdir`
/// and `closedir`. Within a scan, sub-folders are opened relative to their parent's descriptor, so that a folder
/// swapped for a symbolic link (at any level) is never entered.
struct FolderStream: ~Copyable {
    /// What a folder entry is, as far as the watcher cares.
    enum EntryKind: Sendable, Equatable {
        /// A regular file.
        case file
        /// A folder (not a symbolic link to one).
        case folder
        /// A symbolic link, which is never followed: reported, so that the intake says it skips it.
        case symbolicLink
        /// Anything else: a FIFO, a socket, a device.
        case other
    }

    /// One entry of a folder.
    struct Entry: Sendable {
        /// The entry's name in the folder.
        var name: FilePath.Component
        /// What it is, without following a symbolic link.
        var kind: EntryKind
    }

    private let stream: OpaquePointer
    /// The folder's path, for errors.
    let path: FilePath

    /// Opens a folder by path.
    ///
    /// - Parameters:
    ///   - path: the folder's absolute path.
    ///   - followingSymbolicLink: whether `path` itself may be a symbolic link (true for a watch root only).
    /// - Throws: ``WatchError`` with code `listFolder`.
    init(openingFolderAt path: FilePath, followingSymbolicLink: Bool) throws(WatchError) {
        var flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC
        if !followingSymbolicLink { flags |= O_NOFOLLOW }
        let descriptor: Int32
        do throws(SystemCallError) {
            descriptor = try SystemCall.check("open") { path.withPlatformString { open($0, flags) } }
        } catch {
            throw WatchError(.listFolder, error, path: path)
        }
        try self.init(adopting: descriptor, path: path)
    }

    /// Opens a sub-folder of this folder, relative to this folder's descriptor, without following a symbolic link.
    ///
    /// - Parameter name: the sub-folder's name.
    /// - Returns: the sub-folder's stream.
    /// - Throws: ``WatchError`` with code `listFolder`: `ELOOP` or `ENOTDIR` when the entry is no longer a folder.
    func openSubfolder(named name: FilePath.Component) throws(WatchError) -> FolderStream {
        let path = self.path.appending(name)
        let flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC
        let descriptor: Int32
        do throws(SystemCallError) {
            descriptor = try SystemCall.check("openat") {
                name.withPlatformString { openat(dirfd(self.stream), $0, flags) }
            }
        } catch {
            throw WatchError(.listFolder, error, path: path)
        }
        return try FolderStream(adopting: descriptor, path: path)
    }

    /// Takes over an open folder descriptor; closes it when `fdopendir` fails.
    private init(adopting descriptor: Int32, path: FilePath) throws(WatchError) {
        guard let stream = fdopendir(descriptor) else {
            let error = WatchError.lastError(.listFolder, function: "fdopendir", path: path)
            close(descriptor)
            throw error
        }
        self.stream = stream
        self.path = path
    }

    deinit {
        closedir(self.stream)
    }

    /// Lists the folder, without `.` and `..`.
    ///
    /// Kinds come from `d_type`; where the file system leaves it unknown, from `fstatat` with
    /// `AT_SYMLINK_NOFOLLOW`. An entry that vanishes before `fstatat` is left out.
    ///
    /// - Returns: the entries, in directory order.
    /// - Throws: ``WatchError`` with code `listFolder` when `readdir` fails.
    func entries() throws(WatchError) -> [Entry] {
        var entries: [Entry] = []
        while true {
            errno = 0
            guard let record = readdir(self.stream) else {
                if errno != 0 { throw .lastError(.listFolder, function: "readdir", path: self.path) }
                return entries
            }
            let name = withUnsafeMutablePointer(to: &record.pointee.d_name) { tuple in
                tuple.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: tuple.pointee)) {
                    FilePath.Component(platformString: $0)
                }
            }
            guard let name, name.kind == .regular else { continue }
            guard let kind = self.kind(of: name, type: record.pointee.d_type) else { continue }
            entries.append(Entry(name: name, kind: kind))
        }
    }

    /// What a polled file looked like at a listing: a change in any of these is a change of the file.
    struct FileState: Sendable, Equatable {
        var inode: UInt64
        var size: Int64
        var modifiedSeconds: Int64
        var modifiedNanoseconds: Int64
    }

    /// Whether the folder is a mount point: on another device than its parent folder. The corresponding C functions
    /// are `fstat` and `fstatat` of `..`.
    ///
    /// - Returns: false also when either call fails.
    func isMountPoint() -> Bool {
        var folder = stat()
        var parent = stat()
        guard fstat(dirfd(self.stream), &folder) == 0, fstatat(dirfd(self.stream), "..", &parent, 0) == 0 else {
            return false
        }
        return folder.st_dev != parent.st_dev
    }

    /// The state of a regular file in this folder, without following a symbolic link. The corresponding C function is
    /// `fstatat` with `AT_SYMLINK_NOFOLLOW`.
    ///
    /// - Returns: the state, or `nil` when the entry is gone or is no longer a regular file.
    func state(of name: FilePath.Component) -> FileState? {
        var status = stat()
        let result = name.withPlatformString { name in
            fstatat(dirfd(self.stream), name, &status, AT_SYMLINK_NOFOLLOW)
        }
        guard result == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        return FileState(
            inode: UInt64(status.st_ino),
            size: Int64(status.st_size),
            modifiedSeconds: Int64(status.st_mtim.tv_sec),
            modifiedNanoseconds: Int64(status.st_mtim.tv_nsec)
        )
    }

    private func kind(of name: FilePath.Component, type: UInt8) -> EntryKind? {
        switch Int(type) {
        case DT_REG: return .file
        case DT_DIR: return .folder
        case DT_LNK: return .symbolicLink
        case DT_UNKNOWN: break
        default: return .other
        }
        var status = stat()
        let result = name.withPlatformString { name in
            fstatat(dirfd(self.stream), name, &status, AT_SYMLINK_NOFOLLOW)
        }
        guard result == 0 else { return nil }
        switch status.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .folder
        case S_IFLNK: return .symbolicLink
        default: return .other
        }
    }
}
