import ChuteTestSupport
import ChuteWatch
import SystemPackage
import Testing

/// The `statfs` magic numbers that make `poll: auto` poll a folder, and the ones that do not.
@Suite struct FileSystemTypeTests {
    @Test(
        arguments: [
            (0x6969, "nfs"), (0x517B, "smb"), (0xFF53_4D42, "cifs"), (0xFE53_4D42, "smb2"), (0x6573_5546, "fuse"),
            (0x00C3_6400, "ceph"), (0x0102_1997, "9p"), (0x6B41_4653, "afs"), (0x0BD0_0BD0, "lustre"),
        ] as [(UInt32, String)]
    )
    func networkAndFUSEFileSystemsArePolled(magic: UInt32, name: String) {
        let type = FileSystemType(magic: magic)
        #expect(type.needsPolling)
        #expect(type.description == name)
    }

    @Test(
        arguments: [
            (0xEF53, "ext4"), (0x5846_5342, "xfs"), (0x9123_683E, "btrfs"), (0x2FC1_2FC1, "zfs"),
            (0x0102_1994, "tmpfs"), (0x794C_7630, "overlayfs"),
        ] as [(UInt32, String)]
    )
    func localFileSystemsAreWatchedWithInotify(magic: UInt32, name: String) {
        let type = FileSystemType(magic: magic)
        #expect(!type.needsPolling)
        #expect(type.description == name)
    }

    @Test func anUnknownFileSystemIsNamedByItsNumberAndNotPolled() {
        let type = FileSystemType(magic: 0x1234_ABCD)
        #expect(!type.needsPolling)
        #expect(type.description == "0x1234abcd")
    }

    @Test func statfsReadsTheTypeOfARealFolder() throws {
        let directory = try TemporaryDirectory(prefix: "statfs")
        defer { directory.remove() }
        let type = try FileSystemType.of(directory.path)
        // The test folder is on a local disk: whatever its type, it is a known local one or at least not polled.
        #expect(!type.needsPolling, "\(type)")
        #expect(throws: WatchError.self) { try FileSystemType.of(directory.appending("missing")) }
    }
}
