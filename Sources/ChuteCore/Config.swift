import SystemPackage

/// A whole Chute configuration: what to watch, the rules that turn files into jobs, and daemon settings.
///
/// Built from YAML by ``ConfigReader``; every relative path in the file is resolved against the folder that holds
/// the configuration file, so a config keeps working whatever the daemon's working directory is.
package struct ChuteConfig: Sendable, Equatable {
    /// The folders to watch, each recursively unless told otherwise.
    package var watches: [WatchConfig]
    /// The rules, tried in order: the first rule that matches a file wins.
    package var rules: [Rule]
    /// Daemon-wide settings.
    package var settings: Settings
    /// `notify` (list, default none): where notifications of every rule's jobs go, unless a rule has its own list.
    package var notify: [NotifyTarget]

    package init(
        watches: [WatchConfig],
        rules: [Rule],
        settings: Settings = Settings(),
        notify: [NotifyTarget] = []
    ) {
        self.watches = watches
        self.rules = rules
        self.settings = settings
        self.notify = notify
    }

    /// Where the notifications of `rule`'s jobs go: the rule's own `notify:` list, or the top-level one (also for a
    /// rule no longer in the file, whose jobs a reload left running).
    package func notifyTargets(forRule rule: String?) -> [NotifyTarget] {
        self.rules.first { $0.name == rule }?.notify ?? self.notify
    }

    /// Whether a job of some rule would be notified elsewhere (or for other events) under `other` than under this
    /// configuration: the top-level list, or the list in force for a rule of either. A rule added, removed or
    /// changed without a `notify:` of its own changes nothing here.
    package func notificationsDiffer(from other: ChuteConfig) -> Bool {
        guard self.notify == other.notify else { return true }
        let names = Set(self.rules.map(\.name)).union(other.rules.map(\.name))
        return names.contains { self.notifyTargets(forRule: $0) != other.notifyTargets(forRule: $0) }
    }

    /// Every notification target, top-level and of the rules, each once.
    package var allNotifyTargets: [NotifyTarget] {
        var seen = Set<NotifyTarget>()
        return (self.notify + self.rules.flatMap { $0.notify ?? [] }).filter { seen.insert($0).inserted }
    }
}

/// One watched folder.
package struct WatchConfig: Sendable, Equatable {
    /// `path` (string, required): the folder to watch; relative paths are resolved against the config file's folder.
    package var path: FilePath
    /// `recursive` (bool, default true): also watch every sub-folder, including ones created later.
    package var recursive: Bool
    /// `ignore` (list of globs, default empty): extra names to ignore, on top of ``IgnoreRules/defaultPatterns``.
    package var ignore: [GlobPattern]
    /// `poll` (auto, always or never; default auto): whether the folder is polled instead of watched with inotify.
    package var poll: PollMode
    /// `pollInterval` (duration, default 10s): how often a polled folder is listed again.
    package var pollInterval: Duration
    /// `doneSuffix` (such as `.done`, default none): a file is taken only once a marker named after it with this
    /// suffix (`clip.mkv.done`) exists beside it. Markers themselves are never inputs.
    package var doneSuffix: String?
    /// `lockSuffix` (such as `.lock`, default none): a file is not taken while a marker named after it with this
    /// suffix (`clip.mkv.lock`), or a file named just the suffix (`.lock`) in its folder, exists.
    package var lockSuffix: String?
    /// `allowHardLinks` (bool, default false): take files that have more than one name. Refused by default: a hard
    /// link gives an upload a file elsewhere that the uploader could not otherwise reach (and a `source: delete`
    /// would then delete it); download tools that hard-link finished files into a drop folder need it.
    package var allowHardLinks: Bool
    /// `incompleteTimeout` (duration, default the setting's): how long a file of this folder that is not ready (still
    /// open for writing, empty, or cut short) is waited for before it is taken anyway. A scanner that writes whole
    /// files can use `30s`.
    package var incompleteTimeout: Duration?

    package init(
        path: FilePath,
        recursive: Bool = true,
        ignore: [GlobPattern] = [],
        poll: PollMode = .auto,
        pollInterval: Duration = .seconds(10),
        doneSuffix: String? = nil,
        lockSuffix: String? = nil,
        allowHardLinks: Bool = false,
        incompleteTimeout: Duration? = nil
    ) {
        self.path = path
        self.recursive = recursive
        self.ignore = ignore
        self.poll = poll
        self.pollInterval = pollInterval
        self.doneSuffix = doneSuffix
        self.lockSuffix = lockSuffix
        self.allowHardLinks = allowHardLinks
        self.incompleteTimeout = incompleteTimeout
    }
}

