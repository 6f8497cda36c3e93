import ChuteCore
import ChuteRuntime
import Foundation
import Prometheus
import ServiceLifecycle
import Synchronization

/// The daemon's Prometheus metrics, served as `GET /metrics` by the ``StatusAPI``.
///
/// Counters come from the one stream of ``JobEvents``, read by ``run()``: jobs finished by rule, engine and outcome,
/// the bytes of completed jobs' sources and outputs, each job's time from start to end by engine, and the
/// postponements for a full disk. What no event carries is read when the metrics are scraped: each lane's queued
/// jobs from the ``JobQueue``, the files waiting to be ready from the ``JobStatusBoard``, and the workers alive and
/// restarted from the ``WorkerCensus``.
///
/// Publishing never waits for the metrics: they read their own subscription, which drops progress events when
/// behind (the metrics use none), and handling an event only adds to atomic counters.
package final class JobMetrics: Service, Sendable {
    /// The upper bounds of the job duration histogram's buckets: from a thumbnail to a long film.
    static let durationBuckets: [Duration] = [
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5),
        .seconds(10), .seconds(30), .seconds(60), .seconds(120), .seconds(300), .seconds(600), .seconds(1800),
        .seconds(3600),
    ]

    private let registry = PrometheusCollectorRegistry()
    private let subscription: Subscription
    private let queue: JobQueue
    private let board: JobStatusBoard
    private let workers: WorkerCensus
    private let hooks: HookRunner?
    private let engines: [EngineKind]
    /// Held while the scrape-time values are written and the text is made, so that two scrapes never interleave.
    private let scraping = Mutex(())
    /// `agent`, on a store that agents share: every metric carries it, so that one dashboard tells the agents apart.
    private let agentLabel: [(String, String)]

    /// Subscribes to `events` at once, so that no job's end is missed.
    ///
    /// - Parameters:
    ///   - engines: the engines whose lanes exist, each reported (with zeros) before it has run anything.
    ///   - agent: this daemon's name among the agents sharing its store, for the `agent` label; `nil` for none.
    ///   - hooks: the rules' `run:` hooks, whose ends are counted.
    package init(
        events: JobEvents,
        queue: JobQueue,
        board: JobStatusBoard,
        workers: WorkerCensus,
        engines: some Sequence<EngineKind>,
        agent: String? = nil,
        hooks: HookRunner? = nil
    ) {
        self.hooks = hooks
        self.agentLabel = agent.map { [("agent", $0)] } ?? []
        self.subscription = events.subscribe(limit: .max)
        self.queue = queue
        self.board = board
        self.workers = workers
        self.engines = engines.sorted { $0.rawValue < $1.rawValue }
        // Shown as 0 from the start: an alert on it must not wait for the first full disk.
        _ = self.diskFullPostponements
    }

    /// Counts events until graceful shutdown.
    package func run() async {
        // When each running job started, for its duration; a job's entry goes with its end.
        var started: [String: Date] = [:]
        for await batch in self.subscription.batches.cancelOnGracefulShutdown() {
            for event in batch { self.record(event, started: &started) }
        }
    }

    /// Takes one event into the counters.
    func record(_ event: JobEvent, started: inout [String: Date]) {
        guard let id = event.jobID else { return }
        if event.kind == .started { started[id] = event.time }
        guard event.kind.isFinal else { return }
        let rule = event.rule ?? ""
        let engine = event.engine ?? ""
        let labels = [("rule", rule), ("engine", engine)]
        // A duplicate skipped converted nothing: it is its own outcome, and its earlier output's bytes are not
        // counted again.
        let skipped = event.kind == .completed && event.duplicateOf != nil
        self.counter(
            "jobs_finished",
            "Jobs that ended, by rule, engine and outcome.",
            labels + [("outcome", skipped ? "skipped" : event.kind.rawValue)]
        )
        .increment()
        if event.kind == .completed, !skipped {
            self.counter("input_bytes", "Bytes of the sources of completed jobs.", labels)
                .increment(by: event.inputBytes ?? 0)
            self.counter("output_bytes", "Bytes of the outputs of completed jobs.", labels)
                .increment(by: event.outputBytes ?? 0)
        }
        if event.kind == .postponed, event.code == ConversionFailure.Code.diskFull.rawValue {
            self.diskFullPostponements.increment()
        }
        if let start = started.removeValue(forKey: id), [.completed, .failed].contains(event.kind) {
            let seconds = max(0, event.time.timeIntervalSince(start))
            self.registry.makeDurationHistogram(
                descriptor: Self.name(
                    "job_duration",
                    unit: "seconds",
                    "Time from a job's start to its end, by engine."
                ),
                labels: [("engine", engine)] + self.agentLabel,
                buckets: Self.durationBuckets
            ).record(.nanoseconds(Int64(seconds * 1_000_000_000)))
        }
    }

    /// The metrics in Prometheus's text format, with the queue, waiting files and workers read now.
    package func exposition() async -> String {
        let queued = await self.queue.queuedPerLane
        let waiting = await self.board.waitingCount
        let workers = self.workers.snapshot
        let hooks = await self.hooks?.counts ?? [:]
        return self.scraping.withLock { _ in
            for (rule, tally) in hooks.sorted(by: { $0.key < $1.key }) {
                for (result, count) in [("succeeded", tally.succeeded), ("failed", tally.failed)] {
                    // The runner keeps the totals, as the census does the restarts.
                    let runs = self.counter(
                        "hook_runs",
                        "Rules' run: hooks that ended, by rule and result (failed: a status other than 0, or killed).",
                        [("rule", rule), ("result", result)]
                    )
                    runs.reset()
                    runs.increment(by: Int64(count))
                }
            }
            for engine in Set(self.engines).union(workers.keys).sorted(by: { $0.rawValue < $1.rawValue }) {
                let labels = [("engine", engine.rawValue)]
                self.gauge("queue_depth", "Jobs queued in each engine's lanes.", labels)
                    .set(Double(queued[engine] ?? 0))
                self.gauge("workers_alive", "Worker processes running, by engine.", labels)
                    .set(Double(workers[engine]?.alive ?? 0))
                // The census keeps the total: the counter is set to it, under the lock that keeps scrapes apart.
                let restarts = self.counter(
                    "worker_restarts",
                    "Workers started in place of one that died (crash, timeout, limit or cancel), by engine.",
                    labels
                )
                restarts.reset()
                restarts.increment(by: Int64(workers[engine]?.restarts ?? 0))
            }
            self.gauge("files_waiting", "Files a rule takes that are not complete yet (still written, cut short).", [])
                .set(Double(waiting))
            return self.registry.emitToString()
        }
    }

    private var diskFullPostponements: Counter {
        self.counter("disk_full_postponements", "Jobs postponed because the target's disk or quota was full.", [])
    }

    private func counter(_ name: String, _ help: String, _ labels: [(String, String)]) -> Counter {
        self.registry.makeCounter(descriptor: Self.name(name, unit: "total", help), labels: labels + self.agentLabel)
    }

    private func gauge(_ name: String, _ help: String, _ labels: [(String, String)]) -> Gauge {
        self.registry.makeGauge(descriptor: Self.name(name, unit: "", help), labels: labels + self.agentLabel)
    }

    /// `chute_NAME_UNIT`.
    private static func name(_ name: String, unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "chute", metricName: name, unitName: unit, helpText: help)
    }
}
