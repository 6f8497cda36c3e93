import ChuteApp
import ChuteCatalog
import ChuteCore
import ChuteRuntime
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// A group job (`groupBy: folder`) in the journal and in the intake's ledger: the folder is taken once, with the files
/// it held, and a file that arrives later is reported once.
@Suite struct GroupTests {
    private static let folderFingerprint = SourceFingerprint(device: 7, inode: 70, size: 30, modifiedNanoseconds: 4)

    private static func members() -> [GroupMember] {
        ["1.pdf", "2.pdf", "10.pdf"].enumerated().map { index, name in
            GroupMember(
                path: FilePath("/in/scans/\(name)"),
                fingerprint: SourceFingerprint(device: 7, inode: UInt64(100 + index), size: 10, modifiedNanoseconds: 4),
                sniffed: .pdf
            )
        }
    }

    private static func job(output: FilePath) throws -> Job {
        let rule = Rule(
            name: "merge",
            match: [try GlobPattern("*.pdf")],
            to: try #require(Engines.registry.format(named: "pdf")),
            output: output,
            grouping: .folder
        )
        var job = Job(
            source: FilePath("/in/scans"),
            root: "/in",
            rule: rule,
            plan: OutputPlan(directory: output, name: "scans.pdf"),
            fingerprint: Self.folderFingerprint,
            sniffed: .pdf
        )
        job.members = Self.members()
        return job
    }

    @Test func theJournalKnowsAFoldersGroupWithItsFilesAcrossARestart() async throws {
        let directory = try TemporaryDirectory(prefix: "journal")
        defer { directory.remove() }
        let path = directory.appending("state/journal.sqlite")
        let journal = try SQLiteJobStore(path: path)
        let job = try Self.job(output: directory.appending("out"))

        try await journal.begin(job)
        #expect(
            try await journal.groupOutcome(of: "/in/scans", device: 7, inode: 70, rule: "merge") == nil,
            "a running group is not handled: a restart runs it again"
        )
        try await journal.finish(job.id, output: directory.appending("out/scans.pdf"))
        let record = try #require(
            try await SQLiteJobStore(path: path).groupOutcome(of: "/in/scans", device: 7, inode: 70, rule: "merge")
        )
        #expect(record.jobID == job.id)
        #expect(record.outcome == .completed(output: directory.appending("out/scans.pdf")))
        #expect(record.members == Self.members())
        // Another folder of the same name (a new inode), or another rule, is another group.
        #expect(try await journal.groupOutcome(of: "/in/scans", device: 7, inode: 71, rule: "merge") == nil)
        #expect(try await journal.groupOutcome(of: "/in/scans", device: 7, inode: 70, rule: "other") == nil)
    }

    @Test func aFileNotInTheGroupsJobIsReportedOncePerVersion() {
        var ledger = GroupLedger()
        let key = GroupKey(folder: "/in/scans", device: 7, inode: 70, rule: "merge")
        let late = FilePath("/in/scans/3.pdf")
        let version = SourceFingerprint(device: 7, inode: 200, size: 5, modifiedNanoseconds: 9)
        let beforeTaking = ledger.reportsLate(late, fingerprint: version, in: key)
        #expect(!beforeTaking, "no group taken yet")

        ledger.record(key, jobID: "job-1", members: Self.members())
        #expect(ledger.job(of: key)?.jobID == "job-1")
        for member in Self.members() {
            let reported = ledger.reportsLate(member.path, fingerprint: member.fingerprint, in: key)
            #expect(!reported)
        }
        let first = ledger.reportsLate(late, fingerprint: version, in: key)
        let again = ledger.reportsLate(late, fingerprint: version, in: key)
        #expect(first)
        #expect(!again, "reported once")
        var rewritten = version
        rewritten.size += 1
        let newVersion = ledger.reportsLate(late, fingerprint: rewritten, in: key)
        #expect(newVersion, "a new version is reported again")
        // A member written to after the group was taken is late in its new version too.
        var member = Self.members()[0]
        member.fingerprint.size += 1
        let changedMember = ledger.reportsLate(member.path, fingerprint: member.fingerprint, in: key)
        #expect(changedMember)

        ledger.release(key)
        #expect(ledger.job(of: key) == nil)
    }
}
