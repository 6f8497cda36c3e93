import Testing

@testable import ChuteRuntime

@Suite struct JobPaceTests {
    /// Feeds `fractions`, one report a second from `start` + 1 s, and returns the estimate after each, in seconds.
    private static func estimates(_ fractions: [Double]) -> [Double?] {
        let start = Duration.zero
        var pace = JobPace()
        return fractions.enumerated().map { second, fraction in
            pace.record(fraction, at: start + .seconds(second + 1))
            return pace.remaining.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 }
        }
    }

    @Test func steadyPaceGivesTheTimeLeftAtThatPace() throws {
        // 2 % a second: at 20 % done, 40 s are left.
        let estimates = Self.estimates((1...10).map { Double($0) * 0.02 })

        let last = try #require(estimates.last ?? nil)
        #expect(abs(last - 40) < 0.01)
    }

    @Test func noEstimateBeforeTheWarmUpOrWithoutProgress() {
        let estimates = Self.estimates([0.1, 0.2, 0.3, 0.4, 0.5])
        #expect(estimates.prefix(4).allSatisfy { $0 == nil })
        #expect(estimates[4] != nil)

        #expect(Self.estimates([0, 0, 0, 0, 0, 0, 0]).allSatisfy { $0 == nil })
        // The pace is measured from the first progress: 4 s of 5 % a second after 3 s of nothing.
        let late = Self.estimates([0, 0, 0, 0.05, 0.10, 0.15, 0.20, 0.25])
        #expect(late.prefix(7).allSatisfy { $0 == nil })
        #expect(abs((late[7] ?? 0) - 15) < 0.01)
    }

    /// A job that stalls: its averaged pace fades towards 0 at every report without progress, and after some
    /// minutes the time left at that pace outgrows any `Duration`. No estimate is given then, rather than a trap.
    @Test func aLongStallGivesNoEstimateInsteadOfAnEndlessOne() {
        let estimates = Self.estimates([0.1, 0.2, 0.3, 0.4, 0.5] + Array(repeating: 0.5, count: 1200))
        #expect(estimates[4] != nil)
        #expect(estimates.last == .some(nil))
        #expect(estimates.allSatisfy { $0 == nil || $0! <= JobPace.longestRemaining })
    }

    /// The issue's job: 36 % done after 6 s, 42 % after 23 s. It had read 30 % of its input before the first report
    /// (an encoder taking in frames for its look-ahead), then went on at 0.35 % a second. Estimated from the average
    /// since the start, the time left grew from 11 s to 32 s; estimated from the pace between reports, it shrinks.
    @Test func issueSequenceGivesShrinkingEstimates() throws {
        let fractions = (0..<60).map { 0.30 + 0.0035 * Double($0) }
        let estimates = Self.estimates(fractions).compactMap { $0 }

        try #require(estimates.count > 50)
        for (earlier, later) in zip(estimates, estimates.dropFirst()) {
            #expect(later < earlier)
        }
        // At 0.35 % a second, 49 % done leaves about 146 s.
        #expect(abs(estimates.last! - (1 - fractions.last!) / 0.0035) < 1)
    }

    @Test func slowerPaceIsFollowedWithinAFewTimeConstants() throws {
        // 2 % a second for 10 s, then 0.5 % a second.
        let fractions = (1...10).map { Double($0) * 0.02 } + (1...40).map { 0.2 + Double($0) * 0.005 }
        let estimates = Self.estimates(fractions)

        let last = try #require(estimates.last ?? nil)
        let atPresentPace = (1 - fractions.last!) / 0.005
        #expect(abs(last - atPresentPace) / atPresentPace < 0.1)
    }
}
