import ChuteCore
import Logging
import SystemPackage

extension WatchLoop {
    /// Watches and scans every root that is neither polled nor missing, reporting each file found.
    ///
    /// A root that does not exist is waited for (``awaitRoot(_:reason:now:)``); one that cannot be watched for
    /// another reason (it is not a folder, is not readable) is logged at error level and skipped; the others are
    /// watched.
    ///
    /// - Returns: the watches that were added or confirmed.
    @discardableResult
    mutating func watchAllRoots() -> Set<Inotify.WatchDescriptor> {
        var visited = Set<Inotify.WatchDescriptor>()
        for index in self.specs.indices where self.polled[index] == nil && !self.missingRoots.contains(index) {
            self.watchAndScan(self.specs[index].root, root: index, depth: 0, visited: &visited)
        }
        return visited
    }

    /// Watches and scans every root again, after the event queue overflowed, and removes the watches of folders that
    /// are no longer in the tree (their `movedFrom` may have been among the lost events).
    mutating func rescanAllRoots() {
        let visited = self.watchAllRoots()
        for watch in self.folders.keys where !visited.contains(watch) {
            self.inotify.removeWatch(watch)
            self.folders[watch] = nil
        }
    }

    /// Watches a folder and the folders below it, and reports every file in them as found.
    ///
    /// Each folder is watched before it is listed, so a file that appears meanwhile is listed, reported by an
    /// event, or both; the consumer dedupes. Only a file that is created and deleted again before its folder is
    /// watched goes unseen, which is harmless.
    ///
    /// - Parameters:
    ///   - path: the folder; a root (`depth` 0) may be a symbolic link, a sub-folder may not.
    ///   - root: the index of its spec.
    ///   - depth: its level below the root.
    ///   - visited: collects the watches added or confirmed.
    mutating func watchAndScan(
        _ path: FilePath,
        root: Int,
        depth: Int,
        visited: inout Set<Inotify.WatchDescriptor>
    ) {
        guard self.watch(path, root: root, depth: depth, visited: &visited) else { return }
        do throws(WatchError) {
            let folder = try FolderStream(openingFolderAt: path, followingSymbolicLink: depth == 0)
            self.scan(folder, root: root, depth: depth, visited: &visited)
        } catch {
            self.reportUnavailable(error, depth: depth)
        }
    }

    /// Whether a sub-folder is entered and watched: the spec is recursive, the depth is within the limit, its name is
    /// not ignored, and it is neither excluded nor another root (which it then belongs to alone).
    ///
    /// A folder beyond the depth limit is logged, once: nothing below it is ever converted, which the person who
    /// dropped a deep tree (or made one on purpose) should be able to find out.
    func mayEnter(_ path: FilePath, named name: FilePath.Component, root: Int, depth: Int) -> Bool {
        let spec = self.specs[root]
        guard spec.recursive else { return false }
        guard !spec.ignore.ignoresFolder(named: name.string), !spec.excluded.contains(path) else { return false }
        guard !self.specs.contains(where: { $0.root == path }) else { return false }
        guard depth <= DirectoryWatcher.maximumDepth else {
            if self.foldersTooDeep.paths.insert(path).inserted {
                self.logger.warning(
                    "Folder not entered: too deep below the watched folder; nothing in it is converted",
                    metadata: ["path": "\(path.escapedForLog)", "depth.limit": "\(DirectoryWatcher.maximumDepth)"]
                )
            }
            return false
        }
        return true
    }

    /// The watches of a folder and of every folder below it.
    func watches(below path: FilePath) -> [Inotify.WatchDescriptor] {
        self.folders.filter { $0.value.path.starts(with: path) }.map(\.key)
    }

    /// Removes the watches that a folder renamed away had when it left, unless a `movedTo` has since given them a
    /// new path inside the tree.
    mutating func dropStaleWatches(of move: PendingMove) {
        for watch in move.watches {
            guard let folder = self.folders[watch], folder.path.starts(with: move.path) else { continue }
            self.inotify.removeWatch(watch)
            self.folders[watch] = nil
        }
    }

