/// The names that are never inputs: temporary and partial files, OS and NAS clutter, and Chute's own files.
package struct IgnoreRules: Sendable {
    /// File names ignored everywhere, before any rule is tried.
    package static let defaultPatterns: [String] = [
        "*.part", "*.partial", "*.crdownload", "*.download", "*.tmp", "*.temp", "*.swp", "~$*", "._*",
        ".DS_Store", "Thumbs.db", "desktop.ini", ".~lock.*",
        // Chute's own temporary outputs and sidecars.
        ".chute-*", "*.chute.json",
    ]

    /// Folder names that are never entered: NAS thumbnail, recycle-bin and snapshot folders.
    package static let defaultFolderPatterns: [String] = [
        "@eaDir", "#recycle", ".recycle", "#snapshot", ".snapshot", ".zfs", ".Trash-*", ".Trashes",
        "$RECYCLE.BIN", "System Volume Information", "lost+found", ".AppleDouble", "@Recycle", ".@__thumb",
        "SYNOPHOTO_THUMB_*",
    ]

    private let files: [GlobPattern]
    private let folders: [GlobPattern]

    /// Builds the rules from the defaults plus a watch's extra patterns.
    package init(extra: [GlobPattern] = []) {
        // The defaults are constants known to parse.
        self.files = Self.defaultPatterns.map { try! GlobPattern($0) } + extra
        self.folders = Self.defaultFolderPatterns.map { try! GlobPattern($0) }
    }

    /// Whether a file name is never an input.
    ///
    /// Besides the patterns, this catches rsync's in-progress names (`.name.XXXXXX`: a dot, the final name, a dot and
    /// six random characters).
    package func ignoresFile(named name: String) -> Bool {
        if self.files.contains(where: { $0.matches(name) }) { return true }
        return Self.isRsyncTemporary(name)
    }

    /// Whether a folder (and so everything below it) is never entered.
    package func ignoresFolder(named name: String) -> Bool {
        self.folders.contains { $0.matches(name) }
    }

    private static func isRsyncTemporary(_ name: String) -> Bool {
        let scalars = Array(name.unicodeScalars)
        guard scalars.count > 8, scalars.first == ".", scalars[scalars.count - 7] == "." else { return false }
        return scalars.suffix(6).allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) }
    }
}