extension WatchConfig {
    /// Whether a file name is one of this watch's markers rather than an input: it ends with `doneSuffix` or
    /// `lockSuffix`.
    package func isMarker(_ name: String) -> Bool {
        [self.doneSuffix, self.lockSuffix].contains { suffix in suffix.map { name.hasSuffix($0) } ?? false }
    }

    /// The `doneSuffix` marker of a file (`clip.mkv.done` beside `clip.mkv`), or `nil` when the watch has none.
    package func doneMarker(of path: FilePath) -> FilePath? {
        self.doneSuffix.map { path.appendingToLastComponent($0) }
    }

    /// Why `path` must wait for its markers, or `nil` when it need not: its `doneSuffix` marker is missing, or its
    /// `lockSuffix` marker or a folder-wide lock (a file named just the suffix) exists.
    package func markerWait(for path: FilePath, exists: (FilePath) -> Bool) -> String? {
        let name = path.lastComponent?.string ?? ""
        let folder = path.removingLastComponent()
        if let lock = self.lockSuffix {
            if exists(path.appendingToLastComponent(lock)) { return "its lock file \(name + lock) exists" }
            if exists(folder.appending(lock)) { return "the folder's lock file \(lock) exists" }
        }
        if let marker = self.doneMarker(of: path), !exists(marker) {
            return "its marker \(marker.lastComponent?.string ?? "") is not there yet"
        }
        return nil
    }

    /// The files whose wait a change of the marker `path` may end: `NAME` for `NAME.done` or `NAME.lock`, and every
    /// file of the folder for a folder-wide lock (`nil` then).
    package func markedFile(by path: FilePath) -> (isFolderLock: Bool, file: FilePath?)? {
        guard let component = path.lastComponent else { return nil }
        let name = component.bytes
        if let lock = self.lockSuffix, name.elementsEqual(lock.utf8) { return (true, nil) }
        for suffix in [self.doneSuffix, self.lockSuffix].compactMap({ $0 })
        where name.count > suffix.utf8.count && name.suffix(suffix.utf8.count).elementsEqual(suffix.utf8) {
            let file = FilePath.Component(bytes: name.dropLast(suffix.utf8.count))
            return file.map { (false, path.removingLastComponent().appending($0)) }
        }
        return nil
    }
}

/// Whether a watched folder is polled instead of watched with inotify.
///
/// inotify reports only changes made through this machine's kernel: on NFS, SMB/CIFS and other network file systems
/// a file another machine writes raises no event, and FUSE file systems (Unraid's user shares, mergerfs, sshfs) may
/// not raise them either.
package enum PollMode: String, Sendable, Equatable, CaseIterable {
    /// Poll folders on network and FUSE file systems (told by `statfs`), use inotify elsewhere.
    case auto
    /// Always poll: for file systems the detection does not know, or writers that bypass the kernel.
    case always
    /// Never poll, even on a network file system (only this machine writes into it).
    case never
}

