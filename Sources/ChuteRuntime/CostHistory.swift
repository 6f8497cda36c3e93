import ChuteCore

/// What similar jobs really cost against what ``JobDemand`` estimated: the scheduler's refinement of its cost model.
///
/// Jobs are similar when one rule sends them to one engine: one target, one set of options (a rule with
/// `preset: slower` costs x264 about three times the model's `medium`), one kind of input. For each such pair the
/// history keeps the ratio of the CPU time the worker measured to the model's estimate over the last ``window``
/// successful conversions, and a new job's estimate is multiplied by their median once ``minimumSamples`` are known.
/// The median keeps one odd file (a picture that was mostly sky, a clip with a still frame) from moving the order.
///
/// The journal keeps each job's estimate and CPU time (``SQLiteJobStore/costSamples(window:)``), so a restart starts from
/// what the last run learnt.
package struct CostHistory: Sendable, Equatable {
    /// Jobs whose costs are compared: one rule's on one engine.
    package struct Key: Hashable, Sendable {
        package var rule: String
        package var engine: EngineKind

        package init(rule: String, engine: EngineKind) {
            self.rule = rule
            self.engine = engine
        }

        /// The key of `job`'s rule and engine.
        package init(_ job: Job) {
            self.init(rule: job.rule.name, engine: job.engine)
        }
    }

    /// One finished job: the model's estimate and the CPU time measured, both in seconds of one core.
    package struct Sample: Sendable, Equatable {
        package var estimate: Double
        package var cpuSeconds: Double

        package init(estimate: Double, cpuSeconds: Double) {
            self.estimate = estimate
            self.cpuSeconds = cpuSeconds
        }
    }

    /// How many of the latest jobs of a key the factor is the median of.
    package static let window = 16
    /// How many jobs of a key must have been measured before their factor is used.
    package static let minimumSamples = 3
    /// The factor is held within this range, so that one rule's history cannot put its jobs beyond any other's.
    package static let factors = 0.01...100.0

    /// The latest ratios of each key, oldest first, at most ``window``.
    private var ratios: [Key: [Double]] = [:]

    /// A history of `samples`, each key's oldest first.
    package init(_ samples: [Key: [Sample]] = [:]) {
        for (key, samples) in samples {
            for sample in samples { self.record(sample, for: key) }
        }
    }

    /// Adds a measured job; the oldest of its key's falls out past ``window``. A sample without a positive estimate
    /// is left out.
    package mutating func record(_ sample: Sample, for key: Key) {
        guard sample.estimate > 0, sample.cpuSeconds >= 0, sample.cpuSeconds.isFinite else { return }
        var ratios = self.ratios[key, default: []]
        ratios.append(sample.cpuSeconds / sample.estimate)
        if ratios.count > Self.window { ratios.removeFirst(ratios.count - Self.window) }
        self.ratios[key] = ratios
    }

    /// What the model's estimates for `key` are multiplied by: the median ratio of its latest jobs, within
    /// ``factors``; `nil` until ``minimumSamples`` jobs were measured.
    package func factor(for key: Key) -> Double? {
        guard let ratios = self.ratios[key], ratios.count >= Self.minimumSamples else { return nil }
        let sorted = ratios.sorted()
        let middle = sorted.count / 2
        let median = sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
        return min(Self.factors.upperBound, max(Self.factors.lowerBound, median))
    }
}
