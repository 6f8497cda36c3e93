import Glibc
import Logging
import SystemPackage

extension WatchLoop {
    /// How often a watched folder that does not exist is looked for.
    static let missingRootInterval = Duration.seconds(1)

    /// Waits for a root that does not exist (yet, or any more): logs it once, and looks for it every
    /// ``missingRootInterval`` from now on (``checkMissingRoots(now:)``).
    ///
    /// - Parameter reason: why it is missing, for the log.
    mutating func awaitRoot(_ root: Int, reason: String, now: ContinuousClock.Instant) {
        guard self.missingRoots.insert(root).inserted else { return }
        if self.missingRootsDue == nil { self.missingRootsDue = now + Self.missingRootInterval }
        self.logger.warning(
            "Waiting for watched folder to appear; nothing in it is converted until then",
            metadata: [
                "path": "\(self.specs[root].root.escapedForLog)", "reason": "\(reason)",
                "interval": "\(Self.missingRootInterval)",
            ]
        )
    }

    /// Looks for the missing roots when they are due: each one that exists now is watched and scanned (or polled,
    /// if its file system needs it), and once none is missing the watcher says it is ready.
    mutating func checkMissingRoots(now: ContinuousClock.Instant) {
        guard let due = self.missingRootsDue, due <= now else { return }
        for root in self.missingRoots.sorted() where Self.exists(self.specs[root].root) {
            self.missingRoots.remove(root)
            self.logger.info("Watched folder appeared", metadata: ["path": "\(self.specs[root].root.escapedForLog)"])
            // A share mounted late is as likely as a folder created late: the polling choice is made again.
            self.choosePolling(root, now: now)
            if self.polled[root] == nil {
                var visited = Set<Inotify.WatchDescriptor>()
                self.watchAndScan(self.specs[root].root, root: root, depth: 0, visited: &visited)
            }
            if self.missingRoots.isEmpty { self.logReadiness() }
        }
        self.missingRootsDue = self.missingRoots.isEmpty ? nil : now + Self.missingRootInterval
    }

    /// Logs `Watcher ready` when every root is watched or polled, and otherwise that the watcher waits for the
    /// missing ones: a watcher that watches nothing must not look healthy.
    func logReadiness() {
        let metadata: Logger.Metadata = [
            "folders": "\(self.folders.count)", "polled": "\(self.polled.count)",
            "waiting": "\(self.missingRoots.count)",
        ]
        if self.missingRoots.isEmpty {
            self.logger.info("Watcher ready", metadata: metadata)
        } else {
            self.logger.warning("Watcher waiting for watched folders to appear", metadata: metadata)
        }
    }

    /// Whether a path names something (following a symbolic link), for a root that is looked for.
    ///
    /// The corresponding C function is `stat`.
    private static func exists(_ path: FilePath) -> Bool {
        var status = stat()
        return path.withPlatformString { stat($0, &status) } == 0
    }
}
