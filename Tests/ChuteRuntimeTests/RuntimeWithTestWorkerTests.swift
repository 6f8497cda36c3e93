import ChuteCatalog
import ChuteCore
import ChuteRuntime
import ChuteTestSupport
import Foundation
import Logging
import ServiceLifecycle
import SystemPackage
import Testing

/// The job runtime end to end inside the test process: jobs submitted with tickets, recorded in a real store, run by
/// lanes on real worker processes of `chute-test-worker` (the real protocol, no C library), committed with their
/// sidecars. Each test takes well under a second of work, where a daemon test takes several.
@Suite(.timeLimit(.minutes(1)))
struct RuntimeWithTestWorkerTests {
    @Test func twentyJobsRunToTheirTicketsOutputsSidecarsAndRecords() async throws {
        let rig = try TestWorkerRuntime()
        defer { rig.directory.remove() }
        try await rig.running { _ in
            var tickets: [(Job, JobTicket)] = []
            for index in 0..<20 {
                let job = try rig.job("photo\(index)", content: "picture \(index)")
                tickets.append((job, try #require(await rig.submitter.submit(job))))
            }
            for (job, ticket) in tickets {
                let outcome = try await ticket.outcome()
                #expect(outcome == .completed(job.plan.path), "\(job.source)")
                #expect(try await rig.store.entry(job.id)?.state == "completed")
            }
        }
        let outputs = rig.directory.files(below: "out").filter { !$0.hasSuffix(Sidecar.fileSuffix) }
        #expect(outputs.count == 20)
        let sidecar = try #require(
            FileManager.default.contents(atPath: rig.directory.appending("out/photo7.png.chute.json").string)
        )
        let decoded = try JSONDecoder().decode(Sidecar.self, from: sidecar)
        #expect(decoded.status == .completed && decoded.libraries == ["test": "1"] && decoded.output?.size == 9)
        #expect(rig.tickets.count == 0)
    }

    @Test func aFailureAndACrashEndTheirTicketsAndTheNextJobStillRuns() async throws {
        let rig = try TestWorkerRuntime()
        defer { rig.directory.remove() }
        try await rig.running { _ in
            let failing = try rig.job("bad", content: "fail corruptInput the test says so")
            let crashing = try rig.job("crash", content: "crash")
            let fine = try rig.job("fine", content: "ok")
            let failed = try #require(await rig.submitter.submit(failing))
            #expect(try await failed.outcome() == .failed(ConversionFailure(.corruptInput, "the test says so")))
            let crashed = try #require(await rig.submitter.submit(crashing))
            guard case .failed(let failure) = try await crashed.outcome() else {
                Issue.record("the crash did not fail its job")
                return
            }
            #expect(failure.code == .workerCrashed, "\(failure)")
            let after = try #require(await rig.submitter.submit(fine))
            #expect(try await after.outcome() == .completed(fine.plan.path))
            #expect(try await rig.store.entry(failing.id)?.failureCode == "corruptInput")
        }
        // A failed job's sidecar says why; nothing of it is in the output folder but the sidecar.
        let files = rig.directory.files(below: "out").sorted()
        #expect(files == ["bad.png.chute.json", "crash.png.chute.json", "fine.png", "fine.png.chute.json"], "\(files)")
    }

    /// A full target postpones a watched file's job, which the intake tries again later; an upload's or a command's
    /// job, which nothing would find again, fails with the reason and the sizes.
    @Test func aTransientFailurePostponesOnlyAWatchedFile() async throws {
        let rig = try TestWorkerRuntime()
        defer { rig.directory.remove() }
        try await rig.running { _ in
            let watched = try rig.job("watched", content: "fail diskFull no room left")
            var uploaded = try rig.job("uploaded", content: "fail diskFull no room left")
            uploaded.origin = .upload
            let postponed = try await #require(await rig.submitter.submit(watched)).outcome()
            #expect(postponed == .postponed(ConversionFailure(.diskFull, "no room left")))
            #expect(try await rig.store.entry(watched.id) == nil, "tried again as a new job")
            guard case .failed(let failure) = try await #require(await rig.submitter.submit(uploaded)).outcome() else {
                Issue.record("the upload's job was not failed")
                return
            }
            #expect(failure.code == .diskFull)
            #expect(failure.message.hasPrefix("no room left: "), "\(failure.message)")
            #expect(try await rig.store.entry(uploaded.id)?.state == "failed")
        }
    }

    @Test func aRunningJobCancelledOnRequestEndsItsTicketAndLeavesNoOutput() async throws {
        let rig = try TestWorkerRuntime()
        defer { rig.directory.remove() }
        try await rig.running { _ in
            let slow = try rig.job("slow", content: "slow 100")
            let ticket = try #require(await rig.submitter.submit(slow))
            try await waitUntil("the slow job to run") {
                try await rig.store.entry(slow.id)?.state == "running" ? true : nil
            }
            // The lane registers the conversion once its worker has it.
            try await waitUntil("the conversion to be cancellable") { rig.cancellations.cancel(slow.id) ? true : nil }
            #expect(try await ticket.outcome() == .cancelledOnRequest)
            #expect(try await rig.store.entry(slow.id)?.state == "cancelled")
        }
        #expect(rig.directory.files(below: "out") == ["slow.png.chute.json"])
    }
}
