import ChuteCore
import Logging

/// Logs a running job's progress at a steady cadence: percent done, speed in × real time (for media) and the time
/// left at the job's present pace (see ``JobPace``). Jobs shorter than one ``interval`` log nothing.
struct ProgressLog {
    /// The time between two progress records of one job.
    static let interval = Duration.seconds(5)

    /// Times on the runtime's clock (``RuntimeClock/now``).
    private let start: Duration
    private var next: Duration
    private var pace = JobPace()

    /// Starts the cadence at the job's start.
    init(start: Duration) {
        self.start = start
        self.next = start + Self.interval
    }

    /// Logs `progress` when an interval has passed since the last record.
    mutating func record(_ progress: JobProgress, to logger: Logger, at now: Duration) {
        self.pace.record(progress.fraction, at: now)
        guard now >= self.next else { return }
        self.next = now + Self.interval
        logger.info(
            "Job progress",
            metadata: Self.metadata(progress, elapsed: now - self.start, remaining: self.pace.remaining)
        )
    }

    /// `progress` (percent done), `speed` (media seconds per second since the start, as `1.84x`) and `eta` (the
    /// seconds `remaining`, when they are known).
    static func metadata(_ progress: JobProgress, elapsed: Duration, remaining: Duration?) -> Logger.Metadata {
        let fraction = min(1, max(0, progress.fraction))
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        var metadata: Logger.Metadata = ["progress": "\(Int((fraction * 100).rounded(.down)))%"]
        if let media = progress.mediaSeconds, seconds > 0 {
            metadata["speed"] = "\(Self.twoDecimals(media / seconds))x"
        }
        if let remaining {
            let left = Double(remaining.components.seconds) + Double(remaining.components.attoseconds) / 1e18
            metadata["eta"] = "\(Int(left.rounded()))s"
        }
        return metadata
    }

    private static func twoDecimals(_ value: Double) -> String {
        let hundredths = Int((value * 100).rounded())
        let remainder = hundredths % 100
        return "\(hundredths / 100).\(remainder < 10 ? "0" : "")\(remainder)"
    }
}
