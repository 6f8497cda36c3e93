import ChuteCore
import Foundation
import SystemPackage

/// A file that a rule took, waiting for or going through conversion.
package struct Job: Sendable, Identifiable {
    /// A unique id, also in the sidecar and every log record of the job.
    package var id: String
    /// The source file.
    package var source: FilePath
    /// The watched folder it was found in.
    package var root: FilePath
    /// The rule that took it.
    package var rule: Rule
    /// Where the output goes.
    package var plan: OutputPlan
    /// The source as it was when the job was made.
    package var fingerprint: SourceFingerprint
    /// The type recognised from its first bytes.
    package var sniffed: MediaType?
    /// The marker file whose presence released the source (its watch's `doneSuffix`), which goes with the source
    /// when the source is moved or deleted.
    package var doneMarker: FilePath?
    /// Whether the source may be a hard link (its watch's `allowHardLinks`).
    package var allowsHardLinks: Bool
    /// The threads its codecs get, set by the scheduler when it starts the job (``JobSchedule``).
    package var threads: Int?
    /// The cost model's estimate from its headers (``JobDemand/cost``, before ``CostHistory`` refines it), set when it
    /// is queued: the journal keeps it beside the CPU time the job took, for the estimates of later jobs.
    package var estimatedCost: Double?
    /// The files of a group job (a rule's `groupBy: folder`), in the order they are joined; empty for a job of one
    /// file. A group's `source` is its folder, and its `fingerprint` the folder's device and inode with the
    /// members' total size and newest modification time.
    package var members: [GroupMember] = []
    /// Which try of its file this job is: 1, or one more than the postponements in a row before it (a full disk);
    /// at `retryLimit` a transient failure is final.
    package var attempt = 1
    /// Where it came from, which decides what becomes of its source once it ends.
    package var origin = JobOrigin.watched
    /// In a store that agents share, the agent and lease that hold it: its temporary files are named after them, so
    /// that another agent's run of the same job never meets them, and its sidecar names the agent; `nil` otherwise.
    package var claim: JobClaim?
    /// For a job of a file this agent cannot see (found by another agent of a shared store): the copy fetched from
    /// that agent, which also takes the outputs back; `nil` otherwise.
    package var handoff: Handoff?

    /// Where the source is read: the source, or its copy fetched from the agent that found it (``handoff``).
    package var readableSource: FilePath { self.handoff?.copy ?? self.source }
    /// The folder the source is read beneath: its watched folder, or the folder of its fetched copy.
    package var readableRoot: FilePath { self.handoff?.folder ?? self.root }

    /// Whether the job joins the files of a group.
    package var isGroup: Bool { !self.members.isEmpty }

    package init(
        id: String = UUID().uuidString.lowercased(),
        source: FilePath,
        root: FilePath,
        rule: Rule,
        plan: OutputPlan,
        fingerprint: SourceFingerprint,
        sniffed: MediaType?,
        doneMarker: FilePath? = nil,
        allowsHardLinks: Bool = false
    ) {
        self.id = id
        self.source = source
        self.root = root
        self.rule = rule
        self.plan = plan
        self.fingerprint = fingerprint
        self.sniffed = sniffed
        self.doneMarker = doneMarker
        self.allowsHardLinks = allowsHardLinks
    }

    /// The engine lane the job runs in: the one that writes the rule's format from the sniffed content (a video to
    /// `jpg` runs in the video lane, a picture in the image lane).
    package var engine: EngineKind { self.rule.to.engine(reading: self.sniffed) }
}

/// The claim an agent holds on a job of a store that agents share (``SharedQueue``).
package struct JobClaim: Sendable, Equatable, CustomStringConvertible {
    /// The agent's name.
    package var agent: String
    /// The lease's token.
    package var token: Int64

    package init(agent: String, token: Int64) {
        self.agent = agent
        self.token = token
    }

    /// `north-17`.
    package var description: String { "\(self.agent)-\(self.token)" }
}

/// One file of a group job, as it was when the group was taken.
package struct GroupMember: Sendable, Codable, Equatable {
    package var path: FilePath
    package var fingerprint: SourceFingerprint
    /// The type recognised from its first bytes.
    package var sniffed: MediaType?

    package init(path: FilePath, fingerprint: SourceFingerprint, sniffed: MediaType?) {
        self.path = path
        self.fingerprint = fingerprint
        self.sniffed = sniffed
    }
}

/// What identifies one version of a file: its inode, size, modification time and change time. New content at the
/// same path gives a new fingerprint, so it is processed again; so does a file moved back into a watched folder,
/// since a rename sets its change time (a file brought back from quarantine is a new arrival).
package struct SourceFingerprint: Sendable, Hashable, Codable {
    package var device: UInt64
    package var inode: UInt64
    package var size: Int64
    /// Modification time in nanoseconds since the epoch.
    package var modifiedNanoseconds: Int64
    /// Change time (`st_ctime`: content, rename, link count or permissions) in nanoseconds since the epoch; a
    /// writer cannot set it back, unlike the modification time.
    package var changedNanoseconds: Int64

    package init(device: UInt64, inode: UInt64, size: Int64, modifiedNanoseconds: Int64, changedNanoseconds: Int64 = 0)
    {
        self.device = device
        self.inode = inode
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
        self.changedNanoseconds = changedNanoseconds
    }

    /// The modification time as a `Date`.
    package var modified: Date {
        Date(timeIntervalSince1970: Double(self.modifiedNanoseconds) / 1_000_000_000)
    }
}
