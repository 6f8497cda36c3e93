import ChuteCatalog
import ChuteCore
import ChuteHTTP
import ChutePostgres
import ChuteRuntime
import ChuteWatch
import Foundation
import Logging
import ServiceLifecycle
import SystemPackage
import UnixSignals

/// The daemon: the watcher feeding the intake, the intake feeding the job queue, and the job runtime running jobs in
/// worker processes, all under one `ServiceGroup` that turns SIGTERM and SIGINT into a graceful shutdown, SIGHUP into
/// a reload of the rules and SIGUSR1 into a status line.
///
/// One daemon runs per journal: a second one on the same journal refuses to start, naming the first one's process id.
package struct ChuteApplication {
    private let config: ChuteConfig
    private let configFile: FilePath
    private let journalPath: FilePath
    private let logger: Logger
    private let launcher: WorkerLauncher

    /// - Parameters:
    ///   - config: a validated configuration.
    ///   - configFile: the rules file `config` was read from, read again on SIGHUP.
    ///   - journal: the journal's database file, created if needed.
    ///   - chute: the running `chute` binary, beside which the workers are found.
    package init(
        config: ChuteConfig,
        configFile: FilePath,
        journal: FilePath,
        chute: FilePath,
        logger: Logger
    ) {
        self.config = config
        self.configFile = configFile
        self.journalPath = journal
        self.logger = logger
        self.launcher = Self.launcher(
            beside: chute,
            settings: config.settings,
            threads: Self.budget(config.settings).threads
        )
    }

    /// The launcher that starts an engine's worker, `chute-image-worker --engine image`, with the settings'
    /// scheduling priorities.
    ///
    /// - Parameters:
    ///   - chute: the running `chute`; each worker executable is in `../lib/chute` from its folder (as installed) or
    ///     beside it (a build).
    ///   - threads: each engine's threads per job (`--threads`); an engine left out lets its library choose, as
    ///     `chute convert`, which runs one job at a time, does.
    package static func launcher(
        beside chute: FilePath,
        settings: Settings,
        threads: [EngineKind: Int] = [:]
    ) -> WorkerLauncher {
        let priorities = ["--niceness", String(settings.niceness), "--io-priority", settings.ioPriority.description]
        let folder = chute.removingLastComponent()
        var executables: [EngineKind: FilePath] = [:]
        for engine in Engines.registry.engines {
            executables[engine.kind] =
                Self.installedWorker(engine.worker, beside: chute) ?? folder.appending(engine.worker)
        }
        return WorkerLauncher(
            executable: { [executables] engine in
                executables[engine] ?? folder.appending("chute-\(engine.rawValue)-worker")
            },
            arguments: { engine in
                ["--engine", engine.rawValue] + priorities + ["--threads", String(threads[engine] ?? 0)]
            }
        )
    }

    /// Where a worker executable is looked for, in order: `../lib/chute` from the folder of `chute` (as installed),
    /// then beside it (a build).
    private static func workerPlaces(_ worker: String, beside chute: FilePath) -> [FilePath] {
        let folder = chute.removingLastComponent()
        return [folder.removingLastComponent().appending("lib/chute").appending(worker), folder.appending(worker)]
    }

    /// The first of ``workerPlaces(_:beside:)`` that holds an executable, if any does.
    private static func installedWorker(_ worker: String, beside chute: FilePath) -> FilePath? {
        Self.workerPlaces(worker, beside: chute).first { FileManager.default.isExecutableFile(atPath: $0.string) }
    }

    /// What `chute check` says of the engines the rules need (``Rule/engines``) whose worker executable is missing:
    /// the jobs of those rules that need such an engine would fail as `engineUnavailable`.
    ///
    /// - Parameter chute: the running `chute`, beside which ``launcher(beside:settings:threads:)`` finds the workers.
    /// - Returns: one `warning: …` line per missing worker.
    package static func missingWorkers(for config: ChuteConfig, beside chute: FilePath) -> [String] {
        Engines.registry.engines.compactMap { engine in
            let names = config.rules.filter { $0.engines.contains(engine.kind) }.map(\.name)
            guard !names.isEmpty, Self.installedWorker(engine.worker, beside: chute) == nil else { return nil }
            return "warning: the \(engine.kind.rawValue) engine's worker is missing (no executable "
                + Self.workerPlaces(engine.worker, beside: chute).map(\.string).joined(separator: " or ")
                + "): the jobs of " + (names.count == 1 ? "rule " : "rules ")
                + names.map { "'\($0)'" }.joined(separator: ", ") + " that need it would fail as engineUnavailable"
        }
    }

    /// Gives a journal that was just created, or that replaced a damaged one, what the sidecars of earlier runs say
    /// (``JournalRebuild``), before any file is looked at: a lost journal must not make Chute convert everything again.
    private func rebuildIfNeeded(_ journal: any JobStore, origin: StoreOrigin) async throws {
        if case .replacedDamaged(let aside) = origin {
            self.logger.warning(
                "Journal damaged; it was moved aside and a new one is rebuilt from the sidecars",
                metadata: ["path": "\(self.journalPath)", "movedTo": "\(aside)"]
            )
        }
        guard origin != .existing else { return }
        let config = self.config
        let findings = await Blocking.run { JournalRebuild.findings(for: config) }
        let restored = try await journal.restore(findings.jobs)
        self.logger.log(
            level: findings.sidecars > 0 || origin != .created ? .info : .debug,
            "Journal rebuilt from sidecars",
            metadata: [
                "sidecars": "\(findings.sidecars)", "restored": "\(restored)",
                "sourcesChanged": "\(findings.sourcesChanged)", "unreadable": "\(findings.unreadable)",
                "groups": "\(findings.groups)",
            ]
        )
    }

    /// Where the jobs are kept, for the log: the journal's path, or the database's address (without a password).
    private var storeDescription: String {
        switch self.config.settings.store {
        case .journal: self.journalPath.string
        case .postgres(let location): location.description
        }
    }

    /// Runs until SIGTERM or SIGINT, then shuts down gracefully.
    ///
    /// - Throws: ``JournalLockError`` when another daemon runs on the journal; when the store cannot be opened
    ///   (``PostgresStoreError`` for a database), the watcher cannot start or a service fails.
    package func run() async throws {
        // Taken out of the environment before any worker starts: the workers must not inherit it.
        let notify = SystemdNotify.fromEnvironment()
        // Before anything else: no other daemon may run on this journal's folder (its spool, its socket), or both
        // would convert every file.
        let lock = try JournalLock(journal: self.journalPath)
        defer { withExtendedLifetime(lock) {} }
        switch self.config.settings.store {
        case .journal:
            let journal = try SQLiteJobStore(path: self.journalPath)
            try await self.run(on: journal, origin: journal.origin, notify: notify)
        case .postgres(let location):
            let budget = Self.budget(self.config.settings)
            let host = ProcessInfo.processInfo.hostName
            let agent = AgentInfo(
                name: location.agent ?? host,
                host: host,
                lanes: Engines.registry.lanes(settings: self.config.settings, cores: budget.cpu),
                cpu: budget.cpu,
                memory: budget.memory,
                url: location.url
            )
            if location.url != nil, self.config.settings.api.listen == nil {
                self.logger.warning(
                    """
                    settings.agentURL is set but the API listens on no TCP address (settings.api.listen): other \
                    agents cannot fetch the files found here
                    """
                )
            }
            try await PostgresJobStore.withStore(at: location, agent: agent, logger: self.logger) { store in
                try await self.run(on: store, origin: store.origin, notify: notify)
            }
        }
    }

    /// Runs the daemon on its store until SIGTERM or SIGINT.
    private func run(on journal: any JobStore, origin: StoreOrigin, notify: SystemdNotify?) async throws {
        // First the jobs a killed run left are settled, and their temporary files removed below.
        let recovery = try await JobRecovery.run(journal)
        // The counts are of the jobs an earlier run left unfinished, not of the journal's jobs: `completed=0` read as
        // "nothing done".
        self.logger.info(
            "Journal opened; the jobs an earlier run left unfinished are settled",
            metadata: [
                "path": "\(self.storeDescription)", "unfinished.queued": "\(recovery.queued)",
                "unfinished.interrupted": "\(recovery.interrupted)",
                "unfinished.completed": "\(recovery.completed)", "unfinished.unpublished": "\(recovery.unpublished)",
                "unfinished.withdrawn": "\(recovery.withdrawn)",
            ]
        )
        try await self.rebuildIfNeeded(journal, origin: origin)
        // Uploads cut short or past their retention go before anything is taken; the rest wait for their jobs.
        let spool = UploadSpool(journal: self.journalPath)
        let swept = try await spool.sweep(
            store: journal,
            retention: self.config.settings.uploadRetention,
            atStart: true
        )
        if swept > 0 {
            self.logger.info("Uploads removed from the spool", metadata: ["removed": "\(swept)"])
        }
        // Outputs, sidecars and sources moved across file systems are written under temporary names first.
        for folder in Set(self.config.rules.flatMap(\.writtenFolders)) {
            for path in OutputCommitter.removeStaleTemporaries(below: folder, of: (journal as? any SharedQueue)?.agent)
            {
                self.logger.info(
                    "Removed a temporary file left by an earlier run",
                    metadata: ["path": "\(LogText.escaped(path))"]
                )
            }
        }
        // An agent that watches no folder (settings.watch: false) converts the files other agents found.
        let watches: Bool
        if case .postgres(let location) = self.config.settings.store {
            watches = location.watches
        } else {
            watches = true
        }
        let watcher = watches ? try DirectoryWatcher(specs: self.watchSpecs(), logger: self.logger) : nil
        let budget = Self.budget(self.config.settings)
        self.logger.info(
            "Scheduler budget",
            metadata: [
                "cpu": "\(budget.cpu)", "memory": "\(budget.memory)",
                // As `chute status` writes it (12.64 GB), rather than in the config's exact units (12342048KiB).
                "memory.text": "\(ByteCountFormatter.string(fromByteCount: budget.memory, countStyle: .decimal))",
                "agingLimit": "\(ValueParsing.describe(budget.agingLimit))",
            ]
        )
        // One stream of job events feeds the status board and the metrics, and through them and directly the status
        // API.
        let events = JobEvents()
        let board = JobStatusBoard(events: events)
        let cancellations = JobCancellations()
        let workers = WorkerCensus()
        // What the last runs' jobs cost against their estimates refines the estimates from the first job on.
        let costs = CostHistory(try await journal.costSamples(window: CostHistory.window))
        let queue = JobQueue(budget: budget, logger: self.logger, events: events, costs: costs)
        // Every job enters through the submitter, which records it in the journal before the queue has it; each one's
        // end goes to its origin's sink (the intake's, for a watched file) and to its ticket.
        let tickets = JobTickets()
        // Every engine has its lanes, so that rules reloaded later may use any; an idle lane starts no worker.
        let lanes = Engines.registry.lanes(settings: self.config.settings, cores: budget.cpu)
        // On a store that agents share, the jobs found here are offered to all, and claimed as the lanes free up.
        let claims = (journal as? any SharedQueue).map { shared in
            JobClaims(
                store: shared,
                queue: queue,
                tickets: tickets,
                cancellations: cancellations,
                lanes: lanes,
                logger: self.logger
            )
        }
        let submitter = JobSubmitter(
            store: journal,
            queue: queue,
            tickets: tickets,
            claims: claims,
            logger: self.logger
        )
        let disposer = SourceDisposer(config: self.config, journal: journal, logger: self.logger)
        let intake = Intake(
            config: self.config,
            queue: queue,
            submitter: submitter,
            disposer: disposer,
            journal: journal,
            logger: self.logger,
            events: events
        )
        if !watches, let claims {
            // A file this agent cannot see is fetched from the agent that found it, if that agent has an agentURL.
            let fetcher = (journal as? any SharedQueue).map { shared in
                HandoffFetcher(
                    store: shared,
                    intake: intake,
                    folder: self.journalPath.removingLastComponent().appending("handoff"),
                    logger: self.logger
                ) { ticket, claim in HTTPHandoffTransport(ticket: ticket, claim: claim) }
            }
            await claims.adoptFilesFoundElsewhere(rules: self.config.rules.map(\.name), fetcher: fetcher) {
                await intake.job(for: $0)
            }
            self.logger.info("Watching no folder: converting the files other agents found (settings.watch: false)")
        }
        await self.resubmitUploads(recovery.resubmitted, spool: spool, journal: journal, submitter: submitter)
        let receiving = Uploads.Receiving()
        let uploads = Uploads(
            spool: spool,
            submitter: submitter,
            settings: self.config.settings,
            queuedJobs: { await queue.counts.queued },
            cancellations: cancellations,
            rules: { intake.rules },
            reads: Self.engineReads,
            receiving: receiving,
            logger: self.logger
        )
        let hooks = HookRunner(concurrency: self.config.settings.hookConcurrency, logger: self.logger)
        let runtime = JobRuntime(
            queue: queue,
            completions: JobCompletions(watched: [intake, disposer], tickets: tickets, claims: claims, hooks: hooks),
            watchedFolders: intake.watchedFolders,
            launcher: self.launcher,
            journal: journal,
            settings: self.config.settings,
            lanes: lanes,
            logger: self.logger,
            events: events,
            cancellations: cancellations,
            workers: workers
        )
        let metrics = JobMetrics(
            events: events,
            queue: queue,
            board: board,
            workers: workers,
            engines: lanes.keys,
            agent: (journal as? any SharedQueue)?.agent,
            hooks: hooks
        )
        let api = APIServer(
            api: StatusAPI(
                board: board,
                queue: queue,
                journal: journal,
                intake: intake,
                events: events,
                cancellations: cancellations,
                metrics: metrics,
                uploads: uploads,
                spool: spool,
                handoffs: (journal as? any SharedQueue).flatMap { shared in
                    guard case .postgres(let location) = self.config.settings.store, location.url != nil else {
                        return nil
                    }
                    return HandoffDesk(
                        store: shared,
                        rules: { intake.rules },
                        watchedFolders: intake.watchedFolders,
                        logger: self.logger
                    )
                }
            ),
            socket: self.config.settings.api.socketPath(journal: self.journalPath),
            settings: self.config.settings.api,
            logger: self.logger
        )
        self.logger.info(
            "Chute started",
            metadata: [
                "watches": "\(self.config.watches.map(\.path.string).joined(separator: ", "))",
                "rules": "\(self.config.rules.count)", "pid": "\(getpid())",
            ]
        )
        // Trapped before any service runs: a SIGHUP or SIGUSR1 as soon as the daemon is up must not end it.
        let signals = await UnixSignalsSequence(trapping: .sighup, .sigusr1)
        let signalService = SignalService(
            signals: signals,
            configFile: self.configFile,
            config: self.config,
            intake: intake,
            queue: queue,
            notify: notify,
            logger: self.logger
        )
        // Under systemd: READY, STATUS and STOPPING from the notifier (last, so the first to hear of a shutdown), the
        // watchdog's pings until the very end (first).
        let notifier = notify.map { SystemdNotifier(socket: $0, events: events, queue: queue) }
        let watchdog = notify.flatMap { notify in
            notify.watchdogInterval.map { SystemdWatchdog(socket: notify, interval: $0) }
        }
        var watch = watcher.map { WatchService(watcher: $0, intake: intake) }
        if let notifier {
            watch?.watching = notifier.watcherIsWatching
            if watch == nil { notifier.watcherIsWatching() }
        }
        // Shutdown runs in reverse order: the API stops answering, then the watcher stops taking files, then the
        // runtime drains, then the webhooks' notifier stops; the board and the metrics read events until the end.
        var services: [any Service] = [board, metrics]
        // The daemon sends the notifications, not the workers (they have no network); no notifier without targets.
        if !self.config.allNotifyTargets.isEmpty {
            services.append(Notifier(config: self.config, events: events, journal: journal, logger: self.logger))
        }
        // The disposer stops after the runtime has drained: a source whose timer is still running then is disposed of
        // at the next start.
        // The claims go on after the runtime stopped: the leases of the jobs that finish in the grace period hold.
        services.append(disposer)
        if let claims { services.append(claims) }
        services.append(runtime)
        if let watch { services.append(watch) }
        services += [
            signalService, api,
            HistoryPruning(journal: journal, retention: self.config.settings.historyRetention, logger: self.logger),
            UploadSweeping(
                spool: spool,
                journal: journal,
                retention: self.config.settings.uploadRetention,
                receiving: { receiving.current },
                logger: self.logger
            ),
        ]
        if let watchdog { services.insert(watchdog, at: 0) }
        if let notifier { services.append(notifier) }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services,
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: self.logger
            )
        )
        try await group.run()
        self.logger.info("Chute stopped")
    }

    /// Submits again, with their ids, the jobs of uploads that a stopped daemon had not completed: no scan finds them,
    /// and their tickets must still answer. One whose rule no longer takes uploads, or whose file is gone, fails.
    private func resubmitUploads(
        _ ids: [String],
        spool: UploadSpool,
        journal: any JobStore,
        submitter: JobSubmitter
    ) async {
        for id in ids {
            var logger = self.logger
            logger[metadataKey: "job.id"] = "\(id)"
            do {
                guard let entry = try await journal.entry(id) else { continue }
                let rule = self.config.rules.first { $0.name == entry.rule && $0.upload }
                let file = spool.uploadedFile(of: id)
                let made: Result<Job, UploadRefusal>
                if let rule, let file {
                    made = spool.job(id, file: file, rule: rule, reads: Self.engineReads)
                } else {
                    let why = rule == nil ? "its rule '\(entry.rule)' no longer takes uploads" : "its file is gone"
                    made = .failure(UploadRefusal("after a restart, \(why)"))
                }
                switch made {
                case .success(let job):
                    if await submitter.submit(job) != nil {
                        logger.info("Upload submitted again after a restart", metadata: ["rule.name": "\(entry.rule)"])
                    }
                case .failure(let refusal):
                    try await journal.fail(
                        id,
                        failure: ConversionFailure(.unsupportedInput, refusal.message),
                        sidecar: nil
                    )
                    logger.warning(
                        "Upload not submitted again after a restart",
                        metadata: ["reason": "\(LogText.escaped(refusal.message))"]
                    )
                }
            } catch {
                logger.error("Cannot read the journal", metadata: ["error": "\(LogText.escaped("\(error)"))"])
            }
        }
    }

    /// Whether the engine of a lane reads a sniffed type, as the registry declares it: what an upload is judged by.
    private static func engineReads(_ engine: EngineKind, _ type: MediaType) -> Bool {
        Engines.registry.engine(engine)?.reads(type) ?? false
    }

    /// The scheduler's budget from the settings: `cpuBudget` cores (default: the machine's), `memoryBudget` bytes
    /// (default: half the memory of the machine, or of the daemon's cgroup if that has less), each engine's threads
    /// per job (``EngineRegistry/threadsPerJob(cpuBudget:)``), `agingLimit`, and the engines whose jobs' threads
    /// plan for the whole budget (``EngineRegistry/multiThreadedEngines``).
    package static func budget(_ settings: Settings) -> SchedulerBudget {
        let cpu = settings.cpuBudget ?? ProcessInfo.processInfo.activeProcessorCount
        return SchedulerBudget(
            cpu: cpu,
            memory: settings.memoryBudget ?? Self.availableMemory() / 2,
            threads: Engines.registry.threadsPerJob(cpuBudget: cpu),
            agingLimit: settings.agingLimit,
            multiThreaded: Engines.registry.multiThreadedEngines
        )
    }

    /// The machine's memory (`/proc/meminfo`'s `MemTotal`, which `physicalMemory` reads), or the daemon's cgroup v2
    /// limit (`memory.max`) when that is lower: a container's share is what the jobs may use.
    private static func availableMemory() -> Int64 {
        let machine = Int64(clamping: ProcessInfo.processInfo.physicalMemory)
        let limit = (try? String(contentsOfFile: "/sys/fs/cgroup/memory.max", encoding: .utf8))
            .flatMap { Int64($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        return min(machine, limit ?? .max)
    }

    /// One spec per watched folder; output, done and quarantine folders inside a watched tree are excluded, so that
    /// what Chute writes or moves there never becomes an input.
    private func watchSpecs() -> [WatchSpec] {
        let excluded = Self.excludedFolders(of: self.config)
        return self.config.watches.map { watch in
            WatchSpec(
                root: watch.path,
                recursive: watch.recursive,
                ignore: IgnoreRules(extra: watch.ignore),
                excluded: excluded[watch.path] ?? [],
                poll: watch.poll,
                pollInterval: watch.pollInterval
            )
        }
    }

    /// The output, done and quarantine folders inside each watched folder, which its watch leaves out.
    static func excludedFolders(of config: ChuteConfig) -> [FilePath: [FilePath]] {
        let written = config.rules.flatMap(\.writtenFolders)
        var excluded: [FilePath: [FilePath]] = [:]
        for watch in config.watches where excluded[watch.path] == nil {
            excluded[watch.path] = written.filter { $0 != watch.path && $0.starts(with: watch.path) }
        }
        return excluded
    }
}
