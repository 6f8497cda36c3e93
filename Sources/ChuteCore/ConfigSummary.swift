import Foundation
import SystemPackage

/// The one-screen summary that `chute check` prints for a valid configuration.
///
/// It shows what the daemon will do, in the order it decides: the watched folders, then each rule in the order
/// rules are tried (match → format, options, output, filters), then the settings. Defaults are spelt out, so the
/// summary also answers "what happens if I leave this key out".
package enum ConfigSummary {
    /// Renders the summary.
    ///
    /// - Parameters:
    ///   - config: a configuration that ``ConfigReader`` accepted.
    ///   - file: the file's name as the user gave it.
    ///   - registry: the engines, whose option specs say how each option is shown.
    /// - Returns: the text, without a final newline (`print` adds one).
    package static func render(_ config: ChuteConfig, file: String, registry: EngineRegistry) -> String {
        var lines: [String] = []
        let folders = config.watches.count == 1 ? "1 watched folder" : "\(config.watches.count) watched folders"
        let rules = config.rules.count == 1 ? "1 rule" : "\(config.rules.count) rules"
        lines.append("\(file): OK, \(folders), \(rules)")
        lines.append("")
        lines.append("Watching:")
        for watch in config.watches {
            var line = "  \(watch.path) (\(watch.recursive ? "with sub-folders" : "this folder only")"
            if !watch.ignore.isEmpty {
                line += "; also ignoring " + watch.ignore.map(\.pattern).joined(separator: ", ")
            }
            switch watch.poll {
            case .auto: break
            case .always: line += "; polled every \(ValueParsing.describe(watch.pollInterval))"
            case .never: line += "; never polled"
            }
            if watch.allowHardLinks {
                line += "; hard links allowed"
            }
            if let timeout = watch.incompleteTimeout {
                line += "; files not ready waited for \(ValueParsing.describe(timeout))"
            }
            if let done = watch.doneSuffix {
                line += "; a file waits for its \(done) marker"
            }
            if let lock = watch.lockSuffix {
                line += "; a file waits while its \(lock) marker or a \(lock) in its folder exists"
            }
            lines.append(line + ")")
        }
        lines.append("")
        lines.append("Rules (tried in order, the first match wins):")
        for (index, rule) in config.rules.enumerated() {
            lines += Self.describe(rule, number: index + 1, defaults: config.settings.limits, registry: registry)
        }
        lines.append("")
        lines += Self.describe(config.settings, registry: registry)
        if config.allNotifyTargets.isEmpty {
            lines.append("Notifications: none")
        } else {
            lines.append(
                "Notifications: " + Self.describe(config.notify)
                    + (config.rules.contains { $0.notify != nil } ? " (rules with their own list: theirs)" : "")
                    + (config.allNotifyTargets.contains { $0.events.contains(.digest) }
                        ? "; digest "
                            + (config.settings.digest.every.map { "every \(ValueParsing.describe($0)) from " }
                                ?? "daily at ") + config.settings.digest.timeOfDay
                        : "")
            )
        }
        return lines.joined(separator: "\n")
    }

    /// A `notify:` list: `failed, completed → http://nas.local:8080/hook (webhook); …`, without credentials or
    /// query.
    private static func describe(_ targets: [NotifyTarget]) -> String {
        guard !targets.isEmpty else { return "none" }
        return targets.map { target in
            let events = NotifyEvent.allCases.filter { target.events.contains($0) }.map(\.rawValue)
            let kind = target.kind == .webhook ? "webhook" : "ntfy topic"
            return events.joined(separator: ", ") + " → \(target.redactedURL) (\(kind))"
        }.joined(separator: "; ")
    }

    /// The warnings about a valid configuration: each `match` pattern whose extension names files the rule's engine
    /// cannot read, such as `*.pdf` with `to: jpg` (the daemon goes by the content, so such a file still fails, as
    /// `unsupportedInput`; only the pattern makes it certain here), and each whose files another engine writes
    /// without some of the rule's options, such as `*.mp4` with `to: jpg` and `crop`.
    ///
    /// - Returns: one line per problem, starting `warning: `.
    package static func warnings(_ config: ChuteConfig, registry: EngineRegistry) -> [String] {
        var lines = Self.folderWarnings(config)
        if case .postgres(let location) = config.settings.store, let file = location.passwordFile,
            SystemCall.access(file, R_OK) != 0
        {
            lines.append(
                "warning: 'storePasswordFile: \(file)' cannot be read (\(Errno(rawValue: errno))): the daemon would not reach the "
                    + "database"
            )
        }
        for rule in config.rules {
            for (key, hook) in [("run", rule.hook), ("pre", rule.preHook)] {
                guard let program = hook?.command.first, SystemCall.access(FilePath(program), X_OK) != 0 else {
                    continue
                }
                lines.append(
                    "warning: rule '\(rule.name)': '\(key)' names \(program), which cannot be run "
                        + "(\(Errno(rawValue: errno))): its hook would fail "
                        + (key == "run" ? "after every job" : "before every job, and so would the job")
                )
            }
            for folder in rule.writtenFolders where folder.string.contains("{") && folder.string.contains("}") {
                lines.append(
                    "warning: rule '\(rule.name)': the folder \(folder) is used as written, braces and all; "
                        + "placeholders such as {date} work only in the file name (rename: \"{date}-{stem}.{ext}\")"
                )
            }
            for pattern in rule.match {
                guard let fileExtension = pattern.literalExtension,
                    let type = MediaType.usual(forExtension: fileExtension),
                    let engine = registry.engine(rule.to.engine(reading: type))
                else { continue }
                // Another engine writes the target from these files (the video engine a poster): the rule's options
                // only the target's own engine takes do nothing to them.
                let unused = rule.options.values.keys.filter { !engine.takes($0, writing: rule.to.name) }
                if engine.kind != rule.to.engine, !unused.isEmpty {
                    lines.append(
                        "warning: rule '\(rule.name)': 'match: \(pattern.pattern)' takes \(type.rawValue) files, which "
                            + "the \(engine.kind.rawValue) engine writes to \(rule.to.name) without "
                            + unused.sorted().map { "'\($0)'" }.joined(separator: ", ")
                    )
                }
                guard !engine.reads(type) else { continue }
                let readable = engine.reads.map(\.rawValue).sorted().joined(separator: " and ")
                lines.append(
                    "warning: rule '\(rule.name)': 'match: \(pattern.pattern)' takes \(type.rawValue) files, which the "
                        + "\(engine.kind.rawValue) engine cannot read (it reads \(readable)); they would fail as "
                        + "unsupportedInput"
                )
            }
        }
        return lines
    }

    /// The warnings about folders that overlap: a folder a rule writes to (`output`, `doneFolder`, `quarantine`)
    /// that is a watched folder or holds one, where what Chute writes lands among the files it takes (it never takes
    /// its own outputs again, but another program or a later rule may see them as new files, and a moved source
    /// stays in view); a watched folder inside another, whose files two watches would see; and a `quarantine` that
    /// is the rule's `output`, which mixes failed sources with finished outputs. A folder inside a watched folder is
    /// fine: it is left out of the watch.
    private static func folderWarnings(_ config: ChuteConfig) -> [String] {
        var lines: [String] = []
        let watched = config.watches.map(\.path)
        for rule in config.rules {
            var written: [(key: String, folder: FilePath)] = [("output", rule.output)]
            if case .move(let folder) = rule.sourcePolicy { written.append(("doneFolder", folder)) }
            if let quarantine = rule.quarantine { written.append(("quarantine", quarantine)) }
            for (key, folder) in written {
                for watch in watched where watch.starts(with: folder) {
                    let relation = watch == folder ? "is the watched folder" : "holds the watched folder \(watch)"
                    lines.append(
                        "warning: rule '\(rule.name)': '\(key): \(folder)' \(relation): what Chute writes there lands "
                            + "among the files it watches; use a folder outside every watched folder"
                    )
                }
            }
            if let quarantine = rule.quarantine, quarantine == rule.output {
                lines.append(
                    "warning: rule '\(rule.name)': 'quarantine' and 'output' are both \(quarantine): failed sources would "
                        + "lie among the finished outputs; give the quarantine its own folder"
                )
            }
        }
        for outer in watched {
            for inner in watched where inner != outer && inner.starts(with: outer) {
                lines.append(
                    "warning: the watched folder \(inner) is inside the watched folder \(outer): its files are seen by "
                        + "both watches; watch one of them"
                )
            }
        }
        return lines
    }

    /// The lines for one rule: a heading, then options, output and filters, indented under it.
    private static func describe(
        _ rule: Rule,
        number: Int,
        defaults: JobLimits,
        registry: EngineRegistry
    ) -> [String] {
        let patterns = rule.match.map(\.pattern).joined(separator: ", ")
        var lines = ["  \(number). \(rule.name): \(patterns) → \(rule.to.name) (\(registry.writing(rule.to)))"]
        let indent = "       "
        let options = registry.options.compactMap { spec in rule.options[spec.key].map(spec.describe) }
        if !options.isEmpty {
            lines.append(indent + "options: " + options.joined(separator: ", "))
        }
        var output = "output:  \(rule.output)/\(rule.rename)"
        if rule.grouping == .folder {
            // A group's output goes straight into `output`, named after its folder, whatever keepStructure says.
            output += ", directly in it"
        } else {
            output += rule.keepStructure ? ", keeping sub-folders" : ", flattened"
        }
        output += ", on conflict \(rule.onConflict.rawValue), on duplicate \(rule.onDuplicate.rawValue)"
        if rule.rename.usesCaptureTime {
            output += ", {taken} the capture time in \(TimeZone.current.identifier) (else the modification time)"
        }
        let ownership = [
            rule.ownership.owner.map { "owner \($0)" }, rule.ownership.group.map { "group \($0)" },
            rule.ownership.mode.map { "mode " + String($0, radix: 8) },
        ].compactMap { $0 }
        if !ownership.isEmpty {
            output += ", " + ownership.joined(separator: " ")
        }
        if let concurrency = rule.concurrency {
            output += ", at most \(concurrency) at once"
        }
        if rule.grouping == .folder {
            output += ", one output per sub-folder (groupBy folder)"
        }
        lines.append(indent + output)
        switch rule.sidecars {
        case .besideOutput: break
        case .failedOnly: lines.append(indent + "sidecars: failed jobs only")
        case .folder(let folder): lines.append(indent + "sidecars: in \(folder)")
        }
        if rule.upload {
            lines.append(
                indent + "uploads: taken through the API, outputs "
                    + (rule.uploadOutput == .spool ? "kept in the spool for download" : "written to the output folder")
            )
        }
        var filters = Self.describe(rule.filters)
        if !rule.watches.isEmpty {
            filters.append("below " + rule.watches.map(\.string).joined(separator: ", "))
        }
        if !filters.isEmpty {
            lines.append(indent + "only:    " + filters.joined(separator: "; "))
        }
        switch rule.sourcePolicy {
        case .keep: break
        case .move(let folder): lines.append(indent + "source:  moved to \(folder) once its output is verified")
        case .delete: lines.append(indent + "source:  deleted once its output is verified")
        }
        if let quarantine = rule.quarantine {
            lines.append(indent + "failed:  source moved to \(quarantine), with a reason file")
        }
        if let notify = rule.notify {
            lines.append(indent + "notify:  " + Self.describe(notify))
        }
        if let hook = rule.hook {
            let events = RuleHook.events.filter { hook.events.contains($0) }.map(\.rawValue).joined(separator: ", ")
            lines.append(
                indent + "run:     " + hook.command.joined(separator: " ") + " after each job \(events), killed after "
                    + ValueParsing.describe(hook.timeout)
            )
        }
        if let pre = rule.preHook {
            lines.append(
                indent + "pre:     " + pre.command.joined(separator: " ") + " before each job (exit 1 refuses the "
                    + "file), killed after " + ValueParsing.describe(pre.timeout)
            )
        }
        if rule.limits != defaults {
            lines.append(indent + "limits:  " + Self.describe(rule.limits).joined(separator: ", "))
        }
        return lines
    }

    /// The limits that are set, such as `timeout 30m`, `memory 4GB`, `pixels ≤ 50000000`.
    private static func describe(_ limits: JobLimits) -> [String] {
        var parts = ["timeout \(ValueParsing.describe(limits.timeout))"]
        if let memory = limits.memory { parts.append("memory \(ValueParsing.describe(bytes: memory))") }
        if let cpu = limits.cpuTime { parts.append("CPU time \(ValueParsing.describe(cpu))") }
        if let size = limits.outputSize { parts.append("output ≤ \(ValueParsing.describe(bytes: size))") }
        if let pixels = limits.pixels { parts.append("pixels ≤ \(pixels)") }
        if let side = limits.imageSide { parts.append("image side ≤ \(side)") }
        if let frames = limits.frames { parts.append("frames ≤ \(frames)") }
        if let duration = limits.duration { parts.append("duration ≤ \(ValueParsing.describe(duration))") }
        return parts
    }

    /// The filters that were set, such as `type image`, `size 10KB to 2GB`, `age at least 10s`.
    private static func describe(_ filters: RuleFilters) -> [String] {
        var parts: [String] = []
        if !filters.types.isEmpty {
            let types = MediaCategory.allCases.filter { filters.types.contains($0) }.map(\.rawValue)
            parts.append("type " + types.joined(separator: " or "))
        }
        switch (filters.minSize, filters.maxSize) {
        case (let low?, let high?):
            parts.append("size \(ValueParsing.describe(bytes: low)) to \(ValueParsing.describe(bytes: high))")
        case (let low?, nil): parts.append("size at least \(ValueParsing.describe(bytes: low))")
        case (nil, let high?): parts.append("size at most \(ValueParsing.describe(bytes: high))")
        case (nil, nil): break
        }
        switch (filters.minAge, filters.maxAge) {
        case (let low?, let high?): parts.append("age \(ValueParsing.describe(low)) to \(ValueParsing.describe(high))")
        case (let low?, nil): parts.append("age at least \(ValueParsing.describe(low))")
        case (nil, let high?): parts.append("age at most \(ValueParsing.describe(high))")
        case (nil, nil): break
        }
        return parts
    }

    /// How a database is reached: encrypted or not, and where its password comes from.
    private static func storeDetails(_ store: StoreLocation) -> String {
        guard case .postgres(let location) = store else { return "" }
        let encryption =
            switch location.encryption {
            case .disable: "unencrypted"
            case .prefer: "encrypted when the server offers it"
            case .require: "encrypted"
            }
        let password =
            location.passwordFile.map { "its password in \($0)" }
            ?? "its password from \(PostgresLocation.passwordVariable), if any"
        let agent = location.agent.map { "as agent \($0)" } ?? "as the agent named by the host name"
        return ", \(encryption), \(password), \(agent), leases of \(ValueParsing.describe(location.lease))"
            + (location.watches ? "" : ", watching no folder (converting what other agents found)")
            + (location.url.map { ", its files fetched by other agents at \($0)" } ?? "")
    }

    /// The settings line, with each engine's concurrency (`auto` when sized to the machine's cores).
    private static func describe(_ settings: Settings, registry: EngineRegistry) -> [String] {
        let lanes = registry.engines.map { engine in
            "\(engine.kind.rawValue) \(settings.concurrency[engine.kind].map(String.init) ?? "auto")"
        }
        return [
            "Settings: quiet period \(ValueParsing.describe(settings.quietPeriod)), "
                + "incomplete files waited for \(ValueParsing.describe(settings.incompleteTimeout)), "
                + "retry delay \(ValueParsing.describe(settings.retryDelay)) for at most \(settings.retryLimit) tries, "
                + "grace period \(ValueParsing.describe(settings.gracePeriod)), "
                + "new worker every \(settings.workerJobs) jobs, an idle one exits after "
                + ValueParsing.describe(settings.workerIdle) + ", finished jobs kept in the history for "
                + ValueParsing.describe(settings.historyRetention)
                + ", at most \(settings.hookConcurrency) hooks at once",
            "Concurrency: " + lanes.joined(separator: ", "),
            "Budget: CPU \(settings.cpuBudget.map(String.init) ?? "auto"), memory "
                + "\(settings.memoryBudget.map { ValueParsing.describe(bytes: $0) } ?? "auto"), "
                + "ageing limit \(ValueParsing.describe(settings.agingLimit))",
            "Job limits: " + Self.describe(settings.limits).joined(separator: ", "),
            "Workers: niceness \(settings.niceness), I/O priority \(settings.ioPriority), no network",
            "Status API: socket " + (settings.api.socket?.string ?? ".chute/api.sock beside the journal")
                + (settings.api.listen.map { ", TCP \($0) with the token in \(settings.api.tokenFile?.string ?? "")" }
                    ?? ", no TCP") + ", idle connections closed after "
                + ValueParsing.describe(settings.api.idleTimeout),
            "Uploads: at most \(settings.maxUploads) at once, each at most "
                + "\(ValueParsing.describe(bytes: settings.maxUploadSize)), kept for "
                + ValueParsing.describe(settings.uploadRetention) + " after their jobs, none taken while "
                + "\(settings.maxQueued) jobs wait, a conversion answered within "
                + ValueParsing.describe(settings.requestTimeout),
            "Jobs kept in " + settings.store.description + Self.storeDetails(settings.store),
        ]
    }
}
