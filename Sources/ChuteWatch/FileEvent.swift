import SystemPackage

/// What the watcher reports: a file that may be ready for conversion, or one that is gone.
///
/// Events are hints, not facts: the same file may be reported more than once (by an event and by a scan), and a
/// reported file may already be gone or not be a regular file. The consumer dedupes and checks.
package struct FileEvent: Sendable, Equatable {
    /// How the file was noticed.
    package enum Kind: Sendable, Equatable {
        /// A file opened for writing was closed (`IN_CLOSE_WRITE`).
        case written
        /// A file was renamed into place or moved in from elsewhere (`IN_MOVED_TO`).
        case movedIn
        /// A scan saw the file: at start-up, in a folder that was just created or moved in, or in the rescan that
        /// follows a lost event queue (`IN_Q_OVERFLOW`).
        case found
        /// A file was deleted or moved away (`IN_DELETE`, `IN_MOVED_FROM`): a pending file must be forgotten.
        case removed
    }

    /// How the file was noticed.
    package var kind: Kind
    /// The file's absolute path.
    package var path: FilePath
    /// The watch root the file belongs to, as given in its ``WatchSpec``.
    package var root: FilePath

    package init(kind: Kind, path: FilePath, root: FilePath) {
        self.kind = kind
        self.path = path
        self.root = root
    }
}
