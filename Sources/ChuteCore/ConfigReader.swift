import Foundation
import SystemPackage
import Yams

/// Reads Chute's YAML configuration into a ``ChuteConfig``, or explains everything that is wrong with it.
///
/// The file is composed into a Yams node tree and walked by hand rather than decoded with `Codable`, because every
/// node carries its position: each problem is reported as `FILE:LINE:COL: message` at the offending key or value,
/// and all problems are reported at once instead of the first one only. The schema is documented in `docs/rules.md`.
package enum ConfigReader {
    /// Reads and validates a configuration file.
    ///
    /// Relative paths in the file resolve against the file's folder and are made absolute and lexically normalised,
    /// so the daemon's working directory does not matter.
    ///
    /// - Parameters:
    ///   - path: the file; a relative path is taken from the current directory.
    ///   - registry: the engines, whose formats and options rules name.
    /// - Returns: the validated configuration.
    /// - Throws: ``ConfigError`` with every problem found, or one issue at 1:1 when the file cannot be read.
    package static func read(
        contentsOf path: FilePath,
        registry: EngineRegistry
    ) throws(ConfigError) -> ChuteConfig {
        let absolutePath = Self.absolute(path)
        let bytes: [UInt8]
        do {
            bytes = try Self.contents(of: absolutePath)
        } catch {
            let issue = ConfigIssue(file: path.string, line: 1, column: 1, message: "cannot read the file: \(error)")
            throw ConfigError(issues: [issue])
        }
        let text: String
        switch Self.decodeUTF8(bytes) {
        case .success(let decoded):
            text = decoded
        case .failure(let position):
            let issue = ConfigIssue(
                file: path.string,
                line: position.line,
                column: position.column,
                message: "the file is not valid UTF-8 text"
            )
            throw ConfigError(issues: [issue])
        }
        return try Self.parse(
            text,
            file: path.string,
            baseDirectory: absolutePath.removingLastComponent(),
            registry: registry
        )
    }

    /// Validates a configuration given as text.
    ///
    /// - Parameters:
    ///   - yaml: the configuration.
    ///   - file: the name used in issues.
    ///   - baseDirectory: the folder relative paths resolve against (a relative one is taken from the current
    ///     directory).
    ///   - registry: the engines, whose formats and options rules name.
    /// - Returns: the validated configuration.
    /// - Throws: ``ConfigError`` with every problem found, sorted by position.
    package static func parse(
        _ yaml: String,
        file: String,
        baseDirectory: FilePath,
        registry: EngineRegistry
    ) throws(ConfigError) -> ChuteConfig {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch let error as YamlError {
            throw ConfigError(issues: [Self.syntaxIssue(for: error, in: yaml, file: file)])
        } catch {
            throw ConfigError(issues: [ConfigIssue(file: file, line: 1, column: 1, message: "invalid YAML: \(error)")])
        }
        guard let root else {
            let message = "the file is empty; it needs a 'watch' list and a 'rules' list"
            throw ConfigError(issues: [ConfigIssue(file: file, line: 1, column: 1, message: message)])
        }
        var walker = Walker(file: file, baseDirectory: Self.absolute(baseDirectory), registry: registry)
        let config = walker.config(from: root)
        guard let config, walker.issues.isEmpty else {
            // Cross-checks (sizes, ages, names) are found after the values they compare; present issues in file order.
            let sorted = walker.issues.enumerated().sorted { left, right in
                (left.element.line, left.element.column, left.offset)
                    < (right.element.line, right.element.column, right.offset)
            }
            throw ConfigError(issues: sorted.map(\.element))
        }
        return config
    }

    /// Reads conversion options given outside a rules file (`chute convert --crf 20`) with the same checks as a rule.
    ///
    /// - Parameters:
    ///   - values: rule keys (``EngineRegistry/optionKeys``) and their values as they would be written in YAML: `23`,
    ///     `128k`, `h264`, `true`.
    ///   - format: the target the options are for; options its engine does not use are refused.
    ///   - registry: the engines.
    /// - Returns: the options.
    /// - Throws: ``ConfigError`` with one issue per problem, in `values`' order; their positions mean nothing.
    package static func options(
        _ values: [(key: String, value: String)],
        for format: TargetFormat,
        registry: EngineRegistry
    ) throws(ConfigError) -> ConversionOptions {
        try Self.read(values, as: "options", registry: registry) { $0.options(of: $1, format: format) }
    }

    /// Reads job limits given outside a rules file (`chute convert --maxPixels 250000000`) with the same checks as
    /// in a rule.
    ///
    /// - Parameters:
    ///   - values: limit keys (``JobLimits/keys``) and their values as they would be written in YAML.
    ///   - base: the limits that the keys not given keep.
    ///   - registry: the engines.
    /// - Returns: the limits.
    /// - Throws: ``ConfigError`` with one issue per problem; their positions mean nothing.
    package static func limits(
        _ values: [(key: String, value: String)],
        base: JobLimits,
        registry: EngineRegistry
    ) throws(ConfigError) -> JobLimits {
        try Self.read(values, as: "limits", registry: registry) { $0.limits(of: $1, base: base) }
    }

    /// Reads `values` (``compose(_:file:)``) with a walker, through `read`, naming them `file` in the issues.
    private static func read<Value>(
        _ values: [(key: String, value: String)],
        as file: String,
        registry: EngineRegistry,
        _ read: (inout Walker, Node) -> Value?
    ) throws(ConfigError) -> Value {
        var walker = Walker(file: file, baseDirectory: FilePath("/"), registry: registry)
        let composed = try Self.compose(values, file: file)
        guard let value = read(&walker, composed), walker.issues.isEmpty else {
            let fallback = ConfigIssue(file: file, line: 1, column: 1, message: "the \(file) cannot be read")
            throw ConfigError(issues: walker.issues.isEmpty ? [fallback] : walker.issues)
        }
        return value
    }

    /// One YAML mapping of `values`, each value one scalar, so that it is typed as in a rules file and cannot add
    /// keys or structure of its own: numbers and booleans plain, anything else quoted (a crop ratio such as 16:9
    /// stays text).
    ///
    /// - Throws: ``ConfigError`` for an empty value or one with a line break or NUL, or YAML that cannot be read.
    private static func compose(_ values: [(key: String, value: String)], file: String) throws(ConfigError) -> Node {
        let unusable = values.first { _, value in value.isEmpty || value.contains { $0.isNewline || $0 == "\0" } }
        if let (key, value) = unusable {
            let issue = ConfigIssue(file: file, line: 1, column: 1, message: "invalid value '\(value)' for '\(key)'")
            throw ConfigError(issues: [issue])
        }
        let yaml = values.map { key, value in
            let plain = value.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._+-".contains($0)) }
            let escaped = value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(
                of: "\"",
                with: "\\\""
            )
            return "\(key): " + (plain ? value : "\"\(escaped)\"") + "\n"
        }.joined()
        guard let composed = try? Yams.compose(yaml: yaml.isEmpty ? "{}" : yaml) else {
            throw ConfigError(issues: [
                ConfigIssue(file: file, line: 1, column: 1, message: "the values cannot be read")
            ])
        }
        return composed
    }

    /// `path` made absolute against the current directory, and lexically normalised.
    private static func absolute(_ path: FilePath) -> FilePath {
        let absolute = path.isAbsolute ? path : FilePath(FileManager.default.currentDirectoryPath).pushing(path)
        return absolute.lexicallyNormalized()
    }

    /// Reads a whole file.
    ///
    /// - Throws: `Errno` from `open` or `read`.
    private static func contents(of path: FilePath) throws -> [UInt8] {
        let descriptor = try FileDescriptor.open(path, .readOnly)
        return try descriptor.closeAfter {
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }
                if count == 0 { return bytes }
                bytes += chunk[..<count]
            }
        }
    }

    /// A 1-based line and column, the column counted in Unicode scalars as libyaml counts it.
    private struct Position: Error, Equatable {
        var line: Int
        var column: Int
    }

    /// Decodes UTF-8, or finds the position of the first invalid byte sequence.
    private static func decodeUTF8(_ bytes: [UInt8]) -> Result<String, Position> {
        if let text = String(validating: bytes, as: UTF8.self) { return .success(text) }
        var position = Position(line: 1, column: 1)
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while case .scalarValue(let scalar) = decoder.decode(&iterator) {
            if scalar == "\n" {
                position.line += 1
                position.column = 1
            } else {
                position.column += 1
            }
        }
        return .failure(position)
    }

    /// Turns a libyaml or Yams error into one issue at the position it names.
    private static func syntaxIssue(for error: YamlError, in yaml: String, file: String) -> ConfigIssue {
        func issue(_ position: Position, _ message: String) -> ConfigIssue {
            ConfigIssue(file: file, line: position.line, column: position.column, message: message)
        }
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let position = Position(line: mark.line, column: mark.column)
            var message = "invalid YAML: "
            var suspects = [Self.character(at: position, in: yaml)]
            if let context {
                message += "\(context.text) at line \(context.mark.line), column \(context.mark.column), "
                let start = Position(line: context.mark.line, column: context.mark.column)
                suspects.append(Self.character(at: start, in: yaml))
            }
            message += problem
            if suspects.contains("*") || suspects.contains("&") {
                message += "; a value starting with '*' or '&' must be quoted, as in match: \"*.heic\""
            } else if suspects.contains("\t") {
                message += "; YAML is indented with spaces, not tabs"
            }
            return issue(position, message)
        case .reader(let problem, let offset, _, _):
            let position = offset.map { Self.position(ofCharacterOffset: $0, in: yaml) } ?? Position(line: 1, column: 1)
            return issue(position, "invalid YAML: \(problem)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            let names = duplicates.map { "'\($0)'" }.joined(separator: ", ")
            let first = Position(line: context.mark.line, column: context.mark.column)
            let again = duplicates.first.flatMap { Self.repeatedKey($0, after: first, in: yaml) }
            let message =
                "duplicate key \(names) (first at line \(first.line)); a key may appear only once in a mapping"
            return issue(again ?? first, message)
        default:
            return issue(Position(line: 1, column: 1), "invalid YAML: \(error)")
        }
    }

    /// The character at a 1-based line and scalar column, if there is one.
    private static func character(at position: Position, in yaml: String) -> Unicode.Scalar? {
        let lines = Self.lines(of: yaml)
        guard position.line >= 1, position.line <= lines.count else { return nil }
        let scalars = Array(lines[position.line - 1].unicodeScalars)
        guard position.column >= 1, position.column <= scalars.count else { return nil }
        return scalars[position.column - 1]
    }

    /// The lines of a text; `\r\n` is one `Character`, so this splits on any line break, not only on `\n`.
    private static func lines(of text: String) -> [Substring] {
        text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
    }

    /// Converts a `Character` offset, as `YamlError.reader` gives it, into a line and a scalar column.
    private static func position(ofCharacterOffset offset: Int, in yaml: String) -> Position {
        let end = yaml.index(yaml.startIndex, offsetBy: offset, limitedBy: yaml.endIndex) ?? yaml.endIndex
        let before = yaml[..<end]
        let lineStart = before.lastIndex(where: \.isNewline).map { before.index(after: $0) } ?? before.startIndex
        let line = before.count(where: \.isNewline) + 1
        return Position(line: line, column: before[lineStart...].unicodeScalars.count + 1)
    }

    /// Finds the second occurrence of a duplicated key in a block mapping.
    ///
    /// Yams reports only the first occurrence; the second is the one to point at, since that is the line to delete.
    /// Keys of one block mapping share a column, so the search looks below the first occurrence, at that column,
    /// until a line starts further left (the mapping ended). Flow mappings (`{a: 1, a: 2}`) are not searched.
    private static func repeatedKey(_ key: String, after first: Position, in yaml: String) -> Position? {
        let lines = Self.lines(of: yaml)
        let indent = first.column - 1
        let spellings = [key, "'\(key)'", "\"\(key)\""]
        for index in first.line..<max(first.line, lines.count) {
            let scalars = Substring(lines[index]).unicodeScalars
            guard let start = scalars.firstIndex(where: { $0 != " " }), scalars[start] != "#" else { continue }
            let column = scalars.distance(from: scalars.startIndex, to: start)
            if column < indent { return nil }
            guard column == indent else { continue }
            let rest = Substring(scalars[start...])
            for spelling in spellings where rest.hasPrefix(spelling) {
                if rest.dropFirst(spelling.count).drop(while: { $0 == " " }).first == ":" {
                    return Position(line: index + 1, column: first.column)
                }
            }
        }
        return nil
    }
}
