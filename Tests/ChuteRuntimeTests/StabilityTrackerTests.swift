import ChuteRuntime
import SystemPackage
import Testing

@Suite struct StabilityTrackerTests {
    private let print1 = SourceFingerprint(device: 1, inode: 7, size: 100, modifiedNanoseconds: 1)
    private let print2 = SourceFingerprint(device: 1, inode: 7, size: 200, modifiedNanoseconds: 2)

    @Test func aQuietFileSettlesWithItsRoot() {
        var tracker = StabilityTracker()
        let ticket = tracker.touch("/in/a.jpg", root: "/in", fingerprint: self.print1)
        #expect(tracker.settle(ticket, fingerprint: self.print1) == .quiet(root: "/in"))
        #expect(tracker.pendingCount == 0)
    }

    @Test func aLaterEventMakesTheEarlierTicketStale() {
        var tracker = StabilityTracker()
        let first = tracker.touch("/in/a.jpg", root: "/in", fingerprint: self.print1)
        let second = tracker.touch("/in/a.jpg", root: "/in", fingerprint: self.print1)
        #expect(tracker.settle(first, fingerprint: self.print1) == .stale)
        #expect(tracker.settle(second, fingerprint: self.print1) == .quiet(root: "/in"))
    }

    @Test func aFileThatChangedWithoutAnEventWaitsAgain() {
        var tracker = StabilityTracker()
        let ticket = tracker.touch("/in/a.jpg", root: "/in", fingerprint: self.print1)
        guard case .changed(let next) = tracker.settle(ticket, fingerprint: self.print2) else {
            Issue.record("expected .changed")
            return
        }
        #expect(tracker.settle(next, fingerprint: self.print2) == .quiet(root: "/in"))
    }

    @Test func aRemovedFileIsForgotten() {
        var tracker = StabilityTracker()
        let ticket = tracker.touch("/in/a.jpg", root: "/in", fingerprint: self.print1)
        tracker.forget("/in/a.jpg")
        #expect(tracker.settle(ticket, fingerprint: self.print1) == .stale)
    }
}
