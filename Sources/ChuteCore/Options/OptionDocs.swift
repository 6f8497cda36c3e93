import Foundation

/// The option and format tables of `docs/rules.md`, written from the registry (`chute schema --markdown` prints
/// them; a test holds the docs to them).
package enum OptionDocs {
    /// An option's syntax in the docs' "type" column: `bool`, `int, 0–63`, `` `h264`, `hevc`, `vp9` or `av1` ``.
    package static func syntax(of syntax: OptionSyntax) -> String {
        switch syntax {
        case .flag:
            return "bool"
        case .integer(let range) where range.upperBound == Int.max:
            return range.lowerBound == 1 ? "int > 0" : "int ≥ \(range.lowerBound)"
        case .integer(let range):
            return "int, \(range.lowerBound)–\(range.upperBound)"
        case .number(let range):
            let lower = OptionValue.number(range.lower)
            let upper = OptionValue.number(range.upper)
            return "number, \(lower) \(range.lowerIncluded ? "≤" : "<") x ≤ \(upper)"
        case .choice(let choices):
            let quoted = choices.map { "`\($0)`" }
            return quoted.count <= 5
                ? quoted.dropLast().joined(separator: ", ") + " or " + quoted[quoted.count - 1]
                : "\(quoted[0]) … \(quoted[quoted.count - 1])"
        case .bitrate(let range):
            let lower = ValueParsing.describe(bitrate: range.lowerBound)
            return "bitrate, \(lower)–\(ValueParsing.describe(bitrate: range.upperBound))"
        case .byteSize(let range):
            return "byte size, \(ValueParsing.describe(bytes: range.lowerBound))–"
                + ValueParsing.describe(bytes: range.upperBound)
        case .text(let grammar):
            return grammar.name
        }
    }

    /// Where an option applies: the engines that take it (`image, video`), or the formats when its spec narrows it,
    /// and the other engines' formats it also applies to (`video, audio; jpg, png from video`).
    package static func scope(of spec: OptionSpec, in registry: EngineRegistry) -> String {
        if spec.formats != nil {
            return registry.formats(accepting: spec.key).map { "`\($0.name)`" }.joined(separator: ", ")
        }
        let engines = registry.engines.filter { engine in engine.options.contains { $0.key == spec.key } }
        let scope = engines.map(\.kind.rawValue).joined(separator: ", ")
        let also = engines.flatMap { engine in engine.alsoWrites.filter { $0.options.contains(spec.key) } }
        guard !also.isEmpty else { return scope }
        let formats = also.flatMap(\.formats).map { "`\($0)`" }.joined(separator: ", ")
        return scope + "; " + formats + " from "
            + Set(also.flatMap(\.from).map(\.rawValue)).sorted().joined(separator: " or ")
    }

    /// The table of every option key.
    package static func optionTable(_ registry: EngineRegistry) -> String {
        var lines = [
            "| key | type | default | targets | stage | meaning |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for spec in registry.options {
            let cells = [
                "`\(spec.key)`", Self.syntax(of: spec.syntax), spec.defaultValue, Self.scope(of: spec, in: registry),
                spec.stage.rawValue, spec.summary,
            ]
            lines.append(
                "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |"
            )
        }
        return lines.joined(separator: "\n")
    }

    /// The table of target formats by engine, with the other engines' formats each writes from its own inputs.
    package static func formatTable(_ registry: EngineRegistry) -> String {
        var lines = ["| engine | library | formats (aliases) |", "| --- | --- | --- |"]
        for engine in registry.engines {
            let formats = engine.formats.map { format in
                "`\(format.name)`"
                    + (format.aliases.isEmpty
                        ? "" : " (" + format.aliases.map { "`\($0)`" }.joined(separator: ", ") + ")")
            }
            // Other engines' formats it writes from the inputs it reads: "from video: `jpg`, `gif`".
            // Entries from the same inputs (with different options) are listed together.
            var also: [String] = []
            var sources: [String] = []
            for entry in engine.alsoWrites {
                let from = entry.from.map(\.rawValue).sorted().joined(separator: " and ")
                if sources.last == from {
                    also[also.count - 1] += ", " + entry.formats.map { "`\($0)`" }.joined(separator: ", ")
                } else {
                    sources.append(from)
                    also.append("; from \(from): " + entry.formats.map { "`\($0)`" }.joined(separator: ", "))
                }
            }
            lines.append(
                "| \(engine.kind.rawValue) | \(engine.library) | \(formats.joined(separator: ", "))\(also.joined()) |"
            )
        }
        return lines.joined(separator: "\n")
    }
}
