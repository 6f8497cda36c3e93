import ChuteCore
import ChuteRuntime
import ChuteTestSupport
import Foundation
import Glibc
import SystemPackage
import Testing

/// Outputs, sidecars and created folders get the rule's owner, group and mode, or the target folder's. Giving files
/// away needs root, which CI is.
@Suite(.enabled(if: geteuid() == 0, "changing owners needs root"))
struct OwnershipTests {
    private struct Status: Equatable {
        var owner: UInt32
        var group: UInt32
        var mode: UInt32
    }

    private func status(_ path: FilePath) throws -> Status {
        var info = stat()
        guard stat(path.string, &info) == 0 else { throw Errno(rawValue: errno) }
        return Status(owner: info.st_uid, group: info.st_gid, mode: UInt32(info.st_mode) & 0o7777)
    }

    /// A folder owned by 4321:8765, as a NAS share belongs to its user and group, with `mode`.
    private func share(in directory: TemporaryDirectory, mode: mode_t) throws -> FilePath {
        let share = try directory.makeDirectory("share")
        guard chown(share.string, 4321, 8765) == 0, chmod(share.string, mode) == 0 else {
            throw Errno(rawValue: errno)
        }
        return share
    }

    @Test func anOutputInheritsTheFoldersOwnerGroupAndReadWriteBits() throws {
        let directory = try TemporaryDirectory(prefix: "own")
        defer { directory.remove() }
        let share = try self.share(in: directory, mode: 0o750)
        let temporary = share.appending(".chute-x.partial")
        try "output".write(toFile: temporary.string, atomically: false, encoding: .utf8)

        #expect(OutputCommitter.applyOwnership(OutputOwnership(), to: temporary) == nil)
        let (path, _) = try OutputCommitter.commit(
            temporary,
            as: OutputPlan(directory: share, name: "photo.jpg"),
            policy: .rename
        )
        try OutputCommitter.writeSidecar(
            Sidecar.sample,
            at: OutputCommitter.sidecarPath(for: path)
        )

        #expect(try self.status(path) == Status(owner: 4321, group: 8765, mode: 0o640))
        #expect(
            try self.status(OutputCommitter.sidecarPath(for: path)) == Status(owner: 4321, group: 8765, mode: 0o640)
        )
    }

    @Test func theRulesOwnerGroupAndModeWin() throws {
        let directory = try TemporaryDirectory(prefix: "own")
        defer { directory.remove() }
        let share = try self.share(in: directory, mode: 0o777)
        let file = share.appending(".chute-y.partial")
        try "output".write(toFile: file.string, atomically: false, encoding: .utf8)

        let ownership = OutputOwnership(owner: 1026, group: 100, mode: 0o604)
        #expect(OutputCommitter.applyOwnership(ownership, to: file) == nil)

        #expect(try self.status(file) == Status(owner: 1026, group: 100, mode: 0o604))
    }

    @Test func createdFoldersInheritFromTheirParentOrFollowTheRulesMode() throws {
        let directory = try TemporaryDirectory(prefix: "own")
        defer { directory.remove() }
        // A shared folder whose set-group-ID bit makes new files belong to its group.
        let share = try self.share(in: directory, mode: 0o2775)

        try OutputCommitter.makeDirectory(share.appending("2026/trip"))
        try OutputCommitter.makeDirectory(share.appending("private/x"), ownership: OutputOwnership(mode: 0o640))

        for folder in ["2026", "2026/trip"] {
            #expect(try self.status(share.appending(folder)) == Status(owner: 4321, group: 8765, mode: 0o2775))
        }
        // Search bits wherever the rule's mode can read.
        #expect(try self.status(share.appending("private")).mode == 0o750)
        #expect(try self.status(share.appending("private/x")).mode == 0o750)
    }
}
