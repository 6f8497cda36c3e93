import SystemPackage
import Yams

extension ConfigReader {
    /// Walks a composed YAML tree, turning nodes into model values and collecting every problem on the way.
    ///
    /// Each reader returns `nil` after reporting why a value is unusable, so the caller simply skips it and goes on:
    /// one walk finds every problem in the file. The schema itself is in `ConfigReader+Schema.swift`.
    struct Walker {
        /// The file name used in issues.
        let file: String
        /// The absolute folder relative paths resolve against.
        let baseDirectory: FilePath
        /// The engines, whose formats `to:` names and whose options a rule sets.
        let registry: EngineRegistry
        /// Everything found wrong so far, in the order found.
        private(set) var issues: [ConfigIssue] = []

        init(file: String, baseDirectory: FilePath, registry: EngineRegistry) {
            self.file = file
            self.baseDirectory = baseDirectory
            self.registry = registry
        }

        /// A key of a mapping and its value.
        struct Entry {
            var key: Node
            var value: Node
            /// The key's text.
            var name: String
        }

        /// The entries of one mapping, by key, and the mapping itself (the position of "missing key" issues).
        struct Fields {
            var node: Node
            /// Where the mapping is, for messages, with its preposition: "at the top level", "in rule 'heic-to-jpg'".
            var label: String
            var entries: [String: Entry]

            subscript(_ key: String) -> Entry? { self.entries[key] }
        }

        /// Records an issue at a node (1:1 when the node has no position).
        mutating func report(_ message: String, at node: Node) {
            let mark = node.mark
            self.issues.append(
                ConfigIssue(file: self.file, line: mark?.line ?? 1, column: mark?.column ?? 1, message: message)
            )
        }

        /// Reads a mapping whose keys must all be among `allowed`.
        ///
        /// Unknown keys are reported (with the closest allowed key when one is a likely typo) and left out.
        ///
        /// - Parameters:
        ///   - node: the node that should be a mapping.
        ///   - key: the key it is the value of, for the wrong-type message; `nil` for the file's top level.
        ///   - label: where the mapping is, for messages, with its preposition ("in rule 'heic-to-jpg'").
        ///   - allowed: the allowed keys, in the order the message lists them.
        /// - Returns: the entries, or `nil` when `node` is not a mapping.
        mutating func fields(of node: Node, for key: String?, label: String, allowed: [String]) -> Fields? {
            guard case .mapping(let mapping) = node else {
                let what = key.map { "for '\($0)'" } ?? "at the top level"
                self.report("expected a mapping \(what), found \(Self.describe(node))", at: node)
                return nil
            }
            var fields = Fields(node: node, label: label, entries: [:])
            for (keyNode, value) in mapping {
                guard case .scalar(let scalar) = keyNode, !Self.isNull(keyNode) else {
                    self.report("keys \(label) must be plain names, found \(Self.describe(keyNode))", at: keyNode)
                    continue
                }
                let name = scalar.string
                guard allowed.contains(name) else {
                    var message = "unknown key '\(name)' \(label)"
                    if let guess = Self.closest(to: name, among: allowed) { message += " (did you mean '\(guess)'?)" }
                    message += "; allowed keys: " + allowed.joined(separator: ", ")
                    self.report(message, at: keyNode)
                    continue
                }
                fields.entries[name] = Entry(key: keyNode, value: value, name: name)
            }
            return fields
        }

        /// The entry for a required key, or `nil` after reporting it missing at the mapping's position.
        mutating func require(_ key: String, in fields: Fields, hint: String = "") -> Entry? {
            if let entry = fields[key] { return entry }
            self.report("missing required key '\(key)' \(fields.label)\(hint)", at: fields.node)
            return nil
        }

        /// A non-empty string; numbers and booleans are taken as written (`name: 2024` is the name "2024").
        mutating func string(_ entry: Entry, expected: String = "a string") -> String? {
            self.string(entry.value, for: entry.name, expected: expected)
        }

        /// A non-empty string from any scalar but null.
        mutating func string(_ node: Node, for key: String, expected: String = "a string") -> String? {
            guard case .scalar(let scalar) = node, !Self.isNull(node) else {
                self.report("expected \(expected) for '\(key)', found \(Self.describe(node))", at: node)
                return nil
            }
            guard !scalar.string.isEmpty else {
                self.report("'\(key)' must not be empty", at: node)
                return nil
            }
            return scalar.string
        }

        /// `true` or `false` (YAML 1.1 spellings such as `yes` and `off` included).
        mutating func bool(_ entry: Entry) -> Bool? {
            guard Self.tag(of: entry.value) == .bool, let value = entry.value.bool else {
                self.report(
                    "expected true or false for '\(entry.name)', found \(Self.describe(entry.value))",
                    at: entry.value
                )
                return nil
            }
            return value
        }

        /// A finite number, integer or not.
        mutating func number(_ entry: Entry) -> Double? {
            let tag = Self.tag(of: entry.value)
            guard tag == .int || tag == .float, let value = entry.value.float else {
                let found = Self.describe(entry.value)
                self.report("expected a number for '\(entry.name)', found \(found)", at: entry.value)
                return nil
            }
            guard value.isFinite else {
                let written = entry.value.scalar?.string ?? "\(value)"
                self.report("'\(entry.name)' must be a finite number, found \(written)", at: entry.value)
                return nil
            }
            return value
        }

