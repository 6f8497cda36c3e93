/// The span of time that a set of packets covers, from the earliest start to the latest end, in seconds.
struct TimeExtent {
    private var start = Double.infinity
    private var end = -Double.infinity

    /// Widens the extent to cover a packet.
    mutating func include(start: Double, end: Double) {
        self.start = min(self.start, start)
        self.end = max(self.end, end)
    }

    /// Widens the extent to cover another.
    mutating func include(_ other: TimeExtent) {
        self.start = min(self.start, other.start)
        self.end = max(self.end, other.end)
    }

    /// The part of the extent from `lower` to `upper` (to its end when `upper` is `nil`).
    func clamped(from lower: Double, to upper: Double?) -> TimeExtent {
        var clamped = TimeExtent()
        let end = upper.map { min(self.end, $0) } ?? self.end
        if max(self.start, lower) <= end {
            clamped.include(start: max(self.start, lower), end: end)
        }
        return clamped
    }

    /// The length in seconds, or `nil` when nothing was included.
    var length: Double? {
        self.end >= self.start ? self.end - self.start : nil
    }

    /// Whether two durations agree within Chute's tolerance: the larger of half a second and 2 % of the longer one.
    /// Containers and codecs round durations differently (priming samples, the last frame's length), and a truncated
    /// file misses far more than that.
    static func agree(_ left: Double, _ right: Double) -> Bool {
        abs(left - right) <= max(0.5, 0.02 * max(left, right))
    }
}
