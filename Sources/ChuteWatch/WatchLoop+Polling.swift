import ChuteCore
import Logging
import SystemPackage

extension WatchLoop {
    /// A root that is listed every ``WatchSpec/pollInterval`` instead of watched with inotify, and what its last
    /// listing found.
    struct PolledRoot {
        /// When it is listed next.
        var due: ContinuousClock.Instant
        /// Whether the root was a mount point (on another device than its parent) at its last listing. When it stops
        /// being one, the file system mounted there is gone and the bare mount point shows through: its emptiness
        /// says nothing about the files.
        var wasMountPoint = false
        /// Every file of the last listing that succeeded.
        var files: [FilePath: FolderStream.FileState] = [:]
        /// Whether the root could not be listed last time (logged once, until it can be again).
        var isUnavailable = false
    }

    /// Decides which roots are polled, and logs each once: `always`, and `auto` on a file system whose changes inotify
    /// may not see (``FileSystemType/needsPolling``).
    mutating func choosePolledRoots(now: ContinuousClock.Instant) {
        for index in self.specs.indices {
            self.choosePolling(index, now: now)
        }
    }

    /// Polls one root from now on if its spec says so, or if it says `auto` and its file system needs it.
    mutating func choosePolling(_ index: Int, now: ContinuousClock.Instant) {
        let spec = self.specs[index]
        switch spec.poll {
        case .never:
            return
        case .always:
            self.startPolling(index, reason: "configured (poll: always)", now: now)
        case .auto:
            // A root that cannot be inspected is reported when it is watched.
            guard let type = try? FileSystemType.of(spec.root), type.needsPolling else { return }
            self.startPolling(
                index,
                reason: "\(type) file system: inotify does not see changes made by other machines",
                now: now
            )
        }
    }

    /// Polls a root from `now` on, if it is not polled already, and says so in the log.
    mutating func startPolling(_ root: Int, reason: String, now: ContinuousClock.Instant) {
        guard self.polled[root] == nil else { return }
        self.polled[root] = PolledRoot(due: now)
        self.logger.info(
            "Watching folder by polling",
            metadata: [
                "path": "\(self.specs[root].root.escapedForLog)", "reason": "\(reason)",
                "interval": "\(self.specs[root].pollInterval)",
            ]
        )
    }

    /// Lists every polled root that is due, and sets when it is due next.
    mutating func listDueRoots(now: ContinuousClock.Instant) {
        for root in self.polled.keys.sorted() {
            guard let due = self.polled[root]?.due, due <= now else { continue }
            self.relist(root)
            self.polled[root]?.due = now + self.specs[root].pollInterval
        }
    }

    /// The time until the next polled root is due, or the next look for missing roots, in milliseconds for `poll`:
    /// -1 (wait for events only) when no root is polled or missing.
    func millisecondsUntilNextListing(now: ContinuousClock.Instant) -> Int32 {
        guard let next = (self.polled.values.map(\.due) + [self.missingRootsDue].compactMap { $0 }).min() else {
            return -1
        }
        let wait = next - now
        guard wait > .zero else { return 0 }
        let (seconds, attoseconds) = wait.components
        // Rounded up, so that the root is due when `poll` returns.
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1)
    }

    /// Lists a polled root and reports what changed since its last listing: new and changed files as found, files
    /// that are gone as removed.
    ///
    /// A root that cannot be opened, or that was a mount point and is no longer one (the file system mounted there is
    /// gone), keeps its last listing: nothing is reported as removed, and it is logged once until it is back.
    private mutating func relist(_ root: Int) {
        guard var state = self.polled[root] else { return }
        defer { self.polled[root] = state }
        let spec = self.specs[root]
        let folder: FolderStream
        do throws(WatchError) {
            folder = try FolderStream(openingFolderAt: spec.root, followingSymbolicLink: true)
        } catch {
            self.markUnavailable(&state, root: root, reason: "\(error)")
            return
        }
        let isMountPoint = folder.isMountPoint()
        if state.wasMountPoint && !isMountPoint {
            self.markUnavailable(
                &state,
                root: root,
                reason: "it is no longer a mount point: what was mounted there is gone"
            )
            return
        }
        state.wasMountPoint = isMountPoint
        if state.isUnavailable {
            state.isUnavailable = false
            self.logger.info("Polled folder is available again", metadata: ["path": "\(spec.root.escapedForLog)"])
        }
        var files: [FilePath: FolderStream.FileState] = [:]
        self.list(folder, root: root, depth: 0, previous: state.files, into: &files)
        for (path, file) in files.sorted(by: { $0.key.string < $1.key.string }) where state.files[path] != file {
            self.report(.found, path, root: root)
        }
        for path in state.files.keys.sorted(by: { $0.string < $1.string }) where files[path] == nil {
            self.report(.removed, path, root: root)
        }
        state.files = files
    }

    /// Lists a folder of a polled root into `files`, and its sub-folders as the spec allows, by the same rules as the
    /// inotify watcher's scans (ignored names, excluded folders, other roots, depth, no symbolic links).
    ///
    /// A folder that cannot be listed for another reason than being gone keeps what the last listing found below
    /// it, so that a passing error (a permission, a network hiccup) never reads as deleted files.
    private func list(
        _ folder: borrowing FolderStream,
        root: Int,
        depth: Int,
        previous: [FilePath: FolderStream.FileState],
        into files: inout [FilePath: FolderStream.FileState]
    ) {
        let entries: [FolderStream.Entry]
        do throws(WatchError) {
            entries = try folder.entries()
        } catch {
            Self.keep(below: folder.path, from: previous, into: &files)
            return
        }
        let ignore = self.specs[root].ignore
        for entry in entries {
            let path = folder.path.appending(entry.name)
            switch entry.kind {
            case .file:
                guard !ignore.ignoresFile(named: entry.name.string), let state = folder.state(of: entry.name) else {
                    continue
                }
                files[path] = state
            case .folder:
                guard self.mayEnter(path, named: entry.name, root: root, depth: depth + 1) else { continue }
                do throws(WatchError) {
                    let subfolder = try folder.openSubfolder(named: entry.name)
                    self.list(subfolder, root: root, depth: depth + 1, previous: previous, into: &files)
                } catch
                    where [.noSuchFileOrDirectory, .notDirectory, .tooManySymbolicLinkLevels].contains(error.errno)
                {
                    // Deleted, or replaced by a file or a link, since the folder was read: its files are gone.
                    continue
                } catch {
                    Self.keep(below: path, from: previous, into: &files)
                }
            case .other, .symbolicLink:
                continue
            }
        }
    }

    /// Copies the previous listing's files below `folder` into `files`.
    private static func keep(
        below folder: FilePath,
        from previous: [FilePath: FolderStream.FileState],
        into files: inout [FilePath: FolderStream.FileState]
    ) {
        for (path, state) in previous where path.starts(with: folder) {
            files[path] = state
        }
    }

    /// Records that a polled root cannot be listed, logging it the first time.
    private func markUnavailable(_ state: inout PolledRoot, root: Int, reason: String) {
        guard !state.isUnavailable else { return }
        state.isUnavailable = true
        self.logger.warning(
            "Polled folder is unavailable; its files are kept as last listed until it is back",
            metadata: ["path": "\(self.specs[root].root.escapedForLog)", "reason": "\(reason)"]
        )
    }
}