        /// A whole number greater than zero.
        mutating func positiveInteger(_ entry: Entry) -> Int? {
            guard Self.tag(of: entry.value) == .int, let value = entry.value.int else {
                let found = Self.describe(entry.value)
                self.report("expected a whole number for '\(entry.name)', found \(found)", at: entry.value)
                return nil
            }
            guard value > 0 else {
                self.report("'\(entry.name)' must be a whole number greater than 0, found \(value)", at: entry.value)
                return nil
            }
            return value
        }

        /// A duration such as `500ms`, `2s`, `1.5m`, `1h` or `30d`; a bare number is seconds.
        mutating func duration(_ entry: Entry) -> Duration? {
            guard let text = self.string(entry, expected: "a duration") else { return nil }
            guard let duration = ValueParsing.duration(text) else {
                self.report(
                    "invalid duration '\(text)' for '\(entry.name)': expected a number and a unit (ms, s, m, h or d), "
                        + "such as 500ms, 2s, 1.5m or 30d",
                    at: entry.value
                )
                return nil
            }
            return duration
        }

        /// A byte size such as `10KB`, `2.5MB` or `1GiB`; a bare number is bytes.
        mutating func byteSize(_ entry: Entry) -> Int64? {
            guard let text = self.string(entry, expected: "a byte size") else { return nil }
            guard let bytes = ValueParsing.byteSize(text) else {
                self.report(
                    "invalid byte size '\(text)' for '\(entry.name)': expected a number and a unit (B, KB, MB, GB, "
                        + "TB, KiB, MiB, GiB or TiB), such as 10KB, 2.5MB or 1GiB",
                    at: entry.value
                )
                return nil
            }
            return bytes
        }

        /// A path, resolved against the base directory, made absolute and lexically normalised.
        mutating func path(_ node: Node, for key: String) -> FilePath? {
            guard let text = self.string(node, for: key, expected: "a path") else { return nil }
            guard !text.contains("\0") else {
                self.report("'\(key)' must not contain a NUL character", at: node)
                return nil
            }
            let path = FilePath(text)
            return (path.isAbsolute ? path : self.baseDirectory.pushing(path)).lexicallyNormalized()
        }

        /// One scalar or a non-empty list of them, as the nodes to read each item from.
        mutating func list(_ entry: Entry) -> [Node]? {
            switch entry.value {
            case .sequence(let sequence):
                guard !sequence.isEmpty else {
                    self.report("'\(entry.name)' must not be an empty list", at: entry.value)
                    return nil
                }
                return Array(sequence)
            case .scalar:
                return [entry.value]
            default:
                self.report(
                    "expected a value or a list for '\(entry.name)', found \(Self.describe(entry.value))",
                    at: entry.value
                )
                return nil
            }
        }

        /// One glob or a non-empty list of globs.
        mutating func globs(_ entry: Entry) -> [GlobPattern]? {
            guard let nodes = self.list(entry) else { return nil }
            var patterns: [GlobPattern] = []
            for node in nodes {
                guard let text = self.string(node, for: entry.name, expected: "a glob") else { continue }
                do {
                    patterns.append(try GlobPattern(text))
                } catch {
                    self.report("\(error)", at: node)
                }
            }
            return patterns.count == nodes.count ? patterns : nil
        }

        /// The resolved YAML tag of a scalar, `nil` for collections.
        static func tag(of node: Node) -> Tag.Name? {
            guard case .scalar = node else { return nil }
            return Tag.Name(rawValue: node.tag.rawValue)
        }

        /// Whether a node is YAML's null: `~`, `null`, or nothing at all.
        static func isNull(_ node: Node) -> Bool {
            self.tag(of: node) == .null
        }

        /// Names what a node is, for "found …" messages: `string 'high'`, `number 150`, `a list`.
        static func describe(_ node: Node) -> String {
            switch node {
            case .scalar(let scalar):
                switch self.tag(of: node) {
                case .null?: return scalar.string.isEmpty ? "nothing" : "null"
                case .bool?: return "boolean \(scalar.string)"
                case .int?, .float?: return "number \(scalar.string)"
                default: return "string '\(scalar.string)'"
                }
            case .sequence: return "a list"
            case .mapping: return "a mapping"
            case .alias: return "an alias"
            }
        }

        /// The allowed key a misspelt one most likely meant: one edit away per three characters (at least one, at
        /// most two), ignoring case, so that short keys get no far-fetched guesses.
        static func closest(to name: String, among candidates: [String]) -> String? {
            let limit = min(2, max(1, name.count / 3))
            let scored = candidates.map { ($0, Self.editDistance(name.lowercased(), $0.lowercased())) }
            guard let best = scored.min(by: { $0.1 < $1.1 }), best.1 <= limit else { return nil }
            return best.0
        }

        /// Levenshtein distance between two short strings.
        private static func editDistance(_ left: String, _ right: String) -> Int {
            let left = Array(left)
            let right = Array(right)
            var previous = Array(0...right.count)
            for (i, leftCharacter) in left.enumerated() {
                var current = [i + 1]
                for (j, rightCharacter) in right.enumerated() {
                    let substitution = previous[j] + (leftCharacter == rightCharacter ? 0 : 1)
                    current.append(min(previous[j + 1] + 1, current[j] + 1, substitution))
                }
                previous = current
            }
            return previous[right.count]
        }
    }
}
