import Foundation

/// The pace of a running job, for the time it has left: an exponentially weighted average of its progress per
/// second, measured between successive progress reports.
///
/// The average forgets with a time constant of ``timeConstant`` (a rate measured that long ago weighs 1/e as much
/// as one measured now), so a job that slows down or speeds up (another job starts beside it, the content gets
/// harder to encode) is estimated at its present pace, not at the average since its start; yet one slow or fast
/// report barely moves the estimate. Only reports from the first that shows progress count, not the job's start:
/// the time before it (a worker starting, a file being opened, an encoder filling its look-ahead) is not the pace
/// of the work. For media, the fraction done is the media
/// time converted over the input's duration, so the rate is media time over wall time. No estimate is given until
/// the reports span ``warmUp``, or while the job makes no progress at all.
struct JobPace {
    /// How quickly earlier rates fade from the average.
    static let timeConstant = Duration.seconds(10)
    /// How long reports must have come in before the pace is trusted.
    static let warmUp = Duration.seconds(4)

    /// Times on the runtime's clock (``RuntimeClock/now``).
    private var first: Duration?
    private var last: (instant: Duration, fraction: Double)?
    /// The averaged fraction of the job done per second.
    private var rate: Double?

    /// Takes a progress report: `fraction` of the job done at `instant`.
    mutating func record(_ fraction: Double, at instant: Duration) {
        let fraction = min(1, max(0, fraction.isFinite ? fraction : 0))
        guard let last = self.last else {
            // The pace is measured from the first report of some progress: before it, the worker starts, opens the
            // file, and the encoder fills its look-ahead, none of which is the pace of the rest.
            guard fraction > 0 else { return }
            self.first = instant
            self.last = (instant, fraction)
            return
        }
        let seconds = Self.seconds(instant - last.instant)
        guard seconds > 0 else { return }
        // Progress never goes back; a report that does (one stream behind another) adds nothing.
        let done = max(fraction, last.fraction)
        let sample = (done - last.fraction) / seconds
        let weight = 1 - exp(-seconds / Self.seconds(Self.timeConstant))
        self.rate = self.rate.map { $0 + weight * (sample - $0) } ?? sample
        self.last = (instant, done)
    }

    /// The longest time left that is given: a stalled job's rate fades towards 0 without reaching it, and its
    /// estimate would grow past anything a `Duration` or an `Int` holds.
    static let longestRemaining = 30.0 * 86_400

    /// The time the job has left at its present pace, or `nil` before the warm-up, while it makes no progress, or
    /// when that pace would need more than ``longestRemaining``.
    var remaining: Duration? {
        guard let first = self.first, let last = self.last, last.instant - first >= Self.warmUp,
            let rate = self.rate, rate > 0
        else {
            return nil
        }
        let seconds = (1 - last.fraction) / rate
        return seconds.isFinite && seconds <= Self.longestRemaining ? .seconds(seconds) : nil
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
