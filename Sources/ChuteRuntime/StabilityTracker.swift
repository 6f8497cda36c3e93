import SystemPackage

/// Decides when a file has been quiet long enough to be taken: every write or rename event restarts its quiet
/// period, and a removal forgets it.
///
/// Pure state, no clock and no I/O: the caller arms one timer per ``Ticket`` and hands it back when it fires; a
/// ticket made stale by a later event is simply refused.
package struct StabilityTracker: Sendable {
    /// One armed quiet period.
    package struct Ticket: Sendable, Hashable {
        package var path: FilePath
        package var generation: Int
        /// Armed by an event that says the writer is done (closed after writing, renamed into place) rather than by
        /// a scan or a change seen at the end of a period.
        package var finished = false
    }

    private struct Entry {
        var root: FilePath
        var generation: Int
        var fingerprint: SourceFingerprint?
    }

    private var entries: [FilePath: Entry] = [:]
    private var generation = 0

    package init() {}

    /// Records a write or rename event and returns the ticket whose timer the caller must arm.
    ///
    /// - Parameters:
    ///   - fingerprint: the file's metadata now, compared again when the period ends.
    ///   - finished: whether the event says the writer is done with the file (``Ticket/finished``).
    package mutating func touch(
        _ path: FilePath,
        root: FilePath,
        fingerprint: SourceFingerprint?,
        finished: Bool = false
    ) -> Ticket {
        self.generation += 1
        self.entries[path] = Entry(root: root, generation: self.generation, fingerprint: fingerprint)
        return Ticket(path: path, generation: self.generation, finished: finished)
    }

    /// Forgets a file that was removed or renamed away: its armed ticket becomes stale.
    package mutating func forget(_ path: FilePath) {
        self.entries[path] = nil
    }

    /// Ends a quiet period.
    ///
    /// - Parameter fingerprint: the file's metadata now.
    /// - Returns: `.stale` for a superseded ticket, `.changed` (re-armed, with the new ticket) when the file changed
    ///   without an event (a writer that never closes), else `.quiet` with the file's watched folder.
    package mutating func settle(_ ticket: Ticket, fingerprint: SourceFingerprint?) -> Settlement {
        guard let entry = self.entries[ticket.path], entry.generation == ticket.generation else { return .stale }
        if let fingerprint, entry.fingerprint != fingerprint {
            return .changed(self.touch(ticket.path, root: entry.root, fingerprint: fingerprint))
        }
        self.entries[ticket.path] = nil
        return .quiet(root: entry.root)
    }

    /// Whether `path` is in its quiet period: a write or rename event came, and the period has not ended.
    package func isPending(_ path: FilePath) -> Bool {
        self.entries[path] != nil
    }

    /// The number of files in their quiet period.
    package var pendingCount: Int { self.entries.count }

    /// The result of ``settle(_:fingerprint:)``.
    package enum Settlement: Sendable, Equatable {
        case stale
        case changed(Ticket)
        case quiet(root: FilePath)
    }
}
