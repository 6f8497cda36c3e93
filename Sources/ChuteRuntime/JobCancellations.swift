import Synchronization

/// The running conversions that a request may cancel, by job id, and which of them a request did cancel.
///
/// A lane registers each conversion while its worker runs it, with how to stop it (kill the worker);
/// ``cancel(_:)`` does so, and the runner then records the job as cancelled on request rather than as failed or
/// cancelled by shutdown, and removes its temporary output.
package final class JobCancellations: Sendable {
    private struct Entry {
        var cancel: @Sendable () -> Void
        var requested = false
    }

    private let entries = Mutex<[String: Entry]>([:])

    package init() {}

    /// Makes a running conversion cancellable until ``unregister(_:)``.
    package func register(_ jobID: String, cancel: @escaping @Sendable () -> Void) {
        self.entries.withLock { $0[jobID] = Entry(cancel: cancel) }
    }

    /// The conversion is over; a later cancel finds nothing.
    package func unregister(_ jobID: String) {
        self.entries.withLock { _ = $0.removeValue(forKey: jobID) }
    }

    /// Cancels a registered conversion.
    ///
    /// - Returns: `false` when no conversion of that job is running.
    package func cancel(_ jobID: String) -> Bool {
        let cancel: (@Sendable () -> Void)? = self.entries.withLock { entries in
            guard entries[jobID] != nil else { return nil }
            entries[jobID]!.requested = true
            return entries[jobID]!.cancel
        }
        cancel?()
        return cancel != nil
    }

    /// Whether ``cancel(_:)`` was asked for this job's conversion (not a shutdown).
    package func wasRequested(_ jobID: String) -> Bool {
        self.entries.withLock { $0[jobID]?.requested ?? false }
    }
}
