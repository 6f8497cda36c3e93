import ChuteApp
import ChuteCatalog
import ChuteCore
import ChuteRuntime
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The journal remembers handled sources by path and content, and settles what a killed daemon left.
@Suite struct JournalTests {
    private let fingerprint = SourceFingerprint(device: 1, inode: 2, size: 3, modifiedNanoseconds: 4)

    private func job(_ name: String, output: FilePath) throws -> Job {
        try Job.stored(FilePath("/in/\(name).png"), output: output, name: "\(name).jpg")
    }

    @Test(arguments: StoreUnderTest.allCases)
    func aSourceIsHandledOnceItsJobEndsAndUntilItChanges(_ store: StoreUnderTest) async throws {
        let directory = try TemporaryDirectory(prefix: "journal")
        defer { directory.remove() }
        try await store.with(in: directory) { journal in
            try await self.aSourceIsHandledOnce(journal, directory: directory)
        }
    }

    /// The journal keeps it across a reopening.
    @Test func aJournalReopenedKnowsItsSources() async throws {
        let directory = try TemporaryDirectory(prefix: "journal")
        defer { directory.remove() }
        let path = directory.appending("state/journal.sqlite")
        let job = try self.job("a", output: directory.appending("out"))
        try await self.aSourceIsHandledOnce(try SQLiteJobStore(path: path), directory: directory)
        #expect(
            try await SQLiteJobStore(path: path).outcome(of: job.source, fingerprint: self.fingerprint)
                == .completed(output: directory.appending("out/a.jpg"))
        )
    }

    private func aSourceIsHandledOnce(_ journal: any JobStore, directory: TemporaryDirectory) async throws {
        let job = try self.job("a", output: directory.appending("out"))

        try await journal.begin(job)
        #expect(
            try await journal.outcome(of: job.source, fingerprint: self.fingerprint) == nil,
            "running is not handled"
        )
        try await journal.finish(job.id, output: directory.appending("out/a.jpg"), sidecar: nil)
        #expect(
            try await journal.outcome(of: job.source, fingerprint: self.fingerprint)
                == .completed(output: directory.appending("out/a.jpg"))
        )

        var changed = self.fingerprint
        changed.size += 1
        #expect(try await journal.outcome(of: job.source, fingerprint: changed) == nil, "new content at the same path")

        // A failure is recorded with its reason, for a quarantine after a restart.
        let failed = try self.job("b", output: directory.appending("out"))
        let failure = ConversionFailure(.corruptInput, "cut short")
        try await journal.begin(failed)
        try await journal.fail(failed.id, failure: failure, sidecar: nil)
        #expect(try await journal.outcome(of: failed.source, fingerprint: self.fingerprint) == .failed(failure))
    }

    @Test func aSourceMovedBackHasANewChangeTimeAndIsNotKnown() async throws {
        let directory = try TemporaryDirectory(prefix: "journal")
        defer { directory.remove() }
        let journal = try SQLiteJobStore(path: directory.appending("journal.sqlite"))
        var job = try self.job("a", output: directory.appending("out"))
        job.fingerprint.changedNanoseconds = 10
        let failure = ConversionFailure(.corruptInput, "cut short")
        try await journal.begin(job)
        try await journal.fail(job.id, failure: failure)
        #expect(try await journal.outcome(of: job.source, fingerprint: job.fingerprint) == .failed(failure))
        // A rename sets the change time: the same bytes, inode and modification time moved back are a new arrival.
        var movedBack = job.fingerprint
        movedBack.changedNanoseconds = 20
        #expect(try await journal.outcome(of: job.source, fingerprint: movedBack) == nil)
    }

    @Test func aJournalWrittenBeforeChangeTimesIsMigratedAndStillKnowsItsSources() async throws {
        let directory = try TemporaryDirectory(prefix: "journal")
        defer { directory.remove() }
        let path = directory.appending("journal.sqlite")
        // The schema and one failed row as the journal had them before change times were recorded.
        let sql = """
            CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
            INSERT INTO grdb_migrations VALUES ('jobs'), ('failures');
            CREATE TABLE job (id TEXT PRIMARY KEY, source BLOB NOT NULL, device INTEGER NOT NULL,
              inode INTEGER NOT NULL, size INTEGER NOT NULL, modified INTEGER NOT NULL, rule TEXT NOT NULL,
              state TEXT NOT NULL, outputFolder BLOB NOT NULL, outputInode INTEGER, output BLOB, sidecar BLOB,
              updatedAt DOUBLE NOT NULL, failureCode TEXT, failureMessage TEXT);
            CREATE INDEX index_job_on_source ON job(source);
            INSERT INTO job (id, source, device, inode, size, modified, rule, state, outputFolder, updatedAt,
              failureCode, failureMessage) VALUES ('old', CAST('/in/a.png' AS BLOB), 1, 2, 3, 4, 'r', 'failed',
              CAST('/out' AS BLOB), 0, 'corruptInput', 'cut short');
            """
        try CommandLineTool.run(["sqlite3", path.string, sql])
        let journal = try SQLiteJobStore(path: path)
        var fingerprint = self.fingerprint
        fingerprint.changedNanoseconds = 123
        #expect(
            try await journal.outcome(of: "/in/a.png", fingerprint: fingerprint)
                == .failed(ConversionFailure(.corruptInput, "cut short"))
        )
        // New rows record the change time.
        var job = try self.job("b", output: directory.appending("out"))
        job.fingerprint = fingerprint
        try await journal.begin(job)
        try await journal.finish(job.id, output: directory.appending("out/b.jpg"))
        #expect(try await journal.outcome(of: job.source, fingerprint: fingerprint) != nil)
        fingerprint.changedNanoseconds = 124
        #expect(try await journal.outcome(of: job.source, fingerprint: fingerprint) == nil)
    }

    /// Each converted job's estimate and CPU time are kept per rule and engine, the latest `window` of each, oldest
    /// first; jobs that were not measured are left out.
    @Test(arguments: StoreUnderTest.allCases)
    func costSamplesAreTheLatestMeasuredJobsOfEachRuleAndEngine(_ store: StoreUnderTest) async throws {
        let directory = try TemporaryDirectory(prefix: "journal")
        defer { directory.remove() }
        try await store.with(in: directory) { journal in try await self.costSamples(journal, directory: directory) }
    }

    private func costSamples(_ journal: any JobStore, directory: TemporaryDirectory) async throws {
        let out = try directory.makeDirectory("out")
        var sidecar = Sidecar.sample
        sidecar.status = .completed
        sidecar.error = nil
        for (index, engine) in [EngineKind.image, .image, .image, .video].enumerated() {
            let job = try self.job("measured-\(index)", output: out)
            try await journal.begin(job)
            try await journal.committing(
                job.id,
                outputInode: 1,
                parts: nil,
                sidecar: sidecar,
                sidecarFolder: nil,
                writesSidecar: true,
                cost: (engine, CostHistory.Sample(estimate: 0.5, cpuSeconds: Double(index + 1)))
            )
            try await journal.finish(job.id, output: out.appending("measured-\(index).jpg"), sidecar: nil)
        }
        let unmeasured = try self.job("unmeasured", output: out)
        try await journal.begin(unmeasured)
        try await journal.committing(
            unmeasured.id,
            outputInode: 1,
            parts: nil,
            sidecar: sidecar,
            sidecarFolder: nil,
            writesSidecar: true,
            cost: nil
        )
        try await journal.finish(unmeasured.id, output: out.appending("unmeasured.jpg"), sidecar: nil)

        let samples = try await journal.costSamples(window: 2)
        #expect(samples.count == 2)
        #expect(samples[CostHistory.Key(rule: "r", engine: .image)]?.map(\.cpuSeconds) == [2, 3])
        #expect(
            samples[CostHistory.Key(rule: "r", engine: .video)] == [CostHistory.Sample(estimate: 0.5, cpuSeconds: 4)]
        )
    }

    @Test(arguments: StoreUnderTest.allCases)
    func recoveryRerunsUnpublishedJobsAndCompletesRenamedOutputs(_ store: StoreUnderTest) async throws {
        let directory = try TemporaryDirectory(prefix: "journal")
        defer { directory.remove() }
        try await store.with(in: directory) { journal in try await self.recoveryReruns(journal, directory: directory) }
    }

    private func recoveryReruns(_ journal: any JobStore, directory: TemporaryDirectory) async throws {
        let out = try directory.makeDirectory("out")
        var sidecar = Sidecar.sample
        sidecar.status = .completed
        sidecar.error = nil

        // Converting when the daemon died.
        let running = try self.job("running", output: out)
        try await journal.begin(running)
        // Renamed into place, then killed before its sidecar and row were written.
        let renamed = try self.job("renamed", output: out)
        try await journal.begin(renamed)
        try "jpeg".write(toFile: out.appending(".chute-renamed.partial").string, atomically: false, encoding: .utf8)
        let inode = try SourceInspector.status(of: out.appending(".chute-renamed.partial")).fingerprint.inode
        try await journal.committing(
            renamed.id,
            outputInode: inode,
            parts: nil,
            sidecar: sidecar,
            sidecarFolder: nil,
            writesSidecar: true,
            cost: nil
        )
        try FileManager.default.moveItem(
            atPath: out.appending(".chute-renamed.partial").string,
            toPath: out.appending("renamed-1.jpg").string
        )
        // Recorded, but killed before the rename.
        let unrenamed = try self.job("unrenamed", output: out)
        try await journal.begin(unrenamed)
        try "jpeg".write(toFile: out.appending(".chute-unrenamed.partial").string, atomically: false, encoding: .utf8)
        let other = try SourceInspector.status(of: out.appending(".chute-unrenamed.partial")).fingerprint.inode
        try await journal.committing(
            unrenamed.id,
            outputInode: other,
            parts: nil,
            sidecar: sidecar,
            sidecarFolder: nil,
            writesSidecar: true,
            cost: nil
        )
        // Cancelled by a shutdown.
        let cancelled = try self.job("cancelled", output: out)
        try await journal.begin(cancelled)
        try await journal.interrupt(cancelled.id)

        let recovery = try await JobRecovery.run(journal)

        // A store that agents share gives a job shutdown cancelled back to its queue, for any agent to claim.
        #expect(recovery.interrupted == (journal is any SharedQueue ? 1 : 2))
        #expect(recovery.completed == 1)
        #expect(recovery.unpublished == 1)
        // The renamed output, found by its inode under its free name, has its sidecar now.
        let written = try #require(Sidecar.read(at: out.appending("renamed-1.jpg.chute.json")))
        #expect(written.output?.path == out.appending("renamed-1.jpg").string)
        #expect(written.output?.size == 4)
        #expect(try await journal.outcome(of: renamed.source, fingerprint: self.fingerprint) != nil)
        for job in [running, unrenamed, cancelled] {
            #expect(
                try await journal.outcome(of: job.source, fingerprint: self.fingerprint) == nil,
                "\(job.source) runs again"
            )
        }
        #expect(try await JobRecovery.run(journal).completed == 0, "settled once")
    }

    @Test(arguments: StoreUnderTest.allCases)
    func recoveryCompletesAWholeSetAndWithdrawsAPartialOne(_ store: StoreUnderTest) async throws {
        let directory = try TemporaryDirectory(prefix: "journal")
        defer { directory.remove() }
        try await store.with(in: directory) { journal in try await self.recoverySets(journal, directory: directory) }
    }

    private func recoverySets(_ journal: any JobStore, directory: TemporaryDirectory) async throws {
        let out = try directory.makeDirectory("out")
        var sidecar = Sidecar.sample
        sidecar.status = .completed
        sidecar.error = nil
        let labels = ["r1c1", "r1c2", "r2c1", "r2c2"]
        /// Writes the job's parts under temporary names, records it committing, then renames the first `renamed`.
        func commit(_ name: String, renaming renamed: Int) async throws -> Job {
            let job = try self.job(name, output: out)
            try await journal.begin(job)
            var records: [OutputPartRecord] = []
            for label in labels {
                let temporary = out.appending(".chute-\(name).partial-\(label)")
                try "tile".write(toFile: temporary.string, atomically: false, encoding: .utf8)
                records.append(.init(label: label, inode: try SourceInspector.status(of: temporary).fingerprint.inode))
            }
            try await journal.committing(
                job.id,
                outputInode: records[0].inode,
                parts: records,
                sidecar: sidecar,
                sidecarFolder: nil,
                writesSidecar: true,
                cost: nil
            )
            for label in labels.prefix(renamed) {
                try FileManager.default.moveItem(
                    atPath: out.appending(".chute-\(name).partial-\(label)").string,
                    toPath: out.appending("\(name)-\(label).jpg").string
                )
            }
            return job
        }
        let whole = try await commit("whole", renaming: 4)
        let partial = try await commit("partial", renaming: 2)
        let none = try await commit("none", renaming: 0)

        let recovery = try await JobRecovery.run(journal)

        #expect(recovery.completed == 1)
        #expect(recovery.unpublished == 1)
        #expect(recovery.withdrawn == 1)
        let written = try #require(Sidecar.read(at: out.appending("whole.jpg.chute.json")))
        #expect(written.outputs?.map(\.path) == labels.map { out.appending("whole-\($0).jpg").string })
        #expect(written.output?.path == out.appending("whole-r1c1.jpg").string)
        #expect(try await journal.outcome(of: whole.source, fingerprint: self.fingerprint) != nil)
        let left = try FileManager.default.contentsOfDirectory(atPath: out.string).filter { !$0.hasPrefix(".chute-") }
        #expect(!left.contains { $0.hasPrefix("partial-") }, "the partial set is withdrawn: \(left)")
        for job in [partial, none] {
            #expect(try await journal.outcome(of: job.source, fingerprint: self.fingerprint) == nil, "runs again")
        }
    }

    /// A job is in the store from the moment it is accepted: a kill before it starts leaves it queued, with its
    /// origin, and recovery lets its file be taken again; a job withdrawn on request stays cancelled.
    @Test(arguments: StoreUnderTest.allCases)
    func anAcceptedJobIsQueuedUntilItStartsAndRecoveryTakesItAgain(_ store: StoreUnderTest) async throws {
        let directory = try TemporaryDirectory(prefix: "journal")
        defer { directory.remove() }
        try await store.with(in: directory) { journal in try await self.acceptedJobs(journal, directory: directory) }
    }

    private func acceptedJobs(_ journal: any JobStore, directory: TemporaryDirectory) async throws {
        let out = try directory.makeDirectory("out")
        let waiting = try self.job("waiting", output: out)
        var command = try self.job("command", output: out)
        command.origin = .command
        let started = try self.job("started", output: out)
        let withdrawn = try self.job("withdrawn", output: out)
        for job in [waiting, command, started, withdrawn] { try await journal.accept(job) }
        try await journal.begin(started)
        try await journal.cancel(withdrawn.id, reason: ConversionFailure(.cancelled, "on request"), sidecar: nil)

        let unfinished = try await journal.unfinishedJobs()
        #expect(try await journal.entry(waiting.id)?.state == "queued")
        #expect(try await journal.outcome(of: waiting.source, fingerprint: self.fingerprint) == nil)
        guard !(journal is any SharedQueue) else {
            // Queued jobs no agent claimed are the shared queue's, not this agent's to recover: they stay queued.
            #expect(unfinished.map(\.id) == [started.id])
            let recovery = try await JobRecovery.run(journal)
            #expect(recovery.queued == 0 && recovery.interrupted == 1)
            #expect(try await journal.entry(waiting.id)?.state == "queued")
            #expect(try await journal.outcome(of: withdrawn.source, fingerprint: self.fingerprint) == .cancelled)
            return
        }
        #expect(unfinished.map(\.id) == [waiting.id, command.id, started.id])
        #expect(unfinished.map(\.stage) == [.queued, .queued, .converting])
        #expect(unfinished.map(\.origin) == [.watched, .command, .watched])

        let recovery = try await JobRecovery.run(journal)
        #expect(recovery.queued == 2)
        #expect(recovery.interrupted == 1)
        #expect(try await journal.unfinishedJobs().isEmpty)
        #expect(try await journal.entry(waiting.id) == nil, "its file is taken again as a new one")
        #expect(try await journal.outcome(of: withdrawn.source, fingerprint: self.fingerprint) == .cancelled)
    }

    /// Shutdown cancels the task of the job whose interruption it records: the write must still happen.
    @Test(arguments: StoreUnderTest.allCases)
    func aCancelledTaskStillWritesItsRecord(_ store: StoreUnderTest) async throws {
        let directory = try TemporaryDirectory(prefix: "journal")
        defer { directory.remove() }
        let job = try self.job("cancelled", output: try directory.makeDirectory("out"))
        try await store.with(in: directory) { journal in
            try await journal.begin(job)
            let interrupting = Task {
                while !Task.isCancelled { await Task.yield() }
                try await journal.interrupt(job.id)
            }
            interrupting.cancel()
            try await interrupting.value
            // The row itself says so: recovery would count a row left `running` as interrupted too. A store that agents
            // share has it queued again, for any agent.
            let shared = journal is any SharedQueue
            #expect(try await journal.entry(job.id)?.state == (shared ? "queued" : "interrupted"))
            #expect(try await JobRecovery.run(journal).interrupted == (shared ? 0 : 1))
        }
    }
}
