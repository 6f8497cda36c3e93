import ChuteCatalog
import ChuteCore
import ChuteRuntime
import Foundation
import SystemPackage

/// The text of `chute explain`: which rule a file would match and the output it would produce, or why nothing
/// matches.
package enum Explanation {
    /// Explains what the daemon would do with `path` (absolute or relative to the working directory).
    ///
    /// - Returns: the lines to print, and whether a rule matches.
    package static func explain(
        _ path: FilePath,
        config: ChuteConfig,
        now: Date = Date()
    ) -> (text: String, matched: Bool) {
        let absolute =
            path.isAbsolute
            ? path.lexicallyNormalized()
            : FilePath(FileManager.default.currentDirectoryPath)
                .pushing(path).lexicallyNormalized()
        let matcher = RuleMatcher(config: config)
        guard let root = matcher.root(containing: absolute) else {
            let watched = config.watches.map(\.path.string).joined(separator: ", ")
            return ("\(absolute): not below any watched folder (watched: \(watched))", false)
        }
        var facts: FileFacts?
        var notes: [String] = []
        if let status = try? SourceInspector.status(of: absolute) {
            if !status.isRegularFile { notes.append("note: this is not a regular file; the daemon skips it") }
            let sniffed = SourceInspector.sniff(absolute)
            facts = FileFacts(size: status.fingerprint.size, modified: status.fingerprint.modified, sniffed: sniffed)
            notes.append("content: \(sniffed?.rawValue ?? "not recognised"), \(status.fingerprint.size) bytes")
        } else {
            notes.append("note: the file does not exist; size, type and age filters were not checked")
        }
        let decision = matcher.decide(
            path: absolute,
            root: root,
            facts: facts,
            now: now,
            date: now.formatted(.iso8601.year().month().day())
        )
        var lines = ["\(absolute)", "watched folder: \(root)"] + notes
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
            }
        }
        if case .matched = decision { return (lines.joined(separator: "\n"), true) }
        return (lines.joined(separator: "\n"), false)
    }
}
