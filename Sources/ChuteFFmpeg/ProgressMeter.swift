import ChuteCore

/// Paces a job's progress reports (to one a second, as the engine uses it), mapping each stage's own 0…1 onto its
/// share of the job.
struct ProgressMeter {
    private let clock = ContinuousClock()
    private var lastReport: ContinuousClock.Instant
    private let interval: Duration
    /// The furthest fraction and media time reported so far: packets of different streams arrive interleaved, and
    /// reordered video runs ahead of its audio, so one packet's end may lie before the previous one's.
    private var furthest = 0.0
    private var furthestSeconds: Double?

    /// Starts the clock; the first report comes `interval` from now.
    init(interval: Duration) {
        self.interval = interval
        self.lastReport = self.clock.now
    }

    /// Calls `progress` with `fraction` of a stage that spans `share` of the job, if `interval` has passed since the
    /// last call; `mediaSeconds` is how much of the input has been converted, when the stage knows.
    mutating func report(
        _ fraction: Double,
        of share: ClosedRange<Double>,
        mediaSeconds: Double? = nil,
        to progress: (JobProgress) -> Void
    ) {
        let clamped = min(1, max(0, fraction.isFinite ? fraction : 0))
        self.furthest = max(self.furthest, share.lowerBound + clamped * (share.upperBound - share.lowerBound))
        if let mediaSeconds {
            self.furthestSeconds = max(self.furthestSeconds ?? 0, mediaSeconds)
        }
        let now = self.clock.now
        guard now - self.lastReport >= self.interval else { return }
        self.lastReport = now
        progress(JobProgress(fraction: self.furthest, mediaSeconds: mediaSeconds.flatMap { _ in self.furthestSeconds }))
    }
}
