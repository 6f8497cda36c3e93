import ChuteRuntime
import ServiceLifecycle
import Synchronization

/// The service that tells systemd (a `Type=notify` unit) how the daemon is: `READY=1` once the watcher watches,
/// a `STATUS=` line with the job counts ("1 running, 3 queued, 140 completed, 2 failed") whenever they change, at
/// most once per ``statusInterval``, and `STOPPING=1` when graceful shutdown starts.
///
/// It goes last in the service group, so that it is the first to hear of the shutdown; ``SystemdWatchdog``, which
/// must ping while the jobs drain, goes first. `RELOADING=1` and `READY=1` around a reload are ``SignalService``'s.
struct SystemdNotifier: Service {
    /// The shortest time between two `STATUS=` lines.
    static let statusInterval = Duration.seconds(1)

    private let socket: SystemdNotify
    private let queue: JobQueue
    private let subscription: Subscription
    /// Yields once the watcher watches.
    private let watching: AsyncStream<Void>
    private let watched: AsyncStream<Void>.Continuation

    /// Subscribes to `events` at once, so that no job's end is missed from the counts.
    init(socket: SystemdNotify, events: JobEvents, queue: JobQueue) {
        self.socket = socket
        self.queue = queue
        self.subscription = events.subscribe(limit: .max)
        (self.watching, self.watched) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Tells the service that the watcher watches; any thread may call it, any number of times.
    @Sendable func watcherIsWatching() {
        self.watched.yield()
        self.watched.finish()
    }

    func run() async {
        // Ready only once the watcher watches; a shutdown before that sends no READY.
        var ready = false
        for await _ in self.watching.cancelOnGracefulShutdown() { ready = true }
        guard ready else {
            self.socket.send("STOPPING=1")
            return
        }
        let finished = Finished()
        let first = await self.status(finished)
        self.socket.send("READY=1\nSTATUS=\(first)")
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await batch in self.subscription.batches.cancelOnGracefulShutdown() {
                    for event in batch { finished.count(event) }
                }
            }
            group.addTask {
                var sent = first
                while (try? await Task.sleep(for: Self.statusInterval)) != nil {
                    let status = await self.status(finished)
                    if status != sent, self.socket.send("STATUS=\(status)") { sent = status }
                }
            }
            // The events end at graceful shutdown; the status lines with them.
            await group.next()
            group.cancelAll()
        }
        self.socket.send("STOPPING=1\nSTATUS=Stopping: waiting for running jobs")
    }

    /// "R running, Q queued, C completed, F failed".
    private func status(_ finished: Finished) async -> String {
        let counts = await self.queue.counts
        let completed = finished.completed.load(ordering: .relaxed)
        let failed = finished.failed.load(ordering: .relaxed)
        return "\(counts.running) running, \(counts.queued) queued, \(completed) completed, \(failed) failed"
    }

    /// The jobs that ended since the daemon started.
    private final class Finished: Sendable {
        let completed = Atomic(0)
        let failed = Atomic(0)

        func count(_ event: JobEvent) {
            switch event.kind {
            case .completed: self.completed.add(1, ordering: .relaxed)
            case .failed: self.failed.add(1, ordering: .relaxed)
            default: break
            }
        }
    }
}

/// The service that pings systemd's watchdog (`WATCHDOG=1`) every half `WatchdogSec=`, until the end of graceful
/// shutdown: it goes first in the service group, so that it is the last to stop, and the jobs that drain at shutdown
/// never make systemd think the daemon hangs. A daemon whose tasks no longer run misses its pings, and systemd
/// restarts it.
struct SystemdWatchdog: Service {
    let socket: SystemdNotify
    let interval: Duration

    func run() async {
        repeat {
            self.socket.send("WATCHDOG=1")
        } while (try? await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }) != nil
    }
}
