import ChuteCore
import Glibc
import Logging
import SystemPackage

extension WatchLoop {
    /// Handles one event: reports a file, follows a folder, or rescans after lost events.
    ///
    /// Events about ignored file names are dropped. A folder created or moved in is watched and scanned at once (files
    /// written right after `mkdir` would otherwise be missed); a folder renamed away waits for its `movedTo` until the
    /// end of the batch (see ``handleQueuedEvents()``).
    mutating func handle(_ event: InotifyEvent) {
        if event.mask.contains(.queueOverflow) {
            self.logger.warning("Lost inotify events (queue overflow); rescanning every watched folder")
            self.rescanAllRoots()
            return
        }
        // Events still queued for a watch that was dropped have no folder any more.
        guard let folder = self.folders[event.watch] else { return }
        guard let name = event.name else {
            self.handleFolderItself(event, folder: folder)
            return
        }
        let path = folder.path.appending(name)
        if event.mask.contains(.isDirectory) {
            self.handleSubfolder(event, named: name, at: path, in: folder)
            return
        }
        guard !self.specs[folder.root].ignore.ignoresFile(named: name.string) else { return }
        if event.mask.contains(.closeWrite) {
            self.report(.written, path, root: folder.root)
        } else if event.mask.contains(.movedTo) {
            self.report(.movedIn, path, root: folder.root)
        } else if event.mask.contains(.movedFrom) || event.mask.contains(.delete) {
            self.report(.removed, path, root: folder.root)
        } else if event.mask.contains(.create), Self.isLink(path) {
            // `ln` and `ln -s` in place create an entry that no write ever closes: reported, so that the intake says
            // it skips it (a hard link unless the watch allows them).
            self.report(.found, path, root: folder.root)
        }
    }

    /// Whether the entry at `path` is a symbolic link, or a regular file with more than one name. The corresponding
    /// C function is `lstat`.
    private static func isLink(_ path: FilePath) -> Bool {
        var status = stat()
        guard path.withPlatformString({ lstat($0, &status) }) == 0 else { return false }
        let type = status.st_mode & S_IFMT
        return type == S_IFLNK || (type == S_IFREG && status.st_nlink > 1)
    }

    /// Handles an event about a watched folder itself.
    ///
    /// `ignored` ends a watch (the folder was deleted, its file system unmounted, or the watch removed). A root that
    /// is deleted, unmounted or moved away is waited for until a folder is at its path again; other folders are
    /// followed through their parent's events.
    private mutating func handleFolderItself(_ event: InotifyEvent, folder: WatchedFolder) {
        let metadata: Logger.Metadata = ["path": "\(folder.path.escapedForLog)"]
        if event.mask.contains(.ignored) {
            self.folders[event.watch] = nil
            if folder.depth == 0 {
                self.awaitRoot(folder.root, reason: "it was deleted or unmounted", now: ContinuousClock.now)
            }
        } else if event.mask.contains(.moveSelf), folder.depth == 0 {
            self.logger.info("Watched folder was moved away", metadata: metadata)
            for (watch, other) in self.folders where other.root == folder.root {
                self.inotify.removeWatch(watch)
                self.folders[watch] = nil
            }
            self.awaitRoot(folder.root, reason: "it was moved away", now: ContinuousClock.now)
        }
    }

    /// Handles an event about a sub-folder of a watched folder.
    private mutating func handleSubfolder(
        _ event: InotifyEvent,
        named name: FilePath.Component,
        at path: FilePath,
        in parent: WatchedFolder
    ) {
        if event.mask.contains(.movedFrom) {
            self.pendingMoves[event.cookie] = PendingMove(path: path, watches: self.watches(below: path))
            return
        }
        guard event.mask.contains(.create) || event.mask.contains(.movedTo) else { return }
        if self.mayEnter(path, named: name, root: parent.root, depth: parent.depth + 1) {
            // Re-adding the watches of a folder renamed inside the tree returns the same descriptors and records
            // them under the new path; its files are reported as found under their new paths.
            var visited = Set<Inotify.WatchDescriptor>()
            self.watchAndScan(path, root: parent.root, depth: parent.depth + 1, visited: &visited)
        }
        if event.mask.contains(.movedTo), let move = self.pendingMoves.removeValue(forKey: event.cookie) {
            // Whatever was not re-added (renamed to an ignored or excluded name) leaves the tree.
            self.dropStaleWatches(of: move)
        }
    }
}
