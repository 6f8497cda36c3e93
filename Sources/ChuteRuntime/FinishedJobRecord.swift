import ChuteCore
import SystemPackage

/// A finished job's record as a store's ``JobStore/pruneHistory(before:)`` weighs it: a record may go only once it no
/// longer decides what becomes of a file on disk.
package struct FinishedJobRecord: Sendable {
    package var id: String
    package var source: FilePath
    package var fingerprint: SourceFingerprint
    /// Whether the source's device and inode must match too (the journal's records of one machine); a store shared by
    /// several machines names a file by its path, size and modification time only.
    package var matchesInode: Bool
    /// Whether `changed` was recorded (journal rows written before it match on the rest).
    package var hasChangeTime: Bool
    /// `retried` records are history only: the intake never looks them up.
    package var isHistoryOnly: Bool
    package var isGroup: Bool

    package init(
        id: String,
        source: FilePath,
        fingerprint: SourceFingerprint,
        matchesInode: Bool,
        hasChangeTime: Bool,
        isHistoryOnly: Bool,
        isGroup: Bool
    ) {
        self.id = id
        self.source = source
        self.fingerprint = fingerprint
        self.matchesInode = matchesInode
        self.hasChangeTime = hasChangeTime
        self.isHistoryOnly = isHistoryOnly
        self.isGroup = isGroup
    }

    /// Whether the record still decides what becomes of a file on disk: its source is there, unchanged (a group's
    /// folder is there). It reads the file system: call it off the cooperative pool (``Blocking``).
    package func guardsItsSource() -> Bool {
        guard !self.isHistoryOnly, let status = try? SourceInspector.status(of: self.source) else { return false }
        let now = status.fingerprint
        let sameFile =
            !self.matchesInode || (now.device == self.fingerprint.device && now.inode == self.fingerprint.inode)
        if self.isGroup { return status.isDirectory && sameFile }
        return status.isRegularFile && sameFile && now.size == self.fingerprint.size
            && now.modifiedNanoseconds == self.fingerprint.modifiedNanoseconds
            && (!self.matchesInode || !self.hasChangeTime
                || now.changedNanoseconds == self.fingerprint.changedNanoseconds)
    }

    /// The ids of `records` that no longer guard their source, found off the cooperative pool.
    package static func prunable(_ records: [Self]) async -> [String] {
        await Blocking.run { records.filter { !$0.guardsItsSource() }.map(\.id) }
    }
}
