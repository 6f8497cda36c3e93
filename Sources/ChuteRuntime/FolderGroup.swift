import ChuteCore
import Foundation
import SystemPackage

/// One group: a folder below a watched folder, as one rule with `groupBy: folder` takes it. The folder is known by
/// its device and inode, so that a folder deleted and dropped again under the same name is a new group.
package struct GroupKey: Sendable, Hashable {
    package var folder: FilePath
    package var device: UInt64
    package var inode: UInt64
    package var rule: String

    package init(folder: FilePath, device: UInt64, inode: UInt64, rule: String) {
        self.folder = folder
        self.device = device
        self.inode = inode
        self.rule = rule
    }

    /// The key of a group job, whose source is the folder and whose fingerprint carries the folder's device and
    /// inode.
    package init(of job: Job) {
        self.init(
            folder: job.source,
            device: job.fingerprint.device,
            inode: job.fingerprint.inode,
            rule: job.rule.name
        )
    }
}

/// The groups the intake has taken, so that a file that arrives in one afterwards starts no job of its own and is
/// reported once instead.
///
/// Pure state: the intake fills it when it takes a group, and from the journal's record of a group after a restart.
package struct GroupLedger: Sendable {
    /// A group that has a job, with the files the job took.
    package struct Taken: Sendable, Equatable {
        package var jobID: String
        package var members: [FilePath: SourceFingerprint]
    }

    private var taken: [GroupKey: Taken] = [:]
    /// Files reported as late, in the version reported, so that each is reported once.
    private var reported: [FilePath: SourceFingerprint] = [:]

    package init() {}

    /// The job of a group, if it was taken.
    package func job(of key: GroupKey) -> Taken? {
        self.taken[key]
    }

    /// Records that `jobID` took the group `key` with `members`.
    package mutating func record(_ key: GroupKey, jobID: String, members: [GroupMember]) {
        self.taken[key] = Taken(
            jobID: jobID,
            members: Dictionary(members.map { ($0.path, $0.fingerprint) }, uniquingKeysWith: { first, _ in first })
        )
    }

    /// Forgets a group whose job will not run now (postponed, cancelled by shutdown, vanished), so that the folder
    /// is taken anew.
    package mutating func release(_ key: GroupKey) {
        self.taken[key] = nil
    }

    /// Whether `path` in this version is a file of the taken group `key` that its job did not take and that was not
    /// reported yet; it then counts as reported.
    package mutating func reportsLate(_ path: FilePath, fingerprint: SourceFingerprint, in key: GroupKey) -> Bool {
        guard let taken = self.taken[key], taken.members[path] != fingerprint, self.reported[path] != fingerprint else {
            return false
        }
        self.reported[path] = fingerprint
        return true
    }
}

/// Finds the files of a group folder that rules with `groupBy: folder` take.
package enum GroupListing {
    /// One file below a group folder that a rule with `groupBy` takes.
    package struct Candidate: Sendable {
        package var path: FilePath
        package var status: SourceInspector.Status
        package var sniffed: MediaType?
        /// The rule, with its format resolved for this file.
        package var rule: Rule
    }

    /// The most files one group may hold: a folder with more is not looked through further.
    package static let fileLimit = 10_000

    /// Lists the regular files below `folder` at any depth, without following symbolic links (nor a folder swapped
    /// for one), and keeps those for which `matcher`'s first matching rule is a rule with `groupBy`. Names that are
    /// ignored, markers and files in ignored folders are left out as the rules say, and so are hard links unless
    /// `allowsHardLinks` (the watch's `allowHardLinks`), as for single files.
    ///
    /// - Important: reads the disk; run it through ``Blocking``.
    package static func candidates(
        in folder: FilePath,
        root: FilePath,
        matcher: RuleMatcher,
        allowsHardLinks: Bool,
        now: Date
    ) -> [Candidate] {
        var candidates: [Candidate] = []
        var pending = [folder]
        var seen = 0
        while let directory = pending.popLast(), seen < Self.fileLimit {
            guard let names = try? SystemCall.entries(of: directory) else { continue }
            for name in names {
                let path = directory.appending(name)
                guard let status = try? SourceInspector.status(of: path, beneath: root) else { continue }
                if status.isDirectory {
                    pending.append(path)
                    continue
                }
                guard status.isRegularFile, status.linkCount <= 1 || allowsHardLinks else { continue }
                seen += 1
                let sniffed = SourceInspector.sniff(path, beneath: root)
                let facts = FileFacts(
                    size: status.fingerprint.size,
                    modified: status.fingerprint.modified,
                    sniffed: sniffed
                )
                let decision = matcher.decide(path: path, root: root, facts: facts, now: now, date: now)
                if case .matched(let rule, _, _) = decision, rule.grouping == .folder {
                    candidates.append(Candidate(path: path, status: status, sniffed: sniffed, rule: rule))
                }
            }
        }
        return candidates
    }

    /// Orders a group's files as they are joined: by their path below the folder, in natural order
    /// (``NaturalOrder``), so that `2.pdf` comes before `10.pdf`.
    package static func ordered(_ candidates: [Candidate], below folder: FilePath) -> [Candidate] {
        func components(_ path: FilePath) -> [String] {
            var relative = path
            _ = relative.removePrefix(folder)
            // Escaped rather than repaired, so that names differing only in bytes that are not UTF-8 keep an order.
            return relative.components.map { FilePath(root: nil, [$0]).readableString }
        }
        return candidates.sorted {
            NaturalOrder.areInIncreasingOrder(components: components($0.path), components($1.path))
        }
    }
}
