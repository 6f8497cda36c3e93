import SystemPackage
import Yams

extension ConfigReader.Walker {
    /// The top-level keys.
    private static let topLevelKeys = ["watch", "rules", "settings"]
    /// The keys of one `watch:` entry.
    private static let watchKeys = ["path", "recursive", "ignore"]
    /// The keys of one rule.
    private static let ruleKeys = [
        "name", "match", "to", "output", "quality", "width", "height", "strip", "rename", "keepStructure", "onConflict",
        "concurrency", "watch", "minSize", "maxSize", "type", "minAge", "maxAge",
    ]
    /// The keys of `settings:`.
    private static let settingsKeys = ["quietPeriod", "gracePeriod", "jobTimeout", "workerJobs", "concurrency"]

    /// Reads the whole configuration.
    ///
    /// - Returns: the configuration, or `nil` when a required part is unusable; check ``issues`` either way, since a
    ///   configuration is returned even when some optional values were reported and left out.
    mutating func config(from root: Node) -> ChuteConfig? {
        guard let fields = self.fields(of: root, for: nil, label: "at the top level", allowed: Self.topLevelKeys) else {
            return nil
        }
        let watchEntry = self.require("watch", in: fields, hint: " (the list of folders to watch)")
        let watches = watchEntry.flatMap { self.watches(from: $0) }
        let rulesEntry = self.require("rules", in: fields, hint: " (the list of conversion rules)")
        let rules = rulesEntry.flatMap { self.rules(from: $0, watchedFolders: watches?.map(\.path)) }
        var settings = Settings()
        if let entry = fields["settings"] {
            settings = self.settings(from: entry) ?? settings
        }
        guard let watches, let rules else { return nil }
        return ChuteConfig(watches: watches, rules: rules, settings: settings)
    }

    /// Checks that a value is a non-empty list and returns its items.
    ///
    /// - Parameters:
    ///   - entry: the key and its value.
    ///   - plural: what the list holds, for the wrong-type message ("folders to watch").
    ///   - singular: one item, for the empty-list message ("folder").
    private mutating func items(of entry: Entry, plural: String, singular: String) -> [Node]? {
        guard case .sequence(let sequence) = entry.value else {
            let found = Self.describe(entry.value)
            self.report("expected a list of \(plural) for '\(entry.name)', found \(found)", at: entry.value)
            return nil
        }
        guard !sequence.isEmpty else {
            self.report("'\(entry.name)' must list at least one \(singular)", at: entry.value)
            return nil
        }
        return Array(sequence)
    }

    // MARK: - watch

    /// Reads `watch:`, the list of watched folders.
    ///
    /// - Returns: every entry, or `nil` when any of them is unusable (the rules' `watch:` check then stays silent
    ///   rather than report folders that are only missing because of another error).
    private mutating func watches(from entry: Entry) -> [WatchConfig]? {
        guard let items = self.items(of: entry, plural: "folders to watch", singular: "folder") else { return nil }
        var watches: [WatchConfig] = []
        var lines: [FilePath: Int] = [:]
        for (index, item) in items.enumerated() {
            let label = "in watch entry \(index + 1)"
            guard let fields = self.fields(of: item, for: "watch", label: label, allowed: Self.watchKeys) else {
                continue
            }
            guard let pathEntry = self.require("path", in: fields),
                let path = self.path(pathEntry.value, for: "path")
            else {
                continue
            }
            if let line = lines[path] {
                self.report("folder '\(path)' is already watched (line \(line))", at: pathEntry.value)
            } else {
                lines[path] = pathEntry.value.mark?.line ?? 1
            }
            var watch = WatchConfig(path: path)
            if let recursive = fields["recursive"] {
                watch.recursive = self.bool(recursive) ?? watch.recursive
            }
            if let ignore = fields["ignore"] {
                watch.ignore = self.globs(ignore) ?? []
            }
            watches.append(watch)
        }
        return watches.count == items.count ? watches : nil
    }

    // MARK: - rules

