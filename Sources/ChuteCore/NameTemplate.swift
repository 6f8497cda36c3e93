import SystemPackage

/// An output file-name template such as `{stem}.{ext}` or `{date}-{stem}-small.{ext}`.
///
/// Placeholders: `{stem}` the source name without its extension, `{ext}` the target format's extension,
/// `{name}` the whole source name, `{sourceExt}` the source extension (lower-cased), `{rule}` the rule name,
/// `{date}` the job's start date (`YYYY-MM-DD`, UTC). Anything else in braces is an error when the rule is read.
package struct NameTemplate: Sendable, Hashable, CustomStringConvertible {
    /// The template as written.
    package let template: String
    private let parts: [Part]

    private enum Part: Hashable {
        case text(String)
        case placeholder(Placeholder)
    }

    /// The placeholders a template may use.
    package enum Placeholder: String, Sendable, CaseIterable {
        case stem, ext, name, sourceExt, rule, date
    }

    /// `{stem}.{ext}`: the source's name with the target's extension.
    package static let `default` = try! NameTemplate("{stem}.{ext}")

    package var description: String { self.template }

    /// Parses a template.
    ///
    /// - Throws: ``NameTemplateError`` for an unknown placeholder, an unclosed brace, or a `/`.
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
            let key = String(rest[rest.index(after: open)..<close])
            guard let placeholder = Placeholder(rawValue: key) else {
                let known = Placeholder.allCases.map { "{\($0.rawValue)}" }.joined(separator: ", ")
                throw NameTemplateError(template: template, reason: "unknown placeholder {\(key)}; known: \(known)")
            }
            parts.append(.placeholder(placeholder))
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

    /// Renders the template for one source file.
    ///
    /// The source's name is used as its bytes: a name that is not valid UTF-8 (`caf\xe9.jpg`) gives an output name
    /// with the same bytes (`caf\xe9.jpg`), so two names that differ in such a byte never get the same output.
    ///
    /// - Parameters:
    ///   - sourceName: the source's file name.
    ///   - format: the target format.
    ///   - rule: the rule's name.
    ///   - date: the job's start date as `YYYY-MM-DD`.
    ///   - isFolder: whether the source is a folder (a group, ``RuleGrouping``): its whole name is the stem, since a
    ///     dot in a folder's name (`2024.11.25`) starts no extension.
    /// - Returns: the output file name, made safe by ``SafeName/sanitized(bytes:)``.
    package func render(
        sourceName: FilePath.Component,
        format: TargetFormat,
        rule: String,
        date: String,
        isFolder: Bool = false
    ) -> FilePath.Component {
        let (stem, sourceExt) = isFolder ? (sourceName.bytes, []) : sourceName.stemAndExtensionBytes
        var result: [UInt8] = []
        for part in self.parts {
            switch part {
            case .text(let text): result += text.utf8
            case .placeholder(.stem): result += stem
            case .placeholder(.ext): result += format.name.utf8
            case .placeholder(.name): result += sourceName.bytes
            case .placeholder(.sourceExt): result += SafeName.lowercased(sourceExt)
            case .placeholder(.rule): result += rule.utf8
            case .placeholder(.date): result += date.utf8
            }
        }
        // Sanitised bytes are never empty, `.`, `..`, and hold no `/` or NUL.
        return FilePath.Component(bytes: SafeName.sanitized(bytes: result))!
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
