import CChuteLinux
import ChuteCore
import SystemPackage

/// The file system a folder lives on, by the magic number `statfs` reports, and whether inotify sees every change made
/// to it.
///
/// inotify reports changes made through this machine's kernel. On a network file system a file that another machine
/// writes raises no event, and a FUSE file system (Unraid's user shares, mergerfs, sshfs, rclone) may change beneath
/// its mount without one. Folders on those are polled (``WatchSpec/poll``). The magic numbers are the kernel's, from
/// `linux/magic.h` and the file systems' own headers.
package struct FileSystemType: Sendable, Equatable, CustomStringConvertible {
    /// The `f_type` that `statfs` reports.
    package var magic: UInt32

    package init(magic: UInt32) {
        self.magic = magic
    }

    /// File systems whose content can change without an inotify event here, by name.
    static let polled: [UInt32: String] = [
        0x6969: "nfs",
        0x517B: "smb",
        0xFF53_4D42: "cifs",
        0xFE53_4D42: "smb2",
        0x6573_5546: "fuse",
        0x00C3_6400: "ceph",
        0x0102_1997: "9p",
        0x6B41_4653: "afs",
        0x5346_414F: "afs",
        0x7375_7245: "coda",
        0x564C: "ncp",
        0x0BD0_0BD0: "lustre",
        0x0116_1970: "gfs2",
        0x7461_636F: "ocfs2",
    ]

    /// Common local file systems, by name, for the log.
    static let local: [UInt32: String] = [
        0xEF53: "ext4",
        0x5846_5342: "xfs",
        0x9123_683E: "btrfs",
        0x2FC1_2FC1: "zfs",
        0x0102_1994: "tmpfs",
        0x794C_7630: "overlayfs",
        0xF2F5_2010: "f2fs",
        0x4D44: "vfat",
        0x2011_BAB0: "exfat",
        0x5346_544E: "ntfs",
    ]

    /// Whether files can change without inotify seeing it, so that a folder here is polled under `poll: auto`.
    package var needsPolling: Bool {
        Self.polled[self.magic] != nil
    }

    /// The file system's name (`nfs`, `ext4`), or its magic number in hexadecimal when it is not one of the known.
    package var description: String {
        Self.polled[self.magic] ?? Self.local[self.magic] ?? "0x" + String(self.magic, radix: 16)
    }

    /// The file system of the folder at `path`. The corresponding C function is `statfs`.
    ///
    /// - Throws: ``WatchError`` with code `listFolder` when `statfs` fails (the folder does not exist, or a network
    ///   mount does not answer).
    package static func of(_ path: FilePath) throws(WatchError) -> FileSystemType {
        var magic: UInt32 = 0
        do throws(SystemCallError) {
            try SystemCall.check("statfs") { path.withPlatformString { chute_file_system_type($0, &magic) } }
        } catch {
            throw WatchError(.listFolder, error, path: path)
        }
        return FileSystemType(magic: magic)
    }
}
