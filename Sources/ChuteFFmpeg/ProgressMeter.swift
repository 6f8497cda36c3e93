import ChuteCore

/// Paces a job's progress reports to about one a second, mapping each stage's own 0…1 onto its share of the job.
struct ProgressMeter {
    private let clock = ContinuousClock()
    private var lastReport: ContinuousClock.Instant
    private let interval = Duration.seconds(1)

    /// Starts the clock; the first report comes a second from now.
    init() {
        self.lastReport = self.clock.now
    }

    /// Calls `progress` with `fraction` of a stage that spans `share` of the job, if a second has passed since the
    /// last call; `mediaSeconds` is how much of the input has been converted, when the stage knows.
    mutating func report(
        _ fraction: Double,
        of share: ClosedRange<Double>,
        mediaSeconds: Double? = nil,
        to progress: (JobProgress) -> Void
    ) {
        let now = self.clock.now
        guard now - self.lastReport >= self.interval else { return }
        self.lastReport = now
        let clamped = min(1, max(0, fraction.isFinite ? fraction : 0))
        progress(
            JobProgress(
                fraction: share.lowerBound + clamped * (share.upperBound - share.lowerBound),
                mediaSeconds: mediaSeconds
            )
        )
    }
}