/// Daemon-wide settings (the `settings:` section).
package struct Settings: Sendable, Equatable {
    /// `quietPeriod` (duration, default 2s): how long a file must see no new write or rename event before it is
    /// taken; a later event for the same file starts the period again.
    package var quietPeriod: Duration = .seconds(2)
    /// `incompleteTimeout` (duration, default 10m): how long a quiet file that is still open for writing or whose
    /// structure is cut short is waited for; after that it is taken anyway, and a damaged file fails clearly.
    package var incompleteTimeout: Duration = .seconds(10 * 60)
    /// `retryDelay` (duration, default 30s): how long a job postponed by a transient failure (a full disk, a source
    /// that another program still holds or rewrote during the conversion) waits before it is tried again; the wait
    /// doubles at each postponement in a row, up to 10 minutes.
    package var retryDelay: Duration = .seconds(30)
    /// `retryLimit` (int, default 10): how many times a job is tried when a transient failure of its target (a full
    /// disk) postpones it; at the last try it fails, with the sizes, and is not tried again until the file changes.
    /// A busy source is waited for without limit: each of its versions is a new file.
    package var retryLimit = 10
    /// `gracePeriod` (duration, default 30s): on SIGTERM/SIGINT, how long running jobs may take to finish before
    /// they are cancelled.
    package var gracePeriod: Duration = .seconds(30)
    /// The limits of each job (`jobTimeout`, `memoryLimit`, `cpuTimeLimit`, `maxOutputSize`, `maxPixels`,
    /// `maxImageSide`, `maxFrames`, `maxDuration`); a rule can set its own.
    package var limits = JobLimits()
    /// `niceness` (0–19, default 10): the CPU scheduling niceness of the worker processes, so that conversions yield
    /// to whatever else the machine runs.
    package var niceness = 10
    /// `ioPriority` (`idle`, or a best-effort level from 0, highest, to 7, lowest; default 7): the worker processes'
    /// I/O scheduling.
    package var ioPriority = IOPriority.bestEffort(7)
    /// `concurrency` (map of engine name to int, default: each engine's, from the CPU budget: image = budget,
    /// video = max(1, budget/2), audio = budget): how many jobs each engine runs at once, within the CPU budget.
    package var concurrency: [EngineKind: Int] = [:]
    /// `cpuBudget` (int, default: the number of cores): the cores the running jobs share across every engine; a job
    /// takes as many as its library's threads (a video transcode half the budget, other jobs one).
    package var cpuBudget: Int?
    /// `memoryBudget` (byte size, default: half the machine's memory): the estimated peak memory of the running jobs'
    /// workers stays within it; a job that cannot fit alone runs alone.
    package var memoryBudget: Int64?
    /// `agingLimit` (duration, default 30s): how long a queued job may be passed by cheaper ones; once it has waited
    /// this long, no job queued after it starts before it.
    package var agingLimit: Duration = .seconds(30)
    /// `workerJobs` (int, default 200): a worker process is replaced after this many jobs, bounding whatever a C
    /// library leaks.
    package var workerJobs: Int = 200
    /// `hookConcurrency` (int, default 2): how many rules' `run:` hooks run at once; the others wait their turn.
    package var hookConcurrency: Int = 2
    /// `workerIdle` (duration, default 10s): a worker that has had no job for this long exits and gives its memory
    /// back; the lane's next job starts a new one.
    package var workerIdle: Duration = .seconds(10)
    /// `historyRetention` (duration, default 90d): how long the journal keeps a finished job for the history (the
    /// status API, the web page, `chute jobs`). An older row is deleted only once its source has gone or changed:
    /// while the same file is still there, its row is what keeps it from being converted again.
    package var historyRetention: Duration = .seconds(90 * 86_400)
    /// `uploadRetention` (duration, default 24h): how long an uploaded file, its outputs in the spool and their
    /// sidecars are kept after its job ended.
    package var uploadRetention: Duration = .seconds(86_400)
    /// `maxUploadSize` (byte size, default 16GB): the largest file the API takes; a larger one is refused with 413,
    /// from its `Content-Length` before its body is read, or as soon as a body without one grows past it.
    package var maxUploadSize: Int64 = 16_000_000_000
    /// `maxUploads` (int, default 8): how many uploads the API takes at once; one more is answered 429.
    package var maxUploads = 8
    /// `maxQueued` (int, default 1000): no upload is taken while this many jobs wait in the queue (429, so that a
    /// load balancer tries another instance); files dropped in watched folders wait on disk and are not limited.
    package var maxQueued = 1000
    /// `requestTimeout` (duration, default 10m): how long `POST /api/convert` waits for its job before it cancels it
    /// and answers 503.
    package var requestTimeout: Duration = .seconds(600)
    /// `store` (`sqlite` or a `postgres://USER@HOST:PORT/DATABASE` address, default `sqlite`): where jobs are kept:
    /// the journal beside the rules, or a PostgreSQL database (``StoreLocation``). `storePasswordFile` (path) names the
    /// file holding the database's password; without it the password is read from `CHUTE_STORE_PASSWORD`. With a
    /// database, `agent` (string, default the host name) names this daemon among the agents sharing it, and
    /// `agentLease` (duration, default 30s) is how long its claim on a job holds without a heartbeat; `watch: false`
    /// makes it watch no folder and convert the files that other agents found; `agentURL` (`http://HOST:PORT`) is
    /// where other agents reach this agent's API (`api.listen`) to fetch the files it found and send their outputs
    /// back, for agents that cannot see its folders.
    package var store = StoreLocation.journal
    /// `api` (mapping): where the daemon's status API listens (``APISettings``).
    package var api = APISettings()
    /// `digestAt` (`HH:MM`, default `08:00`) and `digestEvery` (duration, default none): when the notification
    /// digest is sent (``DigestSchedule``).
    package var digest = DigestSchedule()

    package init() {}
}

