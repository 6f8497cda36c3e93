/// What one engine is: the lane it runs in, the content it reads, the formats it writes and the options it takes.
///
/// Each engine module declares its own; ``EngineRegistry`` puts them together, and everything that knows about
/// formats and options (the rules reader, `chute check`, `chute convert`, the docs tables, the JSON Schema) asks the
/// registry.
package struct EngineDescriptor: Sendable {
    /// How many jobs of an engine run at once when `settings.concurrency` does not say.
    package enum DefaultConcurrency: Sendable {
        /// One per core.
        case perCore
        /// One per two cores (at least one): for engines whose libraries use several threads per job.
        case perTwoCores

        /// The number of jobs on a machine with this many cores.
        package func jobs(cores: Int) -> Int {
            switch self {
            case .perCore: max(1, cores)
            case .perTwoCores: max(1, cores / 2)
            }
        }
    }

    /// Formats of other engines that this engine writes from inputs of other categories: the video engine writes
    /// `jpg` from a video (a poster frame), which the image engine writes from pictures.
    package struct AlsoWrites: Sendable {
        /// The formats' names, declared by their own engines.
        package var formats: [String]
        /// The input categories this engine writes them from.
        package var from: Set<MediaCategory>
        /// The keys of its own options it applies when it writes them (the others do nothing there).
        package var options: Set<String>

        package init(_ formats: [String], from: Set<MediaCategory>, options: Set<String>) {
            self.formats = formats
            self.from = from
            self.options = options
        }
    }

    /// The lane its jobs queue in.
    package var kind: EngineKind
    /// The library behind it, for the docs: "ImageMagick 6 (MagickWand)".
    package var library: String
    /// The kinds of sniffed content it opens; anything else, and content that is not recognised, is refused as
    /// `unsupportedInput` before a decoder sees it.
    package var reads: Set<MediaCategory>
    /// Its jobs at once by default.
    package var concurrency: DefaultConcurrency
    /// The formats it writes, in the order `chute check` lists them.
    package var formats: [TargetFormat]
    /// The options it accepts, in the order the docs list them.
    package var options: [OptionSpec]
    /// Other engines' formats it writes from the inputs it alone reads; the job's lane is chosen from the input's
    /// sniffed type (``TargetFormat/engine(reading:)``).
    package var alsoWrites: [AlsoWrites]
    /// Whether a rule with `groupBy` can join a group into one file of a format it writes: a check of the rule's
    /// target and options that returns what keeps them from it, or `nil` when nothing does. An engine without one
    /// joins no group: the rules reader refuses `groupBy` for its formats and its workers refuse a group job.
    package var joinsGroups: (@Sendable (_ format: TargetFormat, _ options: ConversionOptions) -> String?)?
    /// The name of the worker executable that runs its jobs, installed beside `chute`: only that process links
    /// the engine's C libraries, so the daemon and the other engines' workers never load them.
    package var worker: String

    package init(
        kind: EngineKind,
        library: String,
        reads: Set<MediaCategory>,
        concurrency: DefaultConcurrency,
        formats: [TargetFormat],
        options: [OptionSpec],
        alsoWrites: [AlsoWrites] = [],
        joinsGroups: (@Sendable (_ format: TargetFormat, _ options: ConversionOptions) -> String?)? = nil,
        worker: String
    ) {
        self.kind = kind
        self.library = library
        self.reads = reads
        self.concurrency = concurrency
        self.formats = formats
        self.options = options
        self.alsoWrites = alsoWrites
        self.joinsGroups = joinsGroups
        self.worker = worker
    }

    /// Whether it opens content sniffed as `type`.
    package func reads(_ type: MediaType) -> Bool {
        type.category.map { self.reads.contains($0) } ?? false
    }

    /// Whether it applies the option `key` when it writes another engine's format (``alsoWrites``).
    package func takes(_ key: String, writing format: String) -> Bool {
        self.alsoWrites.contains { $0.formats.contains(format) && $0.options.contains(key) }
    }
}

