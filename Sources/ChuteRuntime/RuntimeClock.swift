import Foundation

/// The runtime's time: a monotonic reading for quiet periods, back-offs, ageing, grace periods and job durations, the
/// wall-clock date that rules compare with files' times (`minAge`, `{date}`), and a sleep for its timers.
///
/// The daemon uses ``system``; a test gives the intake, the queue and the runtime a clock it advances by hand, so
/// that a quiet period of 5 s, a grace period or an `incompleteTimeout` of an hour takes no time and is exact.
package struct RuntimeClock: Sendable {
    /// Monotonic time since the clock was made.
    package let now: @Sendable () -> Duration
    /// The wall-clock date.
    package let date: @Sendable () -> Date
    /// Sleeps for a duration of the monotonic time; throws when the task is cancelled.
    package let sleep: @Sendable (Duration) async throws -> Void

    /// The time read from `clock`, with `date` for the wall clock.
    package init<C: Clock>(_ clock: C, date: @escaping @Sendable () -> Date) where C.Duration == Duration {
        let start = clock.now
        self.now = { start.duration(to: clock.now) }
        self.date = date
        self.sleep = { duration in try await clock.sleep(until: clock.now.advanced(by: duration), tolerance: nil) }
    }

    /// The machine's continuous clock and its wall clock.
    package static let system = RuntimeClock(ContinuousClock()) { Date() }
}
