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

    package init(root: FilePath, recursive: Bool, ignore: IgnoreRules, excluded: [FilePath]) {
        self.root = root
        self.recursive = recursive
        self.ignore = ignore
        self.excluded = excluded
    }
}