/// The engines built into Chute, with every format and option they declare.
package struct EngineRegistry: Sendable {
    /// The engines, in registration order.
    package let engines: [EngineDescriptor]
    /// Every option, each key once, in registration order.
    package let options: [OptionSpec]
    private let formatsByName: [String: TargetFormat]

    /// Puts the engines together, and tells each format which other engines write it (``TargetFormat/writers``).
    ///
    /// - Precondition: no two formats share a name or alias, engines that accept the same key declare it with the
    ///   same spec (the same ``RuleOption`` value), and a format another engine also writes exists and has one writer
    ///   per input category: programming errors, caught by the first test that builds it.
    package init(_ engines: [EngineDescriptor]) {
        var engines = engines
        var writers: [String: [MediaCategory: EngineKind]] = [:]
        for engine in engines {
            for also in engine.alsoWrites {
                for name in also.formats {
                    for category in also.from {
                        precondition(writers[name]?[category] == nil, "'\(name)' from \(category) has two writers")
                        writers[name, default: [:]][category] = engine.kind
                    }
                }
            }
        }
        for index in engines.indices {
            for formatIndex in engines[index].formats.indices {
                let name = engines[index].formats[formatIndex].name
                engines[index].formats[formatIndex].writers = writers.removeValue(forKey: name) ?? [:]
            }
        }
        precondition(writers.isEmpty, "no engine declares \(writers.keys.sorted()), which another also writes")
        self.engines = engines
        var byName: [String: TargetFormat] = [:]
        for format in engines.flatMap(\.formats) {
            for name in [format.name] + format.aliases {
                precondition(byName[name] == nil, "format name '\(name)' is declared twice")
                byName[name] = format
            }
        }
        self.formatsByName = byName
        var options: [OptionSpec] = []
        for spec in engines.flatMap(\.options) {
            if let known = options.first(where: { $0.key == spec.key }) {
                precondition(known.summary == spec.summary, "option '\(spec.key)' is declared twice, differently")
                continue
            }
            options.append(spec)
        }
        self.options = options
    }

    /// Every format, in registration order.
    package var formats: [TargetFormat] { self.engines.flatMap(\.formats) }

    /// Looks up a format by name or alias, case-insensitively (`JPEG` → `jpg`, `tif` → `tiff`).
    ///
    /// - Returns: the format, or `nil` when no engine writes it.
    package func format(named name: String) -> TargetFormat? {
        self.formatsByName[name.lowercased()]
    }

    /// The engine of a lane.
    package func engine(_ kind: EngineKind) -> EngineDescriptor? {
        self.engines.first { $0.kind == kind }
    }

    /// The number of jobs each engine runs at once: the settings' value, else the engine's default for the CPU budget
    /// (`cores`, the number of cores unless `cpuBudget` says).
    package func lanes(settings: Settings, cores: Int) -> [EngineKind: Int] {
        Dictionary(
            uniqueKeysWithValues: self.engines.map { engine in
                (engine.kind, settings.concurrency[engine.kind] ?? engine.concurrency.jobs(cores: cores))
            }
        )
    }

    /// The threads each engine's library gets per job, which are also the cores a job of that engine takes from the
    /// CPU budget: half the budget (at least one) for engines whose libraries use several threads per job
    /// (``EngineDescriptor/DefaultConcurrency/perTwoCores``, the video encoders), so that a long transcode always
    /// leaves cores to the jobs queued behind it; one for the others.
    package func threadsPerJob(cpuBudget: Int) -> [EngineKind: Int] {
        Dictionary(
            uniqueKeysWithValues: self.engines.map { engine in
                switch engine.concurrency {
                case .perCore: (engine.kind, 1)
                case .perTwoCores: (engine.kind, max(1, cpuBudget / 2))
                }
            }
        )
    }

    /// The engines whose libraries use several threads per job (``EngineDescriptor/DefaultConcurrency/perTwoCores``,
    /// the video encoders).
    package var multiThreadedEngines: Set<EngineKind> {
        Set(self.engines.filter { $0.concurrency == .perTwoCores }.map(\.kind))
    }

    /// The spec of a rule key, or `nil` when no engine takes it.
    package func option(_ key: String) -> OptionSpec? {
        self.options.first { $0.key == key }
    }

    /// The keys every engine accepts, in registration order.
    package var optionKeys: [String] { self.options.map(\.key) }

    /// Whether `key` sets an option of `format`: its own engine accepts it and the spec does not narrow it to other
    /// formats, or another engine that writes it (from other inputs) accepts it and the spec names the format (the
    /// video engine's `start` applies to `jpg`, its `crf` does not).
    package func applies(_ key: String, to format: TargetFormat) -> Bool {
        self.writers(of: format).contains { engine in
            guard let spec = engine.options.first(where: { $0.key == key }) else { return false }
            return engine.kind == format.engine
                ? spec.formats?.contains(format.name) ?? true : engine.takes(key, writing: format.name)
        }
    }

    /// The engines that write `format`: its own first, then those that write it from other inputs.
    package func writers(of format: TargetFormat) -> [EngineDescriptor] {
        let kinds = [format.engine] + self.engines.map(\.kind).filter { format.writers.values.contains($0) }
        return kinds.compactMap(self.engine)
    }

    /// Which engine writes `format` from which inputs, for `chute check` and `chute explain`: `image engine` alone,
    /// or `image engine; video engine from video`.
    package func writing(_ format: TargetFormat) -> String {
        var parts = ["\(format.engine.rawValue) engine"]
        for engine in self.writers(of: format).dropFirst() {
            let categories = format.writers.filter { $0.value == engine.kind }.map(\.key.rawValue).sorted()
            parts.append("\(engine.kind.rawValue) engine from \(categories.joined(separator: " and "))")
        }
        return parts.joined(separator: "; ")
    }

    /// The target formats an option applies to, in registration order.
    package func formats(accepting key: String) -> [TargetFormat] {
        self.formats.filter { self.applies(key, to: $0) }
    }
}