/// The status API's addresses (`settings.api`).
package struct APISettings: Sendable, Equatable {
    /// `socket` (path, default `.chute/api.sock` beside the journal): the Unix socket of the API, mode 0660, so that
    /// the socket's owner and group may use it.
    package var socket: FilePath?
    /// `listen` (`HOST:PORT`, default none): a TCP address for the API as well, refused without `tokenFile`; use
    /// loopback unless a proxy in front of it encrypts.
    package var listen: String?
    /// `tokenFile` (path, default none): a file holding the bearer token every TCP request must carry.
    package var tokenFile: FilePath?
    /// `idleTimeout` (duration, default 60s): a connection that sends nothing for this long while its request is read
    /// (a stalled upload) or between requests is closed; an upload cut off so leaves nothing.
    package var idleTimeout: Duration = .seconds(60)

    package init(socket: FilePath? = nil, listen: String? = nil, tokenFile: FilePath? = nil) {
        self.socket = socket
        self.listen = listen
        self.tokenFile = tokenFile
    }

    /// The socket's path: `socket` when set, else `api.sock` in the folder of `journal`.
    package func socketPath(journal: FilePath) -> FilePath {
        self.socket ?? journal.removingLastComponent().appending("api.sock")
    }

    /// `listen` split into its host and port, or `nil` when it is not `HOST:PORT` (an IPv6 host in brackets).
    package static func hostAndPort(_ listen: String) -> (host: String, port: Int)? {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
            (1...65535).contains(port)
        else { return nil }
        var host = String(listen[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        return (host, port)
    }
}

/// An I/O scheduling class and level, as `ionice` sets them.
package enum IOPriority: Sendable, Equatable, CustomStringConvertible {
    /// Best-effort, with a level from 0 (highest) to 7 (lowest).
    case bestEffort(Int)
    /// Only when no other process wants the disk.
    case idle

    /// `idle` or the level as a number, as the rules file and the worker's command line write it.
    package var description: String {
        switch self {
        case .bestEffort(let level): return String(level)
        case .idle: return "idle"
        }
    }

    /// Reads `idle` or a level from 0 to 7.
    package init?(_ text: String) {
        if text == "idle" {
            self = .idle
        } else if let level = Int(text), (0...7).contains(level) {
            self = .bestEffort(level)
        } else {
            return nil
        }
    }
}
