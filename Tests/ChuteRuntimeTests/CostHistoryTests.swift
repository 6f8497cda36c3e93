import ChuteCatalog
import ChuteCore
import ChuteRuntime
import Testing

/// The history refines the model's estimates by the median of what similar jobs really took.
@Suite struct CostHistoryTests {
    private let photos = CostHistory.Key(rule: "photos", engine: .image)

    private func history(_ ratios: [Double], for key: CostHistory.Key) -> CostHistory {
        CostHistory([key: ratios.map { CostHistory.Sample(estimate: 2, cpuSeconds: 2 * $0) }])
    }

    @Test func noFactorUntilEnoughJobsWereMeasured() {
        #expect(self.history([], for: self.photos).factor(for: self.photos) == nil)
        #expect(self.history([3, 3], for: self.photos).factor(for: self.photos) == nil)
        #expect(self.history([3, 3, 3], for: self.photos).factor(for: self.photos) == 3)
    }

    @Test func theFactorIsTheMedianSoOneOddJobDoesNotMoveIt() {
        #expect(self.history([2, 2.5, 40], for: self.photos).factor(for: self.photos) == 2.5)
        #expect(self.history([1, 2, 4, 400], for: self.photos).factor(for: self.photos) == 3)
    }

    @Test func onlyTheLatestJobsCountAndEachKeyHasItsOwn() {
        var history = self.history(Array(repeating: 10, count: CostHistory.window), for: self.photos)
        for _ in 0..<(CostHistory.window / 2 + 1) {
            history.record(CostHistory.Sample(estimate: 1, cpuSeconds: 0.5), for: self.photos)
        }
        #expect(history.factor(for: self.photos) == 0.5, "the newer half of the window decides")
        let otherRule = CostHistory.Key(rule: "scans", engine: .image)
        let otherEngine = CostHistory.Key(rule: "photos", engine: .video)
        #expect(history.factor(for: otherRule) == nil && history.factor(for: otherEngine) == nil)
    }

    @Test func theFactorIsBoundedAndEmptyEstimatesAreLeftOut() {
        #expect(self.history([1e6, 1e6, 1e6], for: self.photos).factor(for: self.photos) == 100)
        #expect(self.history([0, 0, 0], for: self.photos).factor(for: self.photos) == 0.01)
        var history = CostHistory()
        for _ in 0..<5 { history.record(CostHistory.Sample(estimate: 0, cpuSeconds: 1), for: self.photos) }
        #expect(history.factor(for: self.photos) == nil)
    }
}
