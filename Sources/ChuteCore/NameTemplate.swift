import Foundation
import SystemPackage

/// An output file-name template such as `{stem}.{ext}` or `{taken:yyyy-MM-dd}-{stem}-small.{ext}`.
///
/// Placeholders: `{stem}` the source name without its extension, `{ext}` the target format's extension,
/// `{name}` the whole source name, `{sourceExt}` the source extension (lower-cased), `{rule}` the rule name,
/// `{date}` the job's start date (UTC), `{taken}` the photo's or clip's capture time (in the daemon's time zone).
/// `{date}` and `{taken}` take a Unicode date pattern after a colon, `{taken:yyyyMMdd-HHmmss}`; without one they
/// are `yyyy-MM-dd`. Anything else in braces is an error when the rule is read.
package struct NameTemplate: Sendable, Hashable, CustomStringConvertible {
    /// The template as written.
    package let template: String
    private let parts: [Part]

    private enum Part: Hashable {
        case text(String)
        case placeholder(Placeholder)
        /// `{date}` or `{taken}`, with its date pattern.
        case time(Placeholder, pattern: String)
    }

    /// The placeholders a template may use.
    package enum Placeholder: String, Sendable, CaseIterable {
        case stem, ext, name, sourceExt, rule, date, taken

        /// Whether it is a time, which takes a date pattern.
        var isTime: Bool { self == .date || self == .taken }
    }

    /// What a template is rendered from, for one source.
    package struct Values: Sendable, Hashable {
        /// The source's file name (a group's folder name).
        package var sourceName: FilePath.Component
        /// The target format.
        package var format: TargetFormat
        /// The rule's name.
        package var rule: String
        /// The job's start, `{date}`.
        package var date: Date
        /// The capture time, `{taken}`: the source's modification time until its worker reports the capture time.
        package var taken: Date
        /// Whether the source is a folder (a group, ``RuleGrouping``): its whole name is the stem, since a dot in a
        /// folder's name (`2024.11.25`) starts no extension.
        package var isFolder: Bool

        package init(
            sourceName: FilePath.Component,
            format: TargetFormat,
            rule: String,
            date: Date,
            taken: Date,
            isFolder: Bool = false
        ) {
            self.sourceName = sourceName
            self.format = format
            self.rule = rule
            self.date = date
            self.taken = taken
            self.isFolder = isFolder
        }
    }

    /// The pattern of `{date}` and `{taken}` without one.
    private static let defaultTimePattern = "yyyy-MM-dd"

    /// The letters of the Unicode date field symbols (UTS #35), which a pattern may use outside quotes.
    private static let patternLetters = Set("GyYuUrQqMLlwWdDFgEecabBhHkKjJmsSAzZOvVXx")

    /// `{stem}.{ext}`: the source's name with the target's extension.
    package static let `default` = try! NameTemplate("{stem}.{ext}")

    package var description: String { self.template }

    /// Whether the template uses `{taken}`: the name is then known only once the worker has read the capture time.
    package var usesCaptureTime: Bool {
        self.parts.contains { if case .time(.taken, _) = $0 { true } else { false } }
    }

    /// Parses a template.
    ///
    /// - Throws: ``NameTemplateError`` for an unknown placeholder, an unclosed brace, a `/`, or a date pattern that
    ///   is empty, unclosed in its quotes, uses a letter that is no date field, or is given to a placeholder other
    ///   than `{date}` and `{taken}`.
    package init(_ template: String) throws(NameTemplateError) {
        guard !template.contains("/") else {
            throw NameTemplateError(template: template, reason: "a file name cannot contain '/'")
        }
        var parts: [Part] = []
        var rest = template[...]
        while let open = rest.firstIndex(of: "{") {
            if open > rest.startIndex { parts.append(.text(String(rest[..<open]))) }
            guard let close = rest[open...].firstIndex(of: "}") else {
                throw NameTemplateError(template: template, reason: "'{' is never closed")
            }
            let inside = rest[rest.index(after: open)..<close]
            let colon = inside.firstIndex(of: ":")
            let key = String(inside[..<(colon ?? inside.endIndex)])
            guard let placeholder = Placeholder(rawValue: key) else {
                let known = Placeholder.allCases.map { "{\($0.rawValue)}" }.joined(separator: ", ")
                throw NameTemplateError(template: template, reason: "unknown placeholder {\(inside)}; known: \(known)")
            }
            if let colon {
                let pattern = String(inside[inside.index(after: colon)...])
                guard placeholder.isTime else {
                    throw NameTemplateError(
                        template: template,
                        reason: "{\(key)} takes no format; only {date} and {taken} take a date pattern"
                    )
                }
                try Self.check(pattern, of: placeholder, in: template)
                parts.append(.time(placeholder, pattern: pattern))
            } else if placeholder.isTime {
                parts.append(.time(placeholder, pattern: Self.defaultTimePattern))
            } else {
                parts.append(.placeholder(placeholder))
            }
            rest = rest[rest.index(after: close)...]
        }
        if !rest.isEmpty { parts.append(.text(String(rest))) }
        guard parts.contains(.placeholder(.stem)) || parts.contains(.placeholder(.name)) else {
            throw NameTemplateError(
                template: template,
                reason: "must contain {stem} or {name}, or every input would get the same output name"
            )
        }
        self.template = template
        self.parts = parts
    }

    /// Checks a date pattern: not empty, its quotes closed, and every letter outside quotes a date field.
    private static func check(
        _ pattern: String,
        of placeholder: Placeholder,
        in template: String
    ) throws(NameTemplateError) {
        guard !pattern.isEmpty else {
            throw NameTemplateError(
                template: template,
                reason: "{\(placeholder.rawValue):} has an empty date pattern; leave out the ':' for yyyy-MM-dd"
            )
        }
        var quoted = false
        for character in pattern {
            if character == "'" {
                quoted.toggle()
            } else if !quoted, character.isASCII, character.isLetter, !Self.patternLetters.contains(character) {
                throw NameTemplateError(
                    template: template,
                    reason: "'\(character)' in {\(placeholder.rawValue):\(pattern)} is no date field (Unicode date "
                        + "patterns: yyyy year, MM month, dd day, HH hour, mm minute, ss second; quote text as 'T')"
                )
            }
        }
        guard !quoted else {
            throw NameTemplateError(
                template: template,
                reason: "a quote in {\(placeholder.rawValue):\(pattern)} is never closed"
            )
        }
    }

    /// Renders the template for one source file.
    ///
    /// The source's name is used as its bytes: a name that is not valid UTF-8 (`caf\xe9.jpg`) gives an output name
    /// with the same bytes (`caf\xe9.jpg`), so two names that differ in such a byte never get the same output.
    ///
    /// - Parameters:
    ///   - values: the source's name, the target, the rule, the job's start and the capture time.
    ///   - localZone: the zone `{taken}` is given in: the daemon's (`TZ`). `{date}` is in UTC.
    /// - Returns: the output file name, made safe by ``SafeName/sanitized(bytes:)``.
    package func render(_ values: Values, localZone: TimeZone = .current) -> FilePath.Component {
        let (stem, sourceExt) =
            values.isFolder ? (values.sourceName.bytes, []) : values.sourceName.stemAndExtensionBytes
        var result: [UInt8] = []
        for part in self.parts {
            switch part {
            case .text(let text): result += text.utf8
            case .placeholder(.stem): result += stem
            case .placeholder(.ext): result += values.format.name.utf8
            case .placeholder(.name): result += values.sourceName.bytes
            case .placeholder(.sourceExt): result += SafeName.lowercased(sourceExt)
            case .placeholder(.rule): result += values.rule.utf8
            case .placeholder(.date), .placeholder(.taken): break  // parsed as `.time`
            case .time(let placeholder, let pattern):
                let (time, zone) =
                    placeholder == .taken ? (values.taken, localZone) : (values.date, TimeZone(identifier: "UTC")!)
                result += Self.format(time, pattern: pattern, in: zone).utf8
            }
        }
        // Sanitised bytes are never empty, `.`, `..`, and hold no `/` or NUL.
        return FilePath.Component(bytes: SafeName.sanitized(bytes: result))!
    }

    /// `time` in `zone` as the date pattern says, with the Gregorian calendar and POSIX names (`Jul`, not the
    /// locale's), so that a name does not change with the daemon's language.
    private static func format(_ time: Date, pattern: String, in zone: TimeZone) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.timeZone = zone
        formatter.dateFormat = pattern
        return formatter.string(from: time)
    }

    /// Splits `IMG_1.HEIC` into (`IMG_1`, `HEIC`); a name without a dot (or only a leading one) has no extension.
    package static func split(_ name: String) -> (stem: String, ext: String) {
        guard let dot = name.lastIndex(of: "."), dot > name.startIndex else { return (name, "") }
        return (String(name[..<dot]), String(name[name.index(after: dot)...]))
    }
}

