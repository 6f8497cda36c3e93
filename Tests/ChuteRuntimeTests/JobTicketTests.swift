import ChuteCatalog
import ChuteCore
import ChuteRuntime
import ChuteTestSupport
import Logging
import SystemPackage
import Testing

/// Tickets keep a job's outcome for whoever awaits it, early or late; the submitter records each job before the
/// queue has it and leaves nothing behind for a job the queue refuses.
@Suite(.timeLimit(.minutes(1)))
struct JobTicketTests {
    @Test func anOutcomeIsKeptForAWaiterThatComesLate() async throws {
        let tickets = JobTickets()
        let ticket = tickets.issue(for: "a")
        #expect(tickets.ticket(for: "a") === ticket)
        tickets.end("a", with: .failed(ConversionFailure(.corruptInput, "cut short")))
        #expect(tickets.count == 0, "an ended job leaves the register")
        #expect(try await ticket.outcome() == .failed(ConversionFailure(.corruptInput, "cut short")))
        #expect(try await ticket.outcome() == ticket.ended)
    }

    @Test func everyWaiterHearsTheOutcome() async throws {
        let tickets = JobTickets()
        let ticket = tickets.issue(for: "b")
        let waiters = (0..<3).map { _ in Task { try await ticket.outcome() } }
        tickets.end("b", with: .completed("/out/b.jpg"))
        tickets.end("b", with: .cancelled)
        for waiter in waiters {
            #expect(try await waiter.value == .completed("/out/b.jpg"))
        }
    }

    @Test func aCancelledWaitEndsWithoutTheOutcomeAndTheJobGoesOn() async throws {
        let tickets = JobTickets()
        let ticket = tickets.issue(for: "c")
        let waiting = Task { try await ticket.outcome() }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        tickets.end("c", with: .vanished)
        #expect(try await ticket.outcome() == .vanished)
    }

    @Test func theSubmitterRecordsAJobBeforeTheQueueHasItAndForgetsARefusedOne() async throws {
        let directory = try TemporaryDirectory(prefix: "submit")
        defer { directory.remove() }
        let store = try SQLiteJobStore(path: directory.appending("journal.sqlite"))
        let queue = JobQueue()
        let tickets = JobTickets()
        let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let submitter = JobSubmitter(store: store, queue: queue, tickets: tickets, logger: logger)
        let rule = Rule(
            name: "r",
            match: [try GlobPattern("*")],
            to: try #require(Engines.registry.format(named: "jpg")),
            output: directory.appending("out")
        )
        func job() -> Job {
            Job(
                source: directory.appending("in/a.png"),
                root: directory.appending("in"),
                rule: rule,
                plan: OutputPlan(directory: directory.appending("out"), name: "a.jpg"),
                fingerprint: SourceFingerprint(device: 1, inode: 2, size: 3, modifiedNanoseconds: 4),
                sniffed: .png
            )
        }
        let first = job()
        let ticket = try #require(await submitter.submit(first))
        #expect(ticket.jobID == first.id)
        #expect(try await store.entry(first.id)?.state == "queued")

        let again = job()
        #expect(await submitter.submit(again) == nil, "the same source is already queued")
        #expect(try await store.entry(again.id) == nil)
        #expect(tickets.count == 1)

        #expect(await submitter.withdraw(first.id)?.id == first.id)
        #expect(try await ticket.outcome() == .cancelledOnRequest)
        #expect(try await store.entry(first.id)?.state == "cancelled")
        #expect(tickets.count == 0)
    }
}
