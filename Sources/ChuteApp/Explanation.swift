import ChuteCatalog
import ChuteCore
import ChuteRuntime
import Foundation
import SystemPackage

/// The text of `chute explain`: which rule a file would match and the output it would produce, or why nothing
/// matches; for a folder or several paths, a dry run: one line per file and a summary by rule.
package enum Explanation {
    /// What the daemon would do with one file.
    private enum Verdict {
        /// Not below any watched folder.
        case outside
        /// Skipped before any rule sees it (a link, not a regular file), with why.
        case skipped(String)
        /// A rule decision on a file (that need not exist).
        case decided(MatchDecision, facts: FileFacts?)
    }

    /// Explains what the daemon would do with `path` (absolute or relative to the working directory).
    ///
    /// - Returns: the lines to print, and whether a rule matches.
    package static func explain(
        _ path: FilePath,
        config: ChuteConfig,
        now: Date = Date()
    ) -> (text: String, matched: Bool) {
        let absolute = Self.absolute(path)
        let matcher = RuleMatcher(config: config)
        guard let root = matcher.root(containing: absolute) else {
            let watched = config.watches.map(\.path.string).joined(separator: ", ")
            return ("\(absolute): not below any watched folder (watched: \(watched))", false)
        }
        var lines = ["\(absolute)", "watched folder: \(root)"]
        let verdict = Self.verdict(on: absolute, root: root, config: config, matcher: matcher, now: now)
        let (decision, facts): (MatchDecision, FileFacts?)
        switch verdict {
        case .outside:
            return ("\(absolute): not below any watched folder", false)
        case .skipped(let reason):
            lines.append("skipped: \(reason)")
            return (lines.joined(separator: "\n"), false)
        case .decided(let decided, let known):
            (decision, facts) = (decided, known)
        }
        if let facts {
            lines.append("content: \(facts.sniffed?.rawValue ?? "not recognised"), \(facts.size) bytes")
        } else {
            lines.append("note: the file does not exist; size, type and age filters were not checked")
        }
        switch decision {
        case .ignored(let reason):
            lines.append("ignored: \(reason)")
        case .noRule:
            lines.append("no rule matches: no rule's 'match' globs fit this name")
        case .filtered(let reasons):
            lines.append("no rule takes it:")
            lines += reasons.map { "  \($0)" }
        case .notYet(let rule, let after):
            lines.append("rule '\(rule)' matches once the file is old enough (in \(after))")
        case .matched(let rule, let plan, let passedOver):
            lines += passedOver.map { "passed over: \($0)" }
            lines.append("rule '\(rule.name)' matches (first match wins)")
            lines.append("output: \(plan.path)")
            if plan.pendingName != nil {
                lines.append(
                    "name: {taken} is when it was taken (EXIF DateTimeOriginal or CreateDate, QuickTime "
                        + "creation_time), read as it converts, in \(TimeZone.current.identifier); shown with its "
                        + "modification time, which it falls back to"
                )
            }
            let sidecar = rule.sidecarPath(for: plan.path)
            lines.append(
                rule.writesSidecar(completed: true) ? "sidecar: \(sidecar)" : "sidecar: only if it fails, \(sidecar)"
            )
            let engine = rule.to.engine(reading: facts?.sniffed)
            let content = facts?.sniffed.map { " (for \($0.rawValue) content; \(Engines.registry.writing(rule.to)))" }
            lines.append("engine: \(engine.rawValue)\(content ?? "")")
            let options = Engines.registry.options.enumerated()
                .sorted { ($0.element.stage, $0.offset) < ($1.element.stage, $1.offset) }
                .compactMap { _, spec in rule.options[spec.key].map { "\(spec.describe($0)) (\(spec.stage.rawValue))" }
                }
            if !options.isEmpty {
                lines.append("steps, in this order: " + options.joined(separator: " → "))
            }
            if let facts {
                if let sniffed = facts.sniffed, let reader = Engines.registry.engine(engine), !reader.reads(sniffed) {
                    lines.append(
                        "warning: the \(engine.rawValue) engine cannot read \(sniffed.rawValue) content; the job would "
                            + "fail as unsupportedInput"
                    )
                } else if facts.sniffed == nil {
                    lines.append(
                        "warning: the content is not in a format Chute recognises; the \(engine.rawValue) engine would "
                            + "refuse it as unsupportedInput"
                    )
                }
                if let wait = Self.readiness(of: absolute, facts: facts, root: root, config: config, now: now) {
                    lines.append(wait)
                }
            }
        }
        if case .matched = decision { return (lines.joined(separator: "\n"), true) }
        return (lines.joined(separator: "\n"), false)
    }

    /// Explains several paths: one file as ``explain(_:config:now:)`` does; otherwise a dry run over the files given
    /// and those below the folders given: one line per file (what it would become, or why nothing), then how many
    /// files each rule takes and how many none does.
    ///
    /// - Returns: the lines to print, and whether a rule matches at least one file.
    package static func explain(
        _ paths: [FilePath],
        config: ChuteConfig,
        now: Date = Date()
    ) -> (text: String, matched: Bool) {
        let absolutes = paths.map(Self.absolute)
        if absolutes.count == 1, let only = absolutes.first,
            (try? SourceInspector.status(of: only))?.isDirectory != true
        {
            return Self.explain(only, config: config, now: now)
        }
        let matcher = RuleMatcher(config: config)
        var lines: [String] = []
        var byRule: [String: Int] = [:]
        var untaken: [String: Int] = [:]
        for file in absolutes.flatMap(Self.files) {
            let line: String
            let outcome: String
            let root = matcher.root(containing: file)
            switch Self.verdict(on: file, root: root, config: config, matcher: matcher, now: now) {
            case .outside:
                (line, outcome) = ("not below any watched folder", "outside the watched folders")
            case .skipped(let reason):
                (line, outcome) = ("skipped: \(reason)", "skipped")
            case .decided(.ignored(let reason), _):
                (line, outcome) = ("ignored: \(reason)", "ignored")
            case .decided(.noRule, _):
                (line, outcome) = ("no rule matches", "no rule matches")
            case .decided(.filtered(let reasons), _):
                (line, outcome) = ("no rule takes it: " + reasons.joined(separator: "; "), "filtered out")
            case .decided(.notYet(let rule, let after), _):
                (line, outcome) = ("rule '\(rule)' once the file is old enough (in \(after))", "")
                byRule[rule, default: 0] += 1
            case .decided(.matched(let rule, let plan, _), _):
                (line, outcome) = ("→ \(plan.path) (rule '\(rule.name)')", "")
                byRule[rule.name, default: 0] += 1
            }
            if !outcome.isEmpty { untaken[outcome, default: 0] += 1 }
            lines.append("\(file): \(line)")
        }
        guard !lines.isEmpty else { return ("no files found in \(paths.map(\.string).joined(separator: ", "))", false) }
        let taken = config.rules.compactMap { rule in byRule[rule.name].map { "rule '\(rule.name)': \($0)" } }
        let others = untaken.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        lines.append("")
        lines.append("\(lines.count - 1) file(s). " + (taken + others).joined(separator: ", "))
        return (lines.joined(separator: "\n"), !byRule.isEmpty)
    }

    /// What the daemon would do with `path`, below the watched folder `root`.
    private static func verdict(
        on path: FilePath,
        root: FilePath?,
        config: ChuteConfig,
        matcher: RuleMatcher,
        now: Date
    ) -> Verdict {
        guard let root else { return .outside }
        var facts: FileFacts?
        if let status = try? SourceInspector.status(of: path) {
            let allowsHardLinks = config.watches.first { $0.path == root }?.allowHardLinks == true
            if let skipped = Self.skipReason(path, status: status, root: root, allowsHardLinks: allowsHardLinks) {
                return .skipped(skipped)
            }
            let sniffed = SourceInspector.sniff(path)
            facts = FileFacts(size: status.fingerprint.size, modified: status.fingerprint.modified, sniffed: sniffed)
        }
        let decision = matcher.decide(
            path: path,
            root: root,
            facts: facts,
            now: now,
            date: now
        )
        return .decided(decision, facts: facts)
    }

    /// Why the daemon skips a file before any rule sees it, as its intake does: a symbolic link (on the way or at the
    /// end), another entry that is not a regular file, or a hard link unless the watch's `allowHardLinks`.
    ///
    /// - Parameter status: the path's `lstat`.
    /// - Returns: the reason, or `nil` for a file the rules decide on.
    static func skipReason(
        _ path: FilePath,
        status: SourceInspector.Status,
        root: FilePath,
        allowsHardLinks: Bool
    ) -> String? {
        do {
            let beneath = try SourceInspector.status(of: path, beneath: root)
            guard beneath.isRegularFile else { return "not a regular file" }
            guard beneath.linkCount <= 1 || allowsHardLinks else {
                return "a hard link (\(beneath.linkCount) names); the watch's allowHardLinks takes such files"
            }
            return nil
        } catch {
            return status.isRegularFile || status.isDirectory
                ? "its path goes through a symbolic link, which is not followed"
                : "a symbolic link, which is not followed"
        }
    }

    /// Why a file a rule takes is not ready yet and until when the daemon waits for it (its folder's
    /// `incompleteTimeout` after it was first found not ready, about a quiet period after its last change), or `nil`
    /// when it is ready.
    private static func readiness(
        of path: FilePath,
        facts: FileFacts,
        root: FilePath,
        config: ChuteConfig,
        now: Date
    ) -> String? {
        guard let reason = SourceInspector.notReady(path, type: facts.sniffed, beneath: root) else { return nil }
        let timeout = config.watches.first { $0.path == root }?.incompleteTimeout ?? config.settings.incompleteTimeout
        let until = facts.modified + (config.settings.quietPeriod + timeout) / .seconds(1)
        let when =
            until > now
            ? "taken at about \(until.formatted(date: .omitted, time: .standard)) unless it changes"
            : "taken anyway at the daemon's next look, since it has not changed for longer than that"
        return "waits: \(reason); a file not ready is waited for up to incompleteTimeout "
            + "(\(ValueParsing.describe(timeout))), then \(when)"
    }

    /// The files to explain for a path: a folder's regular files and links below it (in natural order, without
    /// following links), or the path itself.
    private static func files(_ path: FilePath) -> [FilePath] {
        guard (try? SourceInspector.status(of: path))?.isDirectory == true else { return [path] }
        var found: [FilePath] = []
        var folders = [path]
        while let folder = folders.popLast() {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.string)) ?? []
            for name in names {
                let entry = folder.appending(name)
                if (try? SourceInspector.status(of: entry))?.isDirectory == true {
                    folders.append(entry)
                } else {
                    found.append(entry)
                }
            }
        }
        return found.sorted {
            NaturalOrder.areInIncreasingOrder(components: $0.components.map(\.string), $1.components.map(\.string))
        }
    }

    /// `path` made absolute against the working directory and lexically normalised.
    private static func absolute(_ path: FilePath) -> FilePath {
        path.isAbsolute
            ? path.lexicallyNormalized()
            : FilePath(FileManager.default.currentDirectoryPath).pushing(path).lexicallyNormalized()
    }
}
