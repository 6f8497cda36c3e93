import Foundation
import SystemPackage
import Yams

extension ConfigReader {
    /// Every key a `watch:` entry, a rule, `settings:` and a `notify:` entry accept, in the order of the schema;
    /// `chute check`'s summary shows each of them that a file sets (a test holds it to that).
    package static func schemaKeys(
        registry: EngineRegistry
    ) -> (watch: [String], rule: [String], settings: [String], notify: [String]) {
        (Walker.watchKeys, Walker.ruleKeys(registry: registry), Walker.settingsKeys, Walker.notifyKeys)
    }
}

extension ConfigReader.Walker {
    /// The top-level keys.
    private static let topLevelKeys = ["watch", "rules", "settings", "notify"]
    /// The keys of one `watch:` entry.
    static let watchKeys = [
        "path", "recursive", "ignore", "poll", "pollInterval", "doneSuffix", "lockSuffix",
        "allowHardLinks", "incompleteTimeout",
    ]
    /// The keys of a rule that say which files it takes and where its outputs go, before the option keys.
    static let ruleHeadKeys = ["name", "match", "to", "output"]
    /// The keys of a rule that come after the option keys.
    static let ruleTailKeys =
        [
            "rename", "keepStructure", "onConflict", "concurrency", "watch", "minSize", "maxSize", "type", "minAge",
            "maxAge", "owner", "group", "mode", "source", "doneFolder", "quarantine", "onDuplicate", "sidecars",
            "groupBy", "notify", "upload", "uploadOutput", "run", "pre", "runTimeout",
        ]
        + JobLimits.keys
    /// The keys of one rule: the fixed ones and every engine's options.
    static func ruleKeys(registry: EngineRegistry) -> [String] {
        Self.ruleHeadKeys + registry.optionKeys + Self.ruleTailKeys
    }
    /// The keys of `settings:`.
    static let settingsKeys =
        [
            "quietPeriod", "incompleteTimeout", "retryDelay", "retryLimit", "gracePeriod", "workerJobs", "workerIdle",
            "concurrency",
        ]
        + ["niceness", "ioPriority", "cpuBudget", "memoryBudget", "agingLimit"] + JobLimits.keys
        + ["historyRetention", "uploadRetention", "maxUploadSize", "maxUploads", "maxQueued", "requestTimeout", "api"]
        + [
            "digestAt", "digestEvery", "store", "storePasswordFile", "agent", "agentLease", "watch", "agentURL",
            "hookConcurrency",
        ]
    /// The keys of one `notify:` entry: `url` (a webhook) or `ntfy` (a topic), and `on`.
    static let notifyKeys = ["url", "ntfy", "on"]

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
        var settings = Settings()
        if let entry = fields["settings"] {
            settings = self.settings(from: entry) ?? settings
        }
        let rulesEntry = self.require("rules", in: fields, hint: " (the list of conversion rules)")
        let rules = rulesEntry.flatMap {
            self.rules(from: $0, watchedFolders: watches?.map(\.path), limits: settings.limits)
        }
        let notify = fields["notify"].flatMap { self.notifyTargets($0) }
        guard let watches, let rules else { return nil }
        return ChuteConfig(watches: watches, rules: rules, settings: settings, notify: notify ?? [])
    }

    // MARK: - notify

    /// Reads a `notify:` list, at the top level or in a rule; an empty list is allowed (a rule's `notify: []` sends
    /// nothing).
    ///
    /// - Returns: the targets that could be read (each problem is reported).
    private mutating func notifyTargets(_ entry: Entry) -> [NotifyTarget]? {
        guard case .sequence(let sequence) = entry.value else {
            self.report(
                "expected a list of notification targets for 'notify', found \(Self.describe(entry.value))",
                at: entry.value
            )
            return nil
        }
        var targets: [NotifyTarget] = []
        for (index, item) in sequence.enumerated() {
            let label = "in notify entry \(index + 1)"
            guard let fields = self.fields(of: item, for: "notify", label: label, allowed: Self.notifyKeys) else {
                continue
            }
            let address: (kind: NotifyTarget.Kind, entry: Entry)
            switch (fields["url"], fields["ntfy"]) {
            case (let url?, nil):
                address = (.webhook, url)
            case (nil, let ntfy?):
                address = (.ntfy, ntfy)
            case (_?, let ntfy?):
                self.report("a notify entry has 'url' (a webhook) or 'ntfy' (a topic), not both", at: ntfy.key)
                continue
            case (nil, nil):
                self.report("missing 'url' (a webhook) or 'ntfy' (a topic) \(label)", at: item)
                continue
            }
            guard let url = self.string(address.entry, expected: "an http:// or https:// URL") else { continue }
            if let problem = NotifyTarget.problem(with: url) {
                self.report(
                    "invalid URL '\(NotifyTarget.redacted(url))' for '\(address.entry.name)': \(problem)",
                    at: address.entry.value
                )
                continue
            }
            var target = NotifyTarget(kind: address.kind, url: url)
            if let on = fields["on"] {
                guard let events = self.notifyEvents(on) else { continue }
                target.events = events
            }
            targets.append(target)
        }
        return targets
    }

    /// Reads `on:`, one event or a list of them.
    private mutating func notifyEvents(_ entry: Entry) -> Set<NotifyEvent>? {
        guard let nodes = self.list(entry) else { return nil }
        var events = Set<NotifyEvent>()
        for node in nodes {
            guard let text = self.string(node, for: "on", expected: "an event") else { return nil }
            guard let event = NotifyEvent(rawValue: text.lowercased()) else {
                let known = NotifyEvent.allCases.map(\.rawValue).joined(separator: ", ")
                self.report("unknown event '\(text)' for 'on'; expected one of: \(known)", at: node)
                return nil
            }
            events.insert(event)
        }
        return events
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
            if let poll = fields["poll"] {
                watch.poll = self.choice(poll, of: PollMode.self, expected: "auto, always or never") ?? watch.poll
            }
            if let entry = fields["pollInterval"], let interval = self.duration(entry) {
                if interval >= .milliseconds(100) {
                    watch.pollInterval = interval
                } else {
                    self.report("'pollInterval' must be at least 100ms", at: entry.value)
                }
            }
            if let entry = fields["allowHardLinks"] {
                watch.allowHardLinks = self.bool(entry) ?? watch.allowHardLinks
            }
            if let entry = fields["incompleteTimeout"] {
                watch.incompleteTimeout = self.duration(entry)
            }
            if let entry = fields["doneSuffix"] {
                watch.doneSuffix = self.markerSuffix(entry)
            }
            if let entry = fields["lockSuffix"] {
                watch.lockSuffix = self.markerSuffix(entry)
            }
            if let done = watch.doneSuffix, done == watch.lockSuffix, let entry = fields["lockSuffix"] {
                self.report("'lockSuffix' and 'doneSuffix' must differ", at: entry.value)
            }
            watches.append(watch)
        }
        return watches.count == items.count ? watches : nil
    }

    /// Reads `doneSuffix` or `lockSuffix`: a dot and at least one more character, no slash, such as `.done`.
    private mutating func markerSuffix(_ entry: Entry) -> String? {
        guard let text = self.string(entry, expected: "a file name suffix such as \".done\"") else { return nil }
        guard text.count >= 2, text.hasPrefix("."), !text.contains("/") else {
            self.report(
                "expected a file name suffix that starts with a dot, such as \".done\", for '\(entry.name)', "
                    + "found '\(text)'",
                at: entry.value
            )
            return nil
        }
        return text
    }

    // MARK: - rules

    /// Reads `rules:`, checking that names are unique and that each rule's `watch:` names a watched folder.
    ///
    /// - Parameter watchedFolders: the resolved watch paths, or `nil` when `watch:` itself had problems.
    private mutating func rules(from entry: Entry, watchedFolders: [FilePath]?, limits: JobLimits) -> [Rule]? {
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
            if let rule = self.rule(from: item, number: index + 1, watchedFolders: watchedFolders, limits: limits) {
                rules.append(rule)
            }
        }
        return rules.count == items.count ? rules : nil
    }

    /// Reads one rule.
    ///
    /// - Returns: the rule, or `nil` when a required key is missing or unusable.
    private mutating func rule(from node: Node, number: Int, watchedFolders: [FilePath]?, limits: JobLimits) -> Rule? {
        let writtenName = node.mapping?["name"]?.scalar?.string ?? ""
        let label = writtenName.isEmpty ? "in rule \(number)" : "in rule '\(writtenName)'"
        let allowed = Self.ruleKeys(registry: self.registry)
        guard let fields = self.fields(of: node, for: "rules", label: label, allowed: allowed) else { return nil }
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
        let ownership = self.ownership(from: fields)
        let sourcePolicy = self.sourcePolicy(from: fields)
        if case .move(let folder) = sourcePolicy, let watchedFolders, watchedFolders.contains(folder),
            let entry = fields["doneFolder"]
        {
            // Sources moved into the folder they came from would stay where they are, and be taken again.
            self.report(
                "'doneFolder' is the watched folder \(folder): a source moved there stays in the watch; name a folder "
                    + "outside every watched folder (such as ./done)",
                at: entry.value
            )
        }
        let quarantine = fields["quarantine"].flatMap { self.path($0.value, for: $0.name) }
        let limits = self.limits(from: fields, base: limits)
        let onDuplicate = fields["onDuplicate"].flatMap {
            self.choice($0, of: DuplicatePolicy.self, expected: "skip or convert")
        }
        let sidecars = fields["sidecars"].flatMap { self.sidecarPlacement($0) }
        let grouping = fields["groupBy"].flatMap { self.grouping($0, format: format, options: options) }
        let notify = fields["notify"].flatMap { self.notifyTargets($0) }
        let upload = fields["upload"].flatMap { self.bool($0) }
        let uploadOutput = fields["uploadOutput"].flatMap {
            self.choice($0, of: UploadOutput.self, expected: "spool or folder")
        }
        let (hook, preHook) = self.hooks(from: fields)
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
            watches: watches ?? [],
            ownership: ownership,
            sourcePolicy: sourcePolicy,
            quarantine: quarantine,
            limits: limits,
            onDuplicate: onDuplicate ?? .skip,
            sidecars: sidecars ?? .besideOutput,
            grouping: grouping,
            notify: notify,
            upload: upload ?? false,
            uploadOutput: uploadOutput ?? .spool,
            hook: hook,
            preHook: preHook
        )
    }

    /// Reads `run:` (a command as a list, or a mapping of `command` and `on`), `pre:` (a command as a list) and
    /// `runTimeout`, which means nothing without one of them.
    private mutating func hooks(from fields: Fields) -> (run: RuleHook?, pre: RuleHook?) {
        let timeout = fields["runTimeout"].flatMap { entry -> Duration? in
            guard let timeout = self.duration(entry) else { return nil }
            guard timeout > .zero else {
                self.report("'runTimeout' must be longer than 0", at: entry.value)
                return nil
            }
            return timeout
        }
        if fields["run"] == nil, fields["pre"] == nil, let entry = fields["runTimeout"] {
            self.report("'runTimeout' is only used with 'run' or 'pre'", at: entry.key)
        }
        let pre = fields["pre"].flatMap { entry in
            self.command(entry, for: "pre").map {
                RuleHook(command: $0, events: [], timeout: timeout ?? RuleHook.defaultTimeout)
            }
        }
        return (fields["run"].flatMap { self.hook($0, timeout: timeout) }, pre)
    }

    /// Reads `run:` (a command as a list, or a mapping of `command` and `on`).
    private mutating func hook(_ entry: Entry, timeout: Duration?) -> RuleHook? {
        var events: Set<NotifyEvent> = [.completed]
        var commandEntry = entry
        if case .mapping = entry.value {
            guard let hook = self.fields(of: entry.value, for: "run", label: "in 'run'", allowed: ["command", "on"])
            else { return nil }
            guard let command = hook["command"] else {
                self.report("missing 'command' in 'run'", at: entry.value)
                return nil
            }
            commandEntry = command
            if let on = hook["on"] {
                guard let chosen = self.notifyEvents(on) else { return nil }
                if chosen.contains(.digest) {
                    self.report("a hook runs after a job: 'on' takes completed, failed or cancelled", at: on.value)
                    return nil
                }
                events = chosen
            }
        }
        guard let command = self.command(commandEntry, for: "run") else { return nil }
        return RuleHook(command: command, events: events, timeout: timeout ?? RuleHook.defaultTimeout)
    }

    /// Reads a hook's command: a program by its absolute path, and its arguments.
    private mutating func command(_ entry: Entry, for key: String) -> [String]? {
        guard let nodes = self.items(of: entry, plural: "a program and its arguments", singular: "program") else {
            return nil
        }
        var command: [String] = []
        for node in nodes {
            guard let argument = self.string(node, for: key, expected: "a program or an argument") else { return nil }
            command.append(argument)
        }
        if let problem = RuleHook.problem(with: command) {
            self.report("'\(key)': \(problem)", at: entry.value)
            return nil
        }
        return command
    }

    /// Reads `groupBy:`; only an engine that joins groups takes it, for the targets and options its check allows
    /// (``EngineDescriptor/joinsGroups``): PDFs and images merged into a PDF, images into an animation or a contact
    /// sheet, clips into one video or sound file.
    private mutating func grouping(_ entry: Entry, format: TargetFormat?, options: ConversionOptions) -> RuleGrouping? {
        guard let grouping = self.choice(entry, of: RuleGrouping.self, expected: "folder") else { return nil }
        guard let format else { return grouping }
        guard let check = self.registry.engine(format.engine)?.joinsGroups else {
            self.report(
                "'groupBy' makes one output of several files, which 'to: \(format.name)' does not; a group becomes a "
                    + "PDF, an animated gif or webp, a contact sheet (an image target with 'tiles'), or one video or "
                    + "sound file",
                at: entry.value
            )
            return nil
        }
        if let problem = check(format, options) {
            self.report(problem, at: entry.value)
            return nil
        }
        return grouping
    }

    /// Reads `sidecars:`: `beside`, `failed-only`, or a folder (resolved as output folders are).
    private mutating func sidecarPlacement(_ entry: Entry) -> SidecarPlacement? {
        guard let text = self.string(entry, expected: "beside, failed-only or a folder") else { return nil }
        switch text.lowercased() {
        case "beside": return .besideOutput
        case "failed-only": return .failedOnly
        default: return self.path(entry.value, for: entry.name).map { .folder($0) }
        }
    }

    /// Reads `source` and `doneFolder`: `move` needs the folder, and the folder means nothing without `move`.
    private mutating func sourcePolicy(from fields: Fields) -> SourcePolicy {
        let folder = fields["doneFolder"].flatMap { self.path($0.value, for: $0.name) }
        let choice = fields["source"].flatMap {
            self.choice($0, of: SourcePolicy.Choice.self, expected: "keep, move or delete")
        }
        switch choice {
        case .move:
            if let folder { return .move(to: folder) }
            if let entry = fields["source"] {
                self.report("'source: move' needs 'doneFolder', the folder the sources are moved to", at: entry.value)
            }
        case .delete:
            return .delete
        case .keep, nil:
            break
        }
        if choice != .move, let entry = fields["doneFolder"] {
            self.report("'doneFolder' is only used with 'source: move'", at: entry.value)
        }
        return .keep
    }

    /// Reads the limit keys of a rule or of `settings:`; what is not set keeps its value from `base`.
    private mutating func limits(from fields: Fields, base: JobLimits) -> JobLimits {
        var limits = base
        if let entry = fields["jobTimeout"], let timeout = self.duration(entry) {
            if timeout > .zero {
                limits.timeout = timeout
            } else {
                self.report("'jobTimeout' must be longer than 0", at: entry.value)
            }
        }
        if let entry = fields["memoryLimit"], let bytes = self.byteSize(entry) {
            if bytes >= JobLimits.smallestMemory {
                limits.memory = bytes
            } else {
                self.report(
                    "'memoryLimit' must be at least \(ValueParsing.describe(bytes: JobLimits.smallestMemory)), which a "
                        + "worker needs for itself",
                    at: entry.value
                )
            }
        }
        if let entry = fields["cpuTimeLimit"], let time = self.duration(entry) {
            if time >= .seconds(1) {
                limits.cpuTime = time
            } else {
                self.report("'cpuTimeLimit' must be at least 1s", at: entry.value)
            }
        }
        if let entry = fields["maxOutputSize"], let bytes = self.byteSize(entry) {
            if bytes > 0 {
                limits.outputSize = bytes
            } else {
                self.report("'maxOutputSize' must be larger than 0", at: entry.value)
            }
        }
        if let entry = fields["maxPixels"] {
            limits.pixels = self.positiveInteger(entry) ?? limits.pixels
        }
        if let entry = fields["maxImageSide"] {
            limits.imageSide = self.positiveInteger(entry) ?? limits.imageSide
        }
        if let entry = fields["maxFrames"] {
            limits.frames = self.positiveInteger(entry) ?? limits.frames
        }
        if let entry = fields["maxDuration"], let duration = self.duration(entry) {
            if duration > .zero {
                limits.duration = duration
            } else {
                self.report("'maxDuration' must be longer than 0", at: entry.value)
            }
        }
        return limits
    }

    /// Reads `owner`, `group` and `mode`. Names are looked up now, so that a typo is an error of the rules file.
    private mutating func ownership(from fields: Fields) -> OutputOwnership {
        var ownership = OutputOwnership()
        if let entry = fields["owner"] {
            ownership.owner = self.account(entry, kind: "user", lookup: AccountLookup.userID(named:))
        }
        if let entry = fields["group"] {
            ownership.group = self.account(entry, kind: "group", lookup: AccountLookup.groupID(named:))
        }
        // The text as written: YAML would read an unquoted 0640 as the decimal 640 or as octal, by version.
        if let entry = fields["mode"], let text = self.string(entry, expected: "octal permissions such as \"0640\"") {
            if text.count <= 4, text.allSatisfy({ ("0"..."7").contains($0) }), let mode = UInt32(text, radix: 8),
                mode <= 0o777
            {
                ownership.mode = mode
            } else {
                self.report(
                    "expected octal permissions from 000 to 777 for 'mode', such as \"0640\", found '\(text)'",
                    at: entry.value
                )
            }
        }
        return ownership
    }

    /// Reads a user or group: a numeric id as it is, a name through the account database.
    private mutating func account(_ entry: Entry, kind: String, lookup: (String) -> UInt32?) -> UInt32? {
        guard let text = self.string(entry, expected: "a \(kind) name or id") else { return nil }
        if let id = UInt32(text) { return id }
        guard let id = lookup(text) else {
            self.report("unknown \(kind) '\(text)' for '\(entry.name)'", at: entry.value)
            return nil
        }
        return id
    }

    /// Reads `to:`, a format name or alias.
    private mutating func targetFormat(_ entry: Entry) -> TargetFormat? {
        guard let text = self.string(entry, expected: "a format name") else { return nil }
        guard let format = self.registry.format(named: text) else {
            let known = self.registry.formats.map(\.name).joined(separator: ", ")
            self.report("unknown target format '\(text)' for 'to'; known formats: \(known)", at: entry.value)
            return nil
        }
        return format
    }

    /// Reads a mapping of option keys alone for `format`, with the checks of a rule.
    /// Reads a mapping of job limit keys alone (``ConfigReader/limits(_:base:registry:)``) over `base`.
    mutating func limits(of node: Node, base: JobLimits) -> JobLimits? {
        guard let fields = self.fields(of: node, for: nil, label: "in the limits", allowed: JobLimits.keys) else {
            return nil
        }
        return self.limits(from: fields, base: base)
    }

    mutating func options(of node: Node, format: TargetFormat) -> ConversionOptions? {
        let allowed = self.registry.optionKeys
        guard let fields = self.fields(of: node, for: nil, label: "in the options", allowed: allowed) else {
            return nil
        }
        return self.options(from: fields, format: format)
    }

    /// Reads the conversion options, each as its ``OptionSpec`` says, refusing those that the target does not take.
    ///
    /// Each value is first read on its own (its syntax and range); then each spec's check sees the target and every
    /// option, for what depends on them (a codec the container cannot hold, a key that needs another).
    ///
    /// - Parameter format: the rule's target, or `nil` when `to:` is unusable (only the syntax is then checked).
    private mutating func options(from fields: Fields, format: TargetFormat?) -> ConversionOptions {
        var options = ConversionOptions()
        var read: [(spec: OptionSpec, entry: Entry)] = []
        for spec in self.registry.options {
            guard let entry = fields[spec.key] else { continue }
            if let format, !self.registry.applies(spec.key, to: format) {
                self.report(
                    "'\(entry.name)' does not apply to \(format.category.rawValue) target '\(format.name)'",
                    at: entry.key
                )
                continue
            }
            guard let value = self.optionValue(entry, syntax: spec.syntax) else { continue }
            options[spec.key] = value
            read.append((spec, entry))
        }
        guard let format else { return options }
        let context = OptionContext(format: format, options: options)
        for (spec, entry) in read {
            guard let check = spec.check, let value = options[spec.key], let problem = check(value, context) else {
                continue
            }
            self.report(problem.message, at: problem.place == .key ? entry.key : entry.value)
            options[spec.key] = nil
        }
        return options
    }

    /// Reads one option's value as its syntax says.
    private mutating func optionValue(_ entry: Entry, syntax: OptionSyntax) -> OptionValue? {
        switch syntax {
        case .flag:
            return self.bool(entry).map(OptionValue.bool)
        case .integer(let range) where range.upperBound == Int.max && range.lowerBound == 1:
            return self.positiveInteger(entry).map(OptionValue.integer)
        case .integer(let range):
            let what = "between \(range.lowerBound) and \(range.upperBound)"
            return self.wholeNumber(entry, in: range, what: what).map(OptionValue.integer)
        case .number(let range):
            guard let number = self.number(entry) else { return nil }
            guard range.contains(number) else {
                let written = entry.value.scalar?.string ?? "\(number)"
                self.report("'\(entry.name)' must be \(range.words), found \(written)", at: entry.value)
                return nil
            }
            return .number(number)
        case .choice(let choices):
            guard let text = self.string(entry, expected: "one of: " + choices.joined(separator: ", ")) else {
                return nil
            }
            guard choices.contains(text.lowercased()) else {
                let known = choices.joined(separator: ", ")
                self.report("unknown value '\(text)' for '\(entry.name)'; expected one of: \(known)", at: entry.value)
                return nil
            }
            return .text(text.lowercased())
        case .bitrate(let range):
            return self.bitrate(entry, in: range).map(OptionValue.integer)
        case .byteSize(let range):
            guard let bytes = self.byteSize(entry) else { return nil }
            guard range.contains(bytes) else {
                self.report(
                    "'\(entry.name)' must be between \(ValueParsing.describe(bytes: range.lowerBound)) and "
                        + "\(ValueParsing.describe(bytes: range.upperBound)), found \(ValueParsing.describe(bytes: bytes))",
                    at: entry.value
                )
                return nil
            }
            return .integer(Int(bytes))
        case .text(let grammar):
            guard let text = self.string(entry, expected: grammar.name) else { return nil }
            if let problem = grammar.validate(text) {
                self.report("invalid value '\(text)' for '\(entry.name)': \(problem)", at: entry.value)
                return nil
            }
            return .text(text)
        }
    }

    /// Reads one of an enumeration's values, case-insensitively.
    ///
    /// - Parameter expected: what the value is, for the wrong-type message ("a video codec").
    private mutating func choice<Choice: RawRepresentable & CaseIterable>(
        _ entry: Entry,
        of type: Choice.Type,
        expected: String
    ) -> Choice? where Choice.RawValue == String {
        guard let text = self.string(entry, expected: expected) else { return nil }
        guard let choice = Choice(rawValue: text.lowercased()) else {
            let known = Choice.allCases.map(\.rawValue).joined(separator: ", ")
            self.report("unknown value '\(text)' for '\(entry.name)'; expected one of: \(known)", at: entry.value)
            return nil
        }
        return choice
    }

    /// Reads a whole number within `range`.
    ///
    /// - Parameter what: the range in words, for the out-of-range message ("between 0 and 51 for h264").
    private mutating func wholeNumber(_ entry: Entry, in range: ClosedRange<Int>, what: String) -> Int? {
        guard Self.tag(of: entry.value) == .int, let value = entry.value.int else {
            let found = Self.describe(entry.value)
            self.report("expected a whole number for '\(entry.name)', found \(found)", at: entry.value)
            return nil
        }
        guard range.contains(value) else {
            self.report("'\(entry.name)' must be \(what), found \(value)", at: entry.value)
            return nil
        }
        return value
    }

    /// Reads a bitrate in bits per second: a whole number (`800000`) or a number with `k` (thousands) or `M`
    /// (millions), such as `128k` or `2.5M`.
    private mutating func bitrate(_ entry: Entry, in range: ClosedRange<Int>) -> Int? {
        guard case .scalar(let scalar) = entry.value, !Self.isNull(entry.value) else {
            self.report("expected a bitrate for '\(entry.name)', found \(Self.describe(entry.value))", at: entry.value)
            return nil
        }
        var text = Substring(scalar.string)
        var multiplier = 1.0
        if let unit = text.last, unit == "k" || unit == "K" || unit == "M" {
            multiplier = unit == "M" ? 1_000_000 : 1000
            text.removeLast()
        }
        let isPlainNumber = !text.isEmpty && text.allSatisfy { $0.isASCII && ($0.isNumber || $0 == ".") }
        guard isPlainNumber, let number = Double(text), number.isFinite else {
            self.report(
                "invalid bitrate '\(scalar.string)' for '\(entry.name)': expected bits per second, as a whole number "
                    + "or with k or M, such as 128k or 2.5M",
                at: entry.value
            )
            return nil
        }
        let bits = Int((number * multiplier).rounded())
        guard range.contains(bits) else {
            self.report(
                "'\(entry.name)' must be between \(Self.describe(bitrate: range.lowerBound)) and "
                    + "\(Self.describe(bitrate: range.upperBound)), found \(scalar.string)",
                at: entry.value
            )
            return nil
        }
        return bits
    }

    /// Writes a bitrate the short way: `8k`, `512k`, `1000M`.
    private static func describe(bitrate: Int) -> String {
        bitrate % 1_000_000 == 0 ? "\(bitrate / 1_000_000)M" : "\(bitrate / 1000)k"
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
        if let entry = fields["incompleteTimeout"] {
            settings.incompleteTimeout = self.duration(entry) ?? settings.incompleteTimeout
        }
        if let entry = fields["retryDelay"], let delay = self.duration(entry) {
            if delay > .zero {
                settings.retryDelay = delay
            } else {
                self.report("'retryDelay' must be longer than 0", at: entry.value)
            }
        }
        if let entry = fields["retryLimit"] {
            settings.retryLimit = self.positiveInteger(entry) ?? settings.retryLimit
        }
        if let entry = fields["gracePeriod"] {
            settings.gracePeriod = self.duration(entry) ?? settings.gracePeriod
        }
        settings.limits = self.limits(from: fields, base: settings.limits)
        if let entry = fields["niceness"] {
            settings.niceness = self.wholeNumber(entry, in: 0...19, what: "between 0 and 19") ?? settings.niceness
        }
        if let entry = fields["ioPriority"], let text = self.string(entry, expected: "idle or a level from 0 to 7") {
            if let priority = IOPriority(text) {
                settings.ioPriority = priority
            } else {
                self.report("expected idle or a level from 0 to 7 for 'ioPriority', found '\(text)'", at: entry.value)
            }
        }
        if let entry = fields["workerJobs"] {
            settings.workerJobs = self.positiveInteger(entry) ?? settings.workerJobs
        }
        if let entry = fields["hookConcurrency"] {
            settings.hookConcurrency = self.positiveInteger(entry) ?? settings.hookConcurrency
        }
        if let entry = fields["workerIdle"] {
            settings.workerIdle = self.duration(entry) ?? settings.workerIdle
        }
        if let entry = fields["cpuBudget"] {
            settings.cpuBudget = self.positiveInteger(entry)
        }
        if let entry = fields["memoryBudget"], let bytes = self.byteSize(entry) {
            if bytes > 0 {
                settings.memoryBudget = bytes
            } else {
                self.report("'memoryBudget' must be more than 0", at: entry.value)
            }
        }
        if let entry = fields["agingLimit"] {
            settings.agingLimit = self.duration(entry) ?? settings.agingLimit
        }
        if let entry = fields["historyRetention"], let retention = self.duration(entry) {
            if retention > .zero {
                settings.historyRetention = retention
            } else {
                self.report("'historyRetention' must be longer than 0", at: entry.value)
            }
        }
        if let entry = fields["uploadRetention"], let retention = self.duration(entry) {
            if retention > .zero {
                settings.uploadRetention = retention
            } else {
                self.report("'uploadRetention' must be longer than 0", at: entry.value)
            }
        }
        if let entry = fields["maxUploadSize"], let bytes = self.byteSize(entry) {
            if bytes > 0 {
                settings.maxUploadSize = bytes
            } else {
                self.report("'maxUploadSize' must be more than 0", at: entry.value)
            }
        }
        if let entry = fields["maxUploads"] {
            settings.maxUploads = self.positiveInteger(entry) ?? settings.maxUploads
        }
        if let entry = fields["maxQueued"] {
            settings.maxQueued = self.positiveInteger(entry) ?? settings.maxQueued
        }
        if let entry = fields["requestTimeout"], let timeout = self.duration(entry) {
            if timeout > .zero {
                settings.requestTimeout = timeout
            } else {
                self.report("'requestTimeout' must be longer than 0", at: entry.value)
            }
        }
        if let entry = fields["store"], let text = self.string(entry, expected: "sqlite or a postgres:// address") {
            switch StoreLocation.parse(text) {
            case .success(let location): settings.store = location
            case .failure(let error): self.report(error.description, at: entry.value)
            }
        }
        if let entry = fields["storePasswordFile"], let file = self.path(entry.value, for: "storePasswordFile") {
            if case .postgres(var location) = settings.store {
                location.passwordFile = file
                settings.store = .postgres(location)
            } else {
                self.report("'storePasswordFile' is for a PostgreSQL store (store: postgres://…)", at: entry.key)
            }
        }
        if let entry = fields["agent"], let name = self.string(entry, expected: "an agent's name") {
            if case .postgres(var location) = settings.store {
                if name.isEmpty || name.count > 63 || name.contains(where: { $0.isWhitespace || $0.isNewline }) {
                    self.report("'agent' must be a name of 1 to 63 characters without spaces", at: entry.value)
                } else {
                    location.agent = name
                    settings.store = .postgres(location)
                }
            } else {
                self.report("'agent' is for a PostgreSQL store that agents share (store: postgres://…)", at: entry.key)
            }
        }
        if let entry = fields["watch"], let watches = self.bool(entry) {
            if case .postgres(var location) = settings.store {
                location.watches = watches
                settings.store = .postgres(location)
            } else {
                self.report(
                    "'watch' is for an agent on a PostgreSQL store (store: postgres://…); without one, the daemon "
                        + "always watches its folders",
                    at: entry.key
                )
            }
        }
        if let entry = fields["agentURL"],
            let url = self.string(entry, expected: "an address such as http://nas.lan:8750")
        {
            if case .postgres(var location) = settings.store {
                if let components = URLComponents(string: url), components.scheme == "http", components.host != nil,
                    components.port != nil, components.path.isEmpty || components.path == "/",
                    components.query == nil, components.user == nil
                {
                    location.url = url.hasSuffix("/") ? String(url.dropLast()) : url
                    settings.store = .postgres(location)
                } else {
                    self.report(
                        "'agentURL' must be http://HOST:PORT, where other agents reach this agent's API "
                            + "(settings.api.listen), found '\(url)'",
                        at: entry.value
                    )
                }
            } else {
                self.report("'agentURL' is for an agent on a PostgreSQL store (store: postgres://…)", at: entry.key)
            }
        }
        if let entry = fields["agentLease"], let lease = self.duration(entry) {
            if case .postgres(var location) = settings.store {
                if lease >= .seconds(3) {
                    location.lease = lease
                    settings.store = .postgres(location)
                } else {
                    self.report("'agentLease' must be 3s or longer", at: entry.value)
                }
            } else {
                self.report("'agentLease' is for a PostgreSQL store (store: postgres://…)", at: entry.key)
            }
        }
        if let entry = fields["concurrency"] {
            let engines = self.registry.engines.map(\.kind)
            let limits = self.fields(
                of: entry.value,
                for: "concurrency",
                label: "in 'concurrency'",
                allowed: engines.map(\.rawValue)
            )
            for engine in engines {
                guard let limit = limits?[engine.rawValue] else { continue }
                settings.concurrency[engine] = self.positiveInteger(limit)
            }
        }
        if let entry = fields["api"] {
            settings.api = self.api(from: entry) ?? settings.api
        }
        if let entry = fields["digestAt"], let text = self.string(entry, expected: "a time of day such as \"08:00\"") {
            if let time = DigestSchedule.timeOfDay(text) {
                (settings.digest.hour, settings.digest.minute) = time
            } else {
                self.report(
                    "expected a time of day as HH:MM (24-hour clock), such as \"08:00\", for 'digestAt', found '\(text)'",
                    at: entry.value
                )
            }
        }
        if let entry = fields["digestEvery"], let every = self.duration(entry) {
            if every >= .seconds(1) {
                settings.digest.every = every
            } else {
                self.report("'digestEvery' must be at least 1s", at: entry.value)
            }
        }
        return settings
    }

    /// Reads `settings.api`: a TCP `listen` address needs a `tokenFile`.
    private mutating func api(from entry: Entry) -> APISettings? {
        if Self.isNull(entry.value) { return APISettings() }
        let fields = self.fields(
            of: entry.value,
            for: "api",
            label: "in settings.api",
            allowed: ["socket", "listen", "tokenFile", "idleTimeout"]
        )
        guard let fields else { return nil }
        var api = APISettings()
        if let entry = fields["idleTimeout"], let timeout = self.duration(entry) {
            if timeout > .zero {
                api.idleTimeout = timeout
            } else {
                self.report("'idleTimeout' must be longer than 0", at: entry.value)
            }
        }
        if let socket = fields["socket"] {
            api.socket = self.path(socket.value, for: "socket")
        }
        if let tokenFile = fields["tokenFile"] {
            api.tokenFile = self.path(tokenFile.value, for: "tokenFile")
        }
        if let listen = fields["listen"], let text = self.string(listen, expected: "HOST:PORT") {
            if APISettings.hostAndPort(text) == nil {
                self.report("expected HOST:PORT for 'listen', found '\(text)'", at: listen.value)
            } else if fields["tokenFile"] == nil {
                self.report(
                    "'listen' needs 'tokenFile': the API is not served on TCP without a bearer token",
                    at: listen.key
                )
            } else {
                api.listen = text
            }
        }
        return api
    }
}
