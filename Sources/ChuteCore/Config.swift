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

    package init(watches: [WatchConfig], rules: [Rule], settings: Settings = Settings()) {
        self.watches = watches
        self.rules = rules
        self.settings = settings
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

    package init(path: FilePath, recursive: Bool = true, ignore: [GlobPattern] = []) {
        self.path = path
        self.recursive = recursive
        self.ignore = ignore
    }
}

/// Daemon-wide settings (the `settings:` section).
package struct Settings: Sendable, Equatable {
    /// `quietPeriod` (duration, default 2s): how long a file must see no new write or rename event before it is
    /// taken; a later event for the same file starts the period again.
    package var quietPeriod: Duration = .seconds(2)
    /// `gracePeriod` (duration, default 30s): on SIGTERM/SIGINT, how long running jobs may take to finish before
    /// they are cancelled.
    package var gracePeriod: Duration = .seconds(30)
    /// `jobTimeout` (duration, default 30m): a job still running after this long is killed and reported failed.
    package var jobTimeout: Duration = .seconds(30 * 60)
    /// `concurrency` (map of engine name to int, default: image = cores, video = max(1, cores/2), audio = cores):
    /// how many jobs each engine runs at once.
    package var concurrency: [EngineKind: Int] = [:]
    /// `workerJobs` (int, default 200): a worker process is replaced after this many jobs, bounding whatever a C
    /// library leaks.
    package var workerJobs: Int = 200

    package init() {}

    /// The number of jobs an engine runs at once: the configured value, else a default sized to the machine.
    package func concurrency(for engine: EngineKind, cores: Int) -> Int {
        if let configured = self.concurrency[engine] { return configured }
        switch engine {
        case .image, .audio: return max(1, cores)
        case .video: return max(1, cores / 2)
        }
    }
}
