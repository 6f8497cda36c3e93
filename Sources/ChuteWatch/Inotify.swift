import ChuteCore
import Glibc
import SystemPackage

/// Owns one inotify instance. The corresponding C function is `inotify_init1`.
///
/// - Important: Not thread-safe: one thread adds watches and reads events.
struct Inotify: ~Copyable {
    /// Identifies one watch of this instance; the kernel returns the same one when a folder that is already
    /// watched is added again, even under a new path.
    struct WatchDescriptor: Hashable, Sendable {
        var rawValue: Int32
    }

    /// The instance's descriptor, for `poll`.
    let descriptor: FileDescriptor

    /// Creates an instance whose descriptor is closed on `exec`.
    ///
    /// - Throws: ``WatchError`` with code `createInstance`, for example `EMFILE` when the user already has
    ///   `fs.inotify.max_user_instances` instances.
    init() throws(WatchError) {
        let descriptor = inotify_init1(Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { throw .lastError(.createInstance, function: "inotify_init1") }
        self.descriptor = FileDescriptor(rawValue: descriptor)
    }

    deinit {
        // close(2) on Linux releases the descriptor even when it reports an error; there is nothing to retry.
        try? self.descriptor.close()
    }

    /// Watches a folder, or updates the watch of a folder that is already watched (and returns its descriptor).
    ///
    /// The corresponding C function is `inotify_add_watch`.
    ///
    /// - Parameters:
    ///   - path: the folder.
    ///   - mask: the events to report and the flags (`onlyDirectory`, `dontFollow`).
    /// - Returns: the watch.
    /// - Throws: ``WatchError`` with code `addWatch`: `ENOSPC` at the `fs.inotify.max_user_watches` limit,
    ///   `ENOENT` or `ENOTDIR` when the folder is gone or is not a folder (a symbolic link with `dontFollow`).
    func addWatch(at path: FilePath, mask: InotifyMask) throws(WatchError) -> WatchDescriptor {
        do throws(SystemCallError) {
            let watch = try SystemCall.check("inotify_add_watch") {
                path.withPlatformString { inotify_add_watch(self.descriptor.rawValue, $0, mask.rawValue) }
            }
            return WatchDescriptor(rawValue: watch)
        } catch {
            throw WatchError(.addWatch, error, path: path)
        }
    }

    /// Removes a watch; the kernel then queues an `IN_IGNORED` event for it.
    ///
    /// The corresponding C function is `inotify_rm_watch`. Its only failure for a valid instance is `EINVAL`, when
    /// the kernel has already removed the watch because its folder was deleted; that is the outcome asked for.
    func removeWatch(_ watch: WatchDescriptor) {
        _ = inotify_rm_watch(self.descriptor.rawValue, watch.rawValue)
    }

    /// Reads the queued events into `buffer`, blocking until there is at least one.
    ///
    /// The corresponding C function is `read`.
    ///
    /// - Parameter buffer: room for at least one event with the longest name (`sizeof(struct inotify_event)` +
    ///   `NAME_MAX` + 1 bytes).
    /// - Returns: the number of bytes read: whole events only.
    /// - Throws: ``WatchError`` with code `readEvents`.
    func readEvents(into buffer: UnsafeMutableRawBufferPointer) throws(WatchError) -> Int {
        do throws(SystemCallError) {
            return try SystemCall.check("read") { read(self.descriptor.rawValue, buffer.baseAddress, buffer.count) }
        } catch {
            throw WatchError(.readEvents, error)
        }
    }
}
