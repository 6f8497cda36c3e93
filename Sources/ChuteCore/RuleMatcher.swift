import Foundation
import SystemPackage

/// What Chute knows about a candidate file before it decides anything.
package struct FileFacts: Sendable, Equatable {
    /// Size in bytes.
    package var size: Int64
    /// Last modification time.
    package var modified: Date
    /// The type recognised from the first bytes, or `nil` when nothing was recognised.
    package var sniffed: MediaType?

    package init(size: Int64, modified: Date, sniffed: MediaType?) {
        self.size = size
        self.modified = modified
        self.sniffed = sniffed
    }
}

/// Where a job's output goes.
package struct OutputPlan: Sendable, Equatable {
    /// The target folder, including the source's sub-folder path when the rule keeps the structure.
    package var directory: FilePath
    /// The output file name before any collision renaming, with the bytes of the source's name
    /// (``NameTemplate/render(_:localZone:)``). With `{taken}` in the rule's template, it is rendered with the
    /// source's modification time until the worker reports the capture time (``taken(at:)``).
    package var name: FilePath.Component
    /// The template and its values when the template uses `{taken}`, to render the name again with the capture
    /// time; `nil` when the name is final.
    package var pendingName: PendingName?

    /// A name that waits for the capture time.
    package struct PendingName: Sendable, Equatable {
        package var template: NameTemplate
        package var values: NameTemplate.Values
    }

    package init(directory: FilePath, name: FilePath.Component) {
        self.directory = directory
        self.name = name
    }

    /// The plan of `template` rendered with `values` in `directory`, its name pending when the template uses
    /// `{taken}`.
    package init(directory: FilePath, template: NameTemplate, values: NameTemplate.Values) {
        self.directory = directory
        self.name = template.render(values)
        self.pendingName = template.usesCaptureTime ? PendingName(template: template, values: values) : nil
    }

    /// The full planned output path.
    package var path: FilePath { self.directory.appending(self.name) }

    /// The plan with its name rendered with `time` as `{taken}`, in the daemon's time zone; the same plan when its
    /// name is final.
    package func taken(at time: Date) -> OutputPlan {
        guard var pending = self.pendingName else { return self }
        pending.values.taken = time
        var plan = OutputPlan(directory: self.directory, name: pending.template.render(pending.values))
        plan.pendingName = pending
        return plan
    }
}

/// The verdict on one file.
package enum MatchDecision: Sendable, Equatable {
    /// The name or a folder on its way is never an input.
    case ignored(reason: String)
    /// No rule's globs match the name.
    case noRule
    /// Rules matched by name, but a filter excluded the file for each; one reason per rule.
    case filtered(reasons: [String])
    /// The first matching rule is waiting for the file to reach its `minAge`.
    case notYet(rule: String, after: Duration)
    /// The rule that takes the file, where its output goes, and why earlier rules that matched the name passed it
    /// over.
    case matched(Rule, OutputPlan, passedOver: [String])
}