    /// Reads `rules:`, checking that names are unique and that each rule's `watch:` names a watched folder.
    ///
    /// - Parameter watchedFolders: the resolved watch paths, or `nil` when `watch:` itself had problems.
    private mutating func rules(from entry: Entry, watchedFolders: [FilePath]?) -> [Rule]? {
        guard let items = self.items(of: entry, plural: "rules", singular: "rule") else { return nil }
        var rules: [Rule] = []
        var firstLines: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            // Names are compared as written, so a duplicate is reported even when either rule has other problems.
            if let nameNode = item.mapping?["name"], !Self.isNull(nameNode), let name = nameNode.scalar?.string,
                !name.isEmpty
            {
                if let line = firstLines[name] {
                    self.report(
                        "duplicate rule name '\(name)' (first used at line \(line)); rule names must be unique",
                        at: nameNode
                    )
                } else {
                    firstLines[name] = nameNode.mark?.line ?? 1
                }
            }
            if let rule = self.rule(from: item, number: index + 1, watchedFolders: watchedFolders) {
                rules.append(rule)
            }
        }
        return rules.count == items.count ? rules : nil
    }

    /// Reads one rule.
    ///
    /// - Returns: the rule, or `nil` when a required key is missing or unusable.
    private mutating func rule(from node: Node, number: Int, watchedFolders: [FilePath]?) -> Rule? {
        let writtenName = node.mapping?["name"]?.scalar?.string ?? ""
        let label = writtenName.isEmpty ? "in rule \(number)" : "in rule '\(writtenName)'"
        guard let fields = self.fields(of: node, for: "rules", label: label, allowed: Self.ruleKeys) else { return nil }
        let name = self.require("name", in: fields).flatMap { self.string($0) }
        let match = self.require("match", in: fields).flatMap { self.globs($0) }
        let format = self.require("to", in: fields).flatMap { self.targetFormat($0) }
        let output = self.require("output", in: fields).flatMap { self.path($0.value, for: $0.name) }
        let options = self.options(from: fields, format: format)
        let filters = self.filters(from: fields)
        var rename = NameTemplate.default
        if let entry = fields["rename"], let text = self.string(entry, expected: "a name template") {
            do {
                rename = try NameTemplate(text)
            } catch {
                self.report("\(error)", at: entry.value)
            }
        }
        let keepStructure = fields["keepStructure"].flatMap { self.bool($0) }
        let onConflict = fields["onConflict"].flatMap { self.conflictPolicy($0) }
        let concurrency = fields["concurrency"].flatMap { self.positiveInteger($0) }
        let watches = fields["watch"].map { self.ruleWatches($0, watchedFolders: watchedFolders) }
        guard let name, let match, let format, let output else { return nil }
        return Rule(
            name: name,
            match: match,
            to: format,
            output: output,
            options: options,
            filters: filters,
            rename: rename,
            keepStructure: keepStructure ?? true,
            onConflict: onConflict ?? .rename,
            concurrency: concurrency,
            watches: watches ?? []
        )
    }

    /// Reads `to:`, a format name or alias.
    private mutating func targetFormat(_ entry: Entry) -> TargetFormat? {
        guard let text = self.string(entry, expected: "a format name") else { return nil }
        guard let format = TargetFormat.named(text) else {
            let known = TargetFormat.all.map(\.name).joined(separator: ", ")
            self.report("unknown target format '\(text)' for 'to'; known formats: \(known)", at: entry.value)
            return nil
        }
        return format
    }

    /// Reads the conversion options, refusing those that the target's engine does not use.
    ///
    /// - Parameter format: the rule's target, or `nil` when `to:` is unusable (applicability is then not checked).
    private mutating func options(from fields: Fields, format: TargetFormat?) -> ConversionOptions {
        var options = ConversionOptions()
        if let entry = fields["quality"], self.applies(entry, to: format, engines: [.image]),
            let quality = self.number(entry)
        {
            if quality > 0 && quality <= 100 {
                options.quality = quality
            } else {
                let written = entry.value.scalar?.string ?? "\(quality)"
                self.report(
                    "'quality' must be a fraction (0 < q <= 1) or a percentage (1 < q <= 100), found \(written)",
                    at: entry.value
                )
            }
        }
        if let entry = fields["width"], self.applies(entry, to: format, engines: [.image, .video]) {
            options.width = self.positiveInteger(entry)
        }
        if let entry = fields["height"], self.applies(entry, to: format, engines: [.image, .video]) {
            options.height = self.positiveInteger(entry)
        }
        if let entry = fields["strip"], self.applies(entry, to: format, engines: [.image]) {
            options.strip = self.bool(entry)
        }
        return options
    }

    /// Whether an option is used by the target's engine; reports it at its key when not.
    private mutating func applies(_ entry: Entry, to format: TargetFormat?, engines: Set<EngineKind>) -> Bool {
        guard let format else { return true }
        guard engines.contains(format.engine) else {
            self.report(
                "'\(entry.name)' does not apply to \(format.category.rawValue) target '\(format.name)'",
                at: entry.key
            )
            return false
        }
        return true
    }

    /// Reads `minSize`, `maxSize`, `type`, `minAge` and `maxAge`, and checks that each range is not empty.
    private mutating func filters(from fields: Fields) -> RuleFilters {
        var filters = RuleFilters()
        let minSize = fields["minSize"]
        let maxSize = fields["maxSize"]
        filters.minSize = minSize.flatMap { self.byteSize($0) }
        filters.maxSize = maxSize.flatMap { self.byteSize($0) }
        if let minSize, let low = filters.minSize, let high = filters.maxSize, low > high {
            self.report(
                "'minSize' (\(ValueParsing.describe(bytes: low))) is larger than 'maxSize' "
                    + "(\(ValueParsing.describe(bytes: high))); no file could match",
                at: minSize.value
            )
        }
        if let entry = fields["type"], let nodes = self.list(entry) {
            for node in nodes {
                guard let text = self.string(node, for: "type", expected: "a media type") else { continue }
                guard let category = MediaCategory(rawValue: text.lowercased()) else {
                    let known = MediaCategory.allCases.map(\.rawValue).joined(separator: ", ")
                    self.report("unknown type '\(text)' for 'type'; known types: \(known)", at: node)
                    continue
                }
                filters.types.insert(category)
            }
        }
        let minAge = fields["minAge"]
        let maxAge = fields["maxAge"]
        filters.minAge = minAge.flatMap { self.duration($0) }
        filters.maxAge = maxAge.flatMap { self.duration($0) }
        if let minAge, let low = filters.minAge, let high = filters.maxAge, low > high {
            self.report(
                "'minAge' (\(ValueParsing.describe(low))) is longer than 'maxAge' (\(ValueParsing.describe(high))); "
                    + "no file could match",
                at: minAge.value
            )
        }
        return filters
    }

    /// Reads `onConflict:`.
    private mutating func conflictPolicy(_ entry: Entry) -> ConflictPolicy? {
        guard let text = self.string(entry, expected: "a conflict policy") else { return nil }
        guard let policy = ConflictPolicy(rawValue: text.lowercased()) else {
            let known = ConflictPolicy.allCases.map(\.rawValue).joined(separator: ", ")
            self.report("unknown value '\(text)' for 'onConflict'; expected one of: \(known)", at: entry.value)
            return nil
        }
        return policy
    }

    /// Reads a rule's `watch:`: each path must be one of the watched folders.
    private mutating func ruleWatches(_ entry: Entry, watchedFolders: [FilePath]?) -> [FilePath] {
        guard let nodes = self.list(entry) else { return [] }
        var paths: [FilePath] = []
        for node in nodes {
            guard let path = self.path(node, for: "watch") else { continue }
            if let watchedFolders, !watchedFolders.contains(path) {
                let known = watchedFolders.map(\.string).joined(separator: ", ")
                let written = node.scalar?.string ?? path.string
                let shown = written == path.string ? "'\(written)'" : "'\(written)' (\(path))"
                self.report("\(shown) is not a watched folder; a rule's 'watch' must name one of: \(known)", at: node)
                continue
            }
            paths.append(path)
        }
        return paths
    }

    // MARK: - settings

    /// Reads `settings:`; an empty `settings:` (every key commented out) keeps the defaults.
    private mutating func settings(from entry: Entry) -> Settings? {
        if Self.isNull(entry.value) { return Settings() }
        let fields = self.fields(of: entry.value, for: "settings", label: "in settings", allowed: Self.settingsKeys)
        guard let fields else { return nil }
        var settings = Settings()
        if let entry = fields["quietPeriod"] {
            settings.quietPeriod = self.duration(entry) ?? settings.quietPeriod
        }
        if let entry = fields["gracePeriod"] {
            settings.gracePeriod = self.duration(entry) ?? settings.gracePeriod
        }
        if let entry = fields["jobTimeout"], let timeout = self.duration(entry) {
            if timeout > .zero {
                settings.jobTimeout = timeout
            } else {
                self.report("'jobTimeout' must be longer than 0", at: entry.value)
            }
        }
        if let entry = fields["workerJobs"] {
            settings.workerJobs = self.positiveInteger(entry) ?? settings.workerJobs
        }
        if let entry = fields["concurrency"] {
            let engines = EngineKind.allCases.map(\.rawValue)
            let limits = self.fields(of: entry.value, for: "concurrency", label: "in 'concurrency'", allowed: engines)
            for engine in EngineKind.allCases {
                guard let limit = limits?[engine.rawValue] else { continue }
                settings.concurrency[engine] = self.positiveInteger(limit)
            }
        }
        return settings
    }
}
