import ChuteRuntime
import Foundation
import SystemPackage
import Testing

/// The job event stream: every subscriber gets every event in order, and one that does not read costs bounded memory
/// and never holds up the publisher.
@Suite(.timeLimit(.minutes(1)))
struct JobEventsTests {
    private static func event(_ kind: JobEvent.Kind, _ id: String, progress: Double? = nil) -> JobEvent {
        JobEvent(kind, jobID: id, rule: "r", source: FilePath("/in/\(id).png"), progress: progress)
    }

    @Test func everySubscriberGetsEveryEventInOrder() async {
        let events = JobEvents()
        let first = events.subscribe()
        let second = events.subscribe()
        let sent: [JobEvent.Kind] = [.queued, .started, .progress, .completed]
        for kind in sent { events.publish(Self.event(kind, "a")) }
        first.finish()
        second.finish()
        var seen: [[JobEvent.Kind]] = []
        for subscription in [first, second] {
            var kinds: [JobEvent.Kind] = []
            for await event in subscription { kinds.append(event.kind) }
            seen.append(kinds)
        }
        #expect(seen == [sent, sent])
    }

    @Test func batchesHoldEveryEventBufferedInOrder() async {
        let events = JobEvents()
        let subscription = events.subscribe()
        var batches = subscription.batches.makeAsyncIterator()
        for id in ["a", "b", "c"] { events.publish(Self.event(.queued, id)) }
        #expect(await batches.next()?.map(\.jobID) == ["a", "b", "c"])
        // An empty buffer waits for the next event, which comes alone.
        async let next = batches.next()
        events.publish(Self.event(.started, "a"))
        #expect(await next?.map(\.kind) == [.started])
        subscription.finish()
        var rest = subscription.batches.makeAsyncIterator()
        #expect(await rest.next() == nil)
    }

    @Test func aSubscriberThatDoesNotReadLosesProgressFirstThenItsStream() async {
        let events = JobEvents()
        let stalled = events.subscribe()
        // Publishing returns at once however far behind the subscriber is.
        for index in 0..<(JobEvents.progressLimit + 100) {
            events.publish(Self.event(.progress, "a", progress: Double(index) / 1000))
        }
        events.publish(Self.event(.completed, "a"))
        #expect(events.subscriberCount == 1)
        stalled.finish()
        var kinds: [JobEvent.Kind] = []
        for await event in stalled { kinds.append(event.kind) }
        // The progress past the limit was dropped; the final event was kept.
        #expect(kinds.filter { $0 == .progress }.count == JobEvents.progressLimit)
        #expect(kinds.last == .completed)

        let dropped = events.subscribe()
        for _ in 0...JobEvents.hardLimit { events.publish(Self.event(.queued, "b")) }
        #expect(events.subscriberCount == 0)
        var count = 0
        for await _ in dropped { count += 1 }
        #expect(count == JobEvents.hardLimit)
    }

    @Test func theBoardFollowsAJobFromQueuedToCompleted() async {
        let events = JobEvents()
        let board = JobStatusBoard(events: events)
        await board.apply(Self.event(.queued, "a"))
        #expect(await board.liveEntries(where: { $0.state == "queued" }, offset: 0, limit: 10).page.map(\.id) == ["a"])
        await board.apply(Self.event(.started, "a"))
        await board.apply(Self.event(.progress, "a", progress: 0.5))
        #expect(await board.queuedCount == 0)
        #expect(await board.runningJobs.map(\.progress) == [0.5])
        await board.apply(Self.event(.completed, "a"))
        #expect(await board.runningJobs.isEmpty)
        #expect(await board.recentJobs.map(\.state) == ["completed"])
        #expect(await board.entry("a")?.progress == 1)
    }

    @Test func theBoardPagesTheQueueInTheOrderItWasQueued() async {
        let board = JobStatusBoard(events: JobEvents())
        for id in ["a", "b", "c", "d", "e"] { await board.apply(Self.event(.queued, id)) }
        await board.apply(Self.event(.started, "c"))
        await board.apply(Self.event(.failed, "b"))
        // Queued again (a retry under the same id): its place is now at the end.
        await board.apply(Self.event(.queued, "a"))
        #expect(await board.queuedCount == 3)
        let first = await board.liveEntries(where: nil, offset: 0, limit: 2)
        #expect(first.page.map(\.id) == ["c", "d"])
        #expect(first.total == 4)
        #expect(await board.liveEntries(where: nil, offset: 2, limit: 2).page.map(\.id) == ["e", "a"])
        let everyOne = await board.liveEntries(where: { _ in true }, offset: 1, limit: 2)
        #expect(everyOne.page.map(\.id) == ["d", "e"])
        #expect(everyOne.total == 4)
        #expect(await board.liveEntries(where: { $0.state == "queued" }, offset: 1, limit: 5).page.map(\.id) == ["e", "a"])

        // Thousands through the queue: what is listed stays what is queued, in order.
        for number in 0..<3000 { await board.apply(Self.event(.queued, "n\(number)")) }
        for number in 0..<3000 where number % 3 != 0 { await board.apply(Self.event(.completed, "n\(number)")) }
        let rest = await board.liveEntries(where: { $0.state == "queued" }, offset: 0, limit: 2000)
        #expect(rest.total == 3 + 1000)
        #expect(rest.page.map(\.id) == ["d", "e", "a"] + stride(from: 0, to: 3000, by: 3).map { "n\($0)" })
        let unfiltered = await board.liveEntries(where: nil, offset: 1000, limit: 3)
        #expect(unfiltered.total == 1 + 3 + 1000)
        #expect(unfiltered.page.map(\.id) == ["n2988", "n2991", "n2994"])
    }
}