/// A name template that cannot be used.
package struct NameTemplateError: Error, Sendable, Equatable, CustomStringConvertible {
    package var template: String
    package var reason: String
    package var description: String { "invalid name template '\(self.template)': \(self.reason)" }
}

/// Makes file names derived from untrusted input safe to create.
package enum SafeName {
    /// The longest output name, in UTF-8 bytes, leaving room for a `-NNN` collision suffix and temp prefixes.
    package static let maximumBytes = 200

    /// Replaces control characters, bidirectional overrides and `/` with `_`, refuses `.`/`..` and leading dashes,
    /// and caps the length at a character boundary, keeping the extension.
    ///
    /// The overrides are the ones ``LogText`` escapes: in a file listing, `invoice<U+202E>gnp.jpg` reads as
    /// `invoicegpj.png`, so an uploader could make an output look like another type.
    package static func sanitized(_ name: String) -> String {
        var cleaned = String(String.UnicodeScalarView(name.unicodeScalars.map { Self.isUnsafe($0) ? "_" : $0 }))
        if cleaned.hasPrefix("-") { cleaned = "_" + cleaned.dropFirst() }
        if cleaned.isEmpty || cleaned == "." || cleaned == ".." { cleaned = "_" + cleaned }
        guard cleaned.utf8.count > maximumBytes else { return cleaned }
        let (stem, ext) = NameTemplate.split(cleaned)
        let suffix = ext.isEmpty ? "" : "." + ext
        var shortened = ""
        for character in stem {
            if shortened.utf8.count + character.utf8.count + suffix.utf8.count > maximumBytes { break }
            shortened.append(character)
        }
        return shortened + suffix
    }

    /// Sanitises a name's bytes as ``sanitized(_:)`` sanitises text, keeping bytes that are not valid UTF-8 (a
    /// Latin-1 `é`) as they are: they are neither control characters nor `/`, and replacing them would make two
    /// names that differ only there the same. The length is capped at a scalar or byte boundary.
    package static func sanitized(bytes: [UInt8]) -> [UInt8] {
        if let text = String(validating: bytes, as: UTF8.self) { return Array(Self.sanitized(text).utf8) }
        var units = NameUnit.decode(bytes).map { unit in
            if case .scalar(let scalar) = unit, Self.isUnsafe(scalar) { return NameUnit.scalar("_") }
            return unit
        }
        if units.first == .scalar("-") { units[0] = .scalar("_") }
        let cleaned = units.flatMap(\.bytes)
        guard cleaned.count > maximumBytes else { return cleaned }
        let dot = cleaned.lastIndex(of: UInt8(ascii: ".")).flatMap { $0 > 0 ? $0 : nil }
        let suffix = dot.map { Array(cleaned[$0...]) } ?? []
        var shortened: [UInt8] = []
        for unit in NameUnit.decode(cleaned[..<(dot ?? cleaned.endIndex)]) {
            let piece = unit.bytes
            if shortened.count + piece.count + suffix.count > maximumBytes { break }
            shortened += piece
        }
        return shortened + suffix
    }

    /// Lower-cases the valid UTF-8 of a name's bytes (a source extension), keeping the other bytes as they are.
    package static func lowercased(_ bytes: [UInt8]) -> [UInt8] {
        if let text = String(validating: bytes, as: UTF8.self) { return Array(text.lowercased().utf8) }
        return NameUnit.decode(bytes).flatMap { unit in
            if case .scalar(let scalar) = unit { return Array(String(scalar).lowercased().utf8) }
            return unit.bytes
        }
    }

    private static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        let isBidiControl = (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
        return scalar.properties.generalCategory == .control || isBidiControl || scalar == "/" || scalar == "\u{7F}"
    }
}
