import ChuteCore
import SystemPackage

/// One folder to watch, and what to leave out of it.
package struct WatchSpec: Sendable {
    /// The absolute path of the folder. It may be a symbolic link (the operator's choice); nothing below it is
    /// followed.
    package var root: FilePath
    /// Whether sub-folders are watched too, to a depth of 64 folders below the root.
    package var recursive: Bool
    /// The file and folder names that are never reported nor entered.
    package var ignore: IgnoreRules
    /// Absolute folders that are never entered nor watched: Chute's output folders inside a watched tree.
    package var excluded: [FilePath]
    /// Whether the folder is polled instead of watched with inotify (`auto`: when ``FileSystemType`` says so).
    package var poll: PollMode
    /// How often a polled folder is listed again.
    package var pollInterval: Duration

    package init(
        root: FilePath,
        recursive: Bool,
        ignore: IgnoreRules,
        excluded: [FilePath],
        poll: PollMode = .auto,
        pollInterval: Duration = .seconds(10)
    ) {
        self.root = root
        self.recursive = recursive
        self.ignore = ignore
        self.excluded = excluded
        self.poll = poll
        self.pollInterval = pollInterval
    }
}