/// Applies a configuration's ignore lists and rules, in order, to a file.
package struct RuleMatcher: Sendable {
    private let config: ChuteConfig
    private let ignores: [FilePath: IgnoreRules]
    private let watches: [FilePath: WatchConfig]
    /// The folders sources are moved to (done and quarantine folders), with what they are, for the reason.
    private let parkingFolders: [(folder: FilePath, what: String)]

    /// Whether a rule groups files (`groupBy`).
    package var hasGroupingRule: Bool { self.config.rules.contains { $0.grouping != nil } }

    package init(config: ChuteConfig) {
        self.config = config
        var ignores: [FilePath: IgnoreRules] = [:]
        var watches: [FilePath: WatchConfig] = [:]
        for watch in config.watches {
            ignores[watch.path] = IgnoreRules(extra: watch.ignore)
            watches[watch.path] = watch
        }
        self.ignores = ignores
        self.watches = watches
        self.parkingFolders = config.rules.flatMap { rule -> [(folder: FilePath, what: String)] in
            var folders: [(folder: FilePath, what: String)] = []
            if case .move(let folder) = rule.sourcePolicy {
                folders.append((folder, "the done folder of rule '\(rule.name)'"))
            }
            if let quarantine = rule.quarantine {
                folders.append((quarantine, "the quarantine folder of rule '\(rule.name)'"))
            }
            return folders
        }
    }

    /// The watched folder that contains `path`, if any (the deepest one when watches nest).
    package func root(containing path: FilePath) -> FilePath? {
        self.config.watches
            .filter { path.starts(with: $0.path) && path != $0.path }
            .max { $0.path.components.count < $1.path.components.count }?
            .path
    }

    /// Decides what happens to `path`, a file below the watched folder `root`.
    ///
    /// - Parameters:
    ///   - path: absolute path of the file.
    ///   - root: the watched folder it was seen in.
    ///   - facts: size, times and sniffed type; `nil` skips the filters that need them (for `explain` on a
    ///     file that does not exist).
    ///   - now: the current time, for age filters.
    ///   - date: the job's start, `{date}` in name templates.
    package func decide(
        path: FilePath,
        root: FilePath,
        facts: FileFacts?,
        now: Date,
        date: Date
    ) -> MatchDecision {
        guard let component = path.lastComponent else { return .ignored(reason: "not a file path") }
        let name = component.string
        let ignore = self.ignores[root] ?? IgnoreRules()
        var relative = path
        guard relative.removePrefix(root) else { return .ignored(reason: "not below the watched folder \(root)") }
        let folderComponents = Array(relative.components.dropLast())
        let folders = folderComponents.map(\.string)
        if let folder = folders.first(where: { ignore.ignoresFolder(named: $0) }) {
            return .ignored(reason: "inside the ignored folder '\(folder)'")
        }
        if ignore.ignoresFile(named: name) {
            return .ignored(reason: "'\(name)' is a temporary, system or Chute file name")
        }
        if let watch = self.watches[root], watch.isMarker(name) {
            return .ignored(reason: "'\(name)' is a marker file (doneSuffix or lockSuffix)")
        }
        if let parking = self.parkingFolders.first(where: { path.starts(with: $0.folder) }) {
            return .ignored(reason: "inside \(parking.what)")
        }
        var reasons: [String] = []
        for rule in self.config.rules {
            guard rule.match.contains(where: { $0.matches(name) }) else { continue }
            guard rule.watches.isEmpty || rule.watches.contains(root) else {
                reasons.append("rule '\(rule.name)': only for \(rule.watches.map(\.string).joined(separator: ", "))")
                continue
            }
            guard rule.grouping == nil || !folders.isEmpty else {
                reasons.append("rule '\(rule.name)': takes the files of a sub-folder together (groupBy), not one alone")
                continue
            }
            if let facts {
                if let reason = Self.filterReason(rule.filters, facts: facts, now: now) {
                    reasons.append("rule '\(rule.name)': \(reason)")
                    continue
                }
                if let minAge = rule.filters.minAge {
                    let age = now.timeIntervalSince(facts.modified)
                    let wait = Double(minAge.components.seconds) - age
                    if wait > 0 { return .notYet(rule: rule.name, after: .milliseconds(Int64(wait * 1000) + 1)) }
                }
            }
            // `to: same` becomes the input's own format here, so the output's name and the job carry the real one.
            guard let format = rule.to.resolved(for: facts?.sniffed) else {
                let written = Set(rule.to.sameAsInput.values.map(\.name)).sorted().joined(separator: ", ")
                let found = facts?.sniffed.map { "\($0.rawValue) content" } ?? "content of an unknown type"
                reasons.append("rule '\(rule.name)': 'to: \(rule.to.name)' writes \(written), not \(found)")
                continue
            }
            var rule = rule
            rule.to = format
            let directory =
                rule.keepStructure ? rule.output.appending(folderComponents) : rule.output
            // `{taken}` is the modification time until the worker reads the capture time, and for `explain`.
            let values = NameTemplate.Values(
                sourceName: component,
                format: rule.to,
                rule: rule.name,
                date: date,
                taken: facts?.modified ?? date
            )
            let plan = OutputPlan(directory: directory, template: rule.rename, values: values)
            return .matched(rule, plan, passedOver: reasons)
        }
        return reasons.isEmpty ? .noRule : .filtered(reasons: reasons)
    }

    /// The group folder of `path` for a rule with `groupBy: folder`: the sub-folder of the watched folder `root`
    /// that the file is below, at any depth; `nil` for a file directly in `root`.
    package static func groupFolder(of path: FilePath, root: FilePath) -> FilePath? {
        var relative = path
        guard relative.removePrefix(root), relative.components.count > 1, let first = relative.components.first else {
            return nil
        }
        return root.appending(first)
    }

    /// Where the output of the group `folder` goes for `rule` (a rule a member matched, with its format resolved):
    /// the rule's output folder, under the folder's name rendered as the rule's `rename` says.
    ///
    /// - Parameters:
    ///   - date: the job's start, `{date}`.
    ///   - firstModified: the modification time of the group's first file, `{taken}` until the worker reads that
    ///     file's capture time.
    package static func groupPlan(rule: Rule, folder: FilePath, date: Date, firstModified: Date) -> OutputPlan {
        // A folder always has a last component: the watched folder itself is no group.
        let values = NameTemplate.Values(
            sourceName: folder.lastComponent ?? "_",
            format: rule.to,
            rule: rule.name,
            date: date,
            taken: firstModified,
            isFolder: true
        )
        return OutputPlan(directory: rule.output, template: rule.rename, values: values)
    }

    private static func filterReason(_ filters: RuleFilters, facts: FileFacts, now: Date) -> String? {
        if let minSize = filters.minSize, facts.size < minSize {
            return "size \(facts.size) bytes is below minSize \(minSize)"
        }
        if let maxSize = filters.maxSize, facts.size > maxSize {
            return "size \(facts.size) bytes is above maxSize \(maxSize)"
        }
        if !filters.types.isEmpty {
            guard let category = facts.sniffed?.category, filters.types.contains(category) else {
                let found = facts.sniffed.map { "\($0.rawValue) content" } ?? "unrecognised content"
                let wanted = filters.types.map(\.rawValue).sorted().joined(separator: " or ")
                return "type filter wants \(wanted), found \(found)"
            }
        }
        if let maxAge = filters.maxAge, now.timeIntervalSince(facts.modified) > Double(maxAge.components.seconds) {
            return "modified more than maxAge ago"
        }
        return nil
    }
}
