/// Who owns the files and folders Chute writes into a target folder, and their permissions.
///
/// Each part a rule leaves unset comes from the folder the file is written into: its owner, its group, and its
/// permission bits without the execute bits (a folder `rwxrwxr-x` gives files `rw-rw-r--`, a folder `rwx------`
/// gives `rw-------`). A NAS share's users expect new files to belong to the share's user and group, not to the
/// daemon's user, and a share that others may write into to stay so.
package struct OutputOwnership: Sendable, Equatable {
    /// `owner` (user name or uid, default: the target folder's owner). Needs a daemon running as root.
    package var owner: UInt32?
    /// `group` (group name or gid, default: the target folder's group).
    package var group: UInt32?
    /// `mode` (octal permissions such as `"0640"`, default: the target folder's, without execute bits).
    package var mode: UInt32?

    package init(owner: UInt32? = nil, group: UInt32? = nil, mode: UInt32? = nil) {
        self.owner = owner
        self.group = group
        self.mode = mode
    }

    /// Whether the rule sets an owner or a group itself, so that failing to apply it is worth a warning.
    package var setsAccount: Bool {
        self.owner != nil || self.group != nil
    }

    /// The permissions of a file written into a folder with permissions `folderMode`: `mode`, or the folder's read
    /// and write bits. A sticky folder (`/tmp` and its like) is writable by all so that anyone may add files, not so
    /// that anyone may change the files of others: there the files get no write bit for others.
    package func fileMode(inFolderWithMode folderMode: UInt32) -> UInt32 {
        let isSticky = folderMode & 0o1000 != 0
        return self.mode ?? folderMode & (isSticky ? 0o664 : 0o666)
    }

    /// The permissions of a folder created in a folder with permissions `parentMode`: `mode` with a search bit wherever
    /// it has a read bit, or the parent's permissions (including a shared folder's set-group-ID bit).
    package func folderMode(inFolderWithMode parentMode: UInt32) -> UInt32 {
        guard let mode = self.mode else { return parentMode & 0o7777 }
        return mode | (mode & 0o444) >> 2
    }
}