    /// Lists an open folder: reports its files, then watches and scans its sub-folders.
    private mutating func scan(
        _ folder: borrowing FolderStream,
        root: Int,
        depth: Int,
        visited: inout Set<Inotify.WatchDescriptor>
    ) {
        let entries: [FolderStream.Entry]
        do throws(WatchError) {
            entries = try folder.entries()
        } catch {
            self.reportUnavailable(error, depth: depth)
            return
        }
        let ignore = self.specs[root].ignore
        for entry in entries {
            let path = folder.path.appending(entry.name)
            switch entry.kind {
            case .file, .symbolicLink:
                if !ignore.ignoresFile(named: entry.name.string) { self.report(.found, path, root: root) }
            case .folder:
                guard self.mayEnter(path, named: entry.name, root: root, depth: depth + 1),
                    self.watch(path, root: root, depth: depth + 1, visited: &visited)
                else { continue }
                do throws(WatchError) {
                    let subfolder = try folder.openSubfolder(named: entry.name)
                    self.scan(subfolder, root: root, depth: depth + 1, visited: &visited)
                } catch {
                    self.reportUnavailable(error, depth: depth + 1)
                }
            case .other:
                continue
            }
        }
    }

    /// Adds or re-adds the watch of a folder and records it under `path`.
    ///
    /// - Returns: whether to scan the folder: false when it is gone, is no longer a folder, or cannot be watched for
    ///   another reason than the watch limit. At the limit the folder is still scanned, so that its files are
    ///   found now even though later changes are missed. A root that does not exist is waited for.
    private mutating func watch(
        _ path: FilePath,
        root: Int,
        depth: Int,
        visited: inout Set<Inotify.WatchDescriptor>
    ) -> Bool {
        // The operator may have made a root a symbolic link; below it, none is followed.
        let mask = depth == 0 ? InotifyMask.folderEvents : InotifyMask.folderEvents.union(.dontFollow)
        do throws(WatchError) {
            let watch = try self.inotify.addWatch(at: path, mask: mask)
            self.folders[watch] = WatchedFolder(path: path, root: root, depth: depth)
            visited.insert(watch)
            return true
        } catch let error where error.errno == .noSpace {
            self.reportWatchLimit(error, root: root)
            return true
        } catch let error where depth == 0 && error.errno == .noSuchFileOrDirectory {
            self.awaitRoot(root, reason: "it does not exist", now: ContinuousClock.now)
            return false
        } catch {
            self.reportUnavailable(error, depth: depth)
            return false
        }
    }

    /// Logs the watch limit once, at error level with the remedy (each further folder it leaves unwatched at debug),
    /// and polls the root of the folder from now on, so that nothing below it goes unseen.
    private mutating func reportWatchLimit(_ error: WatchError, root: Int) {
        let metadata: Logger.Metadata = ["path": "\(error.path?.escapedForLog ?? "")"]
        if self.reportedWatchLimit {
            self.logger.debug("Folder not watched: inotify watch limit reached", metadata: metadata)
        } else {
            self.reportedWatchLimit = true
            self.logger.error(
                """
                Reached the inotify watch limit; folders it leaves unwatched are polled instead. Raise \
                fs.inotify.max_user_watches, e.g. sysctl fs.inotify.max_user_watches=524288
                """,
                error: error,
                metadata: metadata
            )
        }
        self.startPolling(root, reason: "the inotify watch limit was reached", now: ContinuousClock.now)
    }

    /// Logs a folder that cannot be watched or listed: a root at error level; below it, a folder that vanished or
    /// was replaced (a race with the uploader) at debug, anything else at warning.
    private func reportUnavailable(_ error: WatchError, depth: Int) {
        let metadata: Logger.Metadata = ["path": "\(error.path?.escapedForLog ?? "")"]
        if depth == 0 {
            // A root that does not exist is waited for instead (`watch`); this one is there but not a folder, or
            // not readable.
            self.logger.error("Cannot watch folder; it stays unwatched until restart", error: error, metadata: metadata)
        } else if [.noSuchFileOrDirectory, .notDirectory, .tooManySymbolicLinkLevels].contains(error.errno) {
            self.logger.debug("Folder vanished before it was watched", metadata: metadata)
        } else {
            self.logger.warning("Cannot watch folder", error: error, metadata: metadata)
        }
    }
}
