import ChuteCore
import Synchronization

/// How many worker processes each engine's lanes have, and how many of them were started in place of one that died:
/// the worker facts that no job event carries, for the metrics.
///
/// The lanes of ``JobRuntime`` tell it when they start and stop a worker; anyone may read it at any time.
///
/// - Important: A `Mutex`: the lanes write from their tasks, a scrape of the metrics reads from another.
package final class WorkerCensus: Sendable {
    /// One engine's workers.
    package struct Count: Sendable, Equatable {
        /// Worker processes started and not yet stopped.
        package var alive = 0
        /// Workers started in place of one that died (crashed, or killed by a timeout, a limit or a cancel).
        package var restarts = 0
        /// Workers that died and have not been replaced yet.
        fileprivate var dead = 0

        package init(alive: Int = 0, restarts: Int = 0) {
            self.alive = alive
            self.restarts = restarts
        }
    }

    private let counts = Mutex<[EngineKind: Count]>([:])

    package init() {}

    /// A lane started a worker; it replaces one that died, if its engine has such.
    package func started(_ engine: EngineKind) {
        self.counts.withLock { counts in
            counts[engine, default: Count()].alive += 1
            if counts[engine]!.dead > 0 {
                counts[engine]!.dead -= 1
                counts[engine]!.restarts += 1
            }
        }
    }

    /// A lane stopped a worker, or found it dead (`died`) and let it go.
    package func stopped(_ engine: EngineKind, died: Bool) {
        self.counts.withLock { counts in
            counts[engine, default: Count()].alive -= 1
            if died { counts[engine]!.dead += 1 }
        }
    }

    /// Each engine's workers, for the engines that had any.
    package var snapshot: [EngineKind: Count] { self.counts.withLock { $0 } }
}
