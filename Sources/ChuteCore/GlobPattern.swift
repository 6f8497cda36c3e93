/// A shell-style glob on a file name (`*.heic`, `IMG_????.jpg`, `[abc]*`), matched case-insensitively.
///
/// `*` matches any run of characters, `?` one character, `[...]` one character of a set (`[!...]` negates it), and
/// `{a,b}` either of its comma-separated alternatives, as in a shell (`*.{jpg,jpeg}`; they may nest). Globs match the
/// name only, never the folder part, so `*` crosses no `/`.
package struct GlobPattern: Sendable, Hashable, CustomStringConvertible {
    /// The pattern as written.
    package let pattern: String
    /// One element list per alternative of the pattern's braces (one list when it has none).
    private let alternatives: [[Element]]

    /// The most alternatives braces may spell out: `{a,b}{c,d}` is four.
    static let maximumAlternatives = 256

    private enum Element: Hashable {
        case literal(Character)
        case anyOne
        case anyRun
        case set(negated: Bool, members: [ClosedRange<Character>])
    }

    package var description: String { self.pattern }

    /// The extension every name this glob matches ends with, such as `pdf` for `*.pdf` or `scan-*.PDF`; `nil` when
    /// the part after the last dot has a wildcard or a set (`*.jp?g`, `*`), or there is no dot.
    package var literalExtension: String? {
        guard let dot = self.pattern.lastIndex(of: ".") else { return nil }
        let tail = self.pattern[self.pattern.index(after: dot)...]
        guard !tail.isEmpty, !tail.contains(where: { "*?[]{},".contains($0) }) else { return nil }
        return tail.lowercased()
    }

    /// Parses a glob.
    ///
    /// - Throws: ``GlobError`` when a `[` set is not closed or the pattern contains `/`.
    package init(_ pattern: String) throws(GlobError) {
        guard !pattern.isEmpty else { throw GlobError(pattern: pattern, reason: "empty pattern") }
        guard !pattern.contains("/") else {
            throw GlobError(pattern: pattern, reason: "a glob matches file names only and cannot contain '/'")
        }
        var alternatives: [[Element]] = []
        for spelled in try Self.expandingBraces(Array(pattern.lowercased())[...], pattern: pattern) {
            alternatives.append(try Self.elements(of: spelled[...], pattern: pattern))
        }
        self.pattern = pattern
        self.alternatives = alternatives
    }

    /// The patterns that `{a,b}` alternatives spell out, in order; a `{` without a closing `}` or without a comma
    /// inside is itself.
    private static func expandingBraces(
        _ characters: ArraySlice<Character>,
        pattern: String
    ) throws(GlobError) -> [[Character]] {
        guard let open = characters.firstIndex(of: "{") else { return [Array(characters)] }
        var depth = 0
        var commas: [Int] = []
        var close: Int?
        for index in open..<characters.endIndex {
            switch characters[index] {
            case "{": depth += 1
            case "}":
                depth -= 1
                if depth == 0 { close = index }
            case "," where depth == 1: commas.append(index)
            default: break
            }
            if close != nil { break }
        }
        guard let close, !commas.isEmpty else {
            // Not an alternation: the brace is a character of the name, and later braces may still be one.
            let rest = try Self.expandingBraces(characters[(open + 1)...], pattern: pattern)
            return rest.map { Array(characters[..<open]) + ["{"] + $0 }
        }
        let bounds = [open] + commas + [close]
        let prefix = Array(characters[..<open])
        let suffixes = try Self.expandingBraces(characters[(close + 1)...], pattern: pattern)
        var spelled: [[Character]] = []
        for (start, end) in zip(bounds, bounds.dropFirst()) {
            for choice in try Self.expandingBraces(characters[(start + 1)..<end], pattern: pattern) {
                for suffix in suffixes {
                    spelled.append(prefix + choice + suffix)
                    guard spelled.count <= Self.maximumAlternatives else {
                        throw GlobError(
                            pattern: pattern,
                            reason: "its braces spell out more than \(Self.maximumAlternatives) alternatives"
                        )
                    }
                }
            }
        }
        return spelled
    }

    /// Parses one alternative, free of braces.
    private static func elements(
        of pattern: ArraySlice<Character>,
        pattern original: String
    ) throws(GlobError)
        -> [Element]
    {
        var elements: [Element] = []
        var characters = pattern
        while let character = characters.popFirst() {
            switch character {
            case "*":
                if elements.last != .anyRun { elements.append(.anyRun) }
            case "?":
                elements.append(.anyOne)
            case "[":
                var negated = false
                if characters.first == "!" || characters.first == "^" {
                    negated = true
                    characters.removeFirst()
                }
                var members: [ClosedRange<Character>] = []
                var closed = false
                var first = true
                while let member = characters.popFirst() {
                    if member == "]" && !first {
                        closed = true
                        break
                    }
                    first = false
                    if characters.count >= 2, characters.first == "-", characters.dropFirst().first != "]" {
                        characters.removeFirst()
                        let upper = characters.removeFirst()
                        guard member <= upper else {
                            throw GlobError(pattern: original, reason: "range '\(member)-\(upper)' is reversed")
                        }
                        members.append(member...upper)
                    } else {
                        members.append(member...member)
                    }
                }
                guard closed else { throw GlobError(pattern: original, reason: "'[' is never closed") }
                elements.append(.set(negated: negated, members: members))
            default:
                elements.append(.literal(character))
            }
        }
        return elements
    }

    /// Whether `name` (a file name, not a path) matches, ignoring case.
    package func matches(_ name: String) -> Bool {
        let characters = Array(name.lowercased())
        return self.alternatives.contains { Self.matches(characters, $0) }
    }

    private static func matches(_ characters: [Character], _ elements: [Element]) -> Bool {
        // Iterative matcher with one back-track point for the last `*`: linear in practice, never exponential.
        var patternIndex = 0
        var nameIndex = 0
        var starPattern = -1
        var starName = 0
        while nameIndex < characters.count {
            if patternIndex < elements.count {
                switch elements[patternIndex] {
                case .anyRun:
                    starPattern = patternIndex
                    starName = nameIndex
                    patternIndex += 1
                    continue
                case .anyOne:
                    patternIndex += 1
                    nameIndex += 1
                    continue
                case .literal(let literal) where literal == characters[nameIndex]:
                    patternIndex += 1
                    nameIndex += 1
                    continue
                case .set(let negated, let members)
                where members.contains { $0.contains(characters[nameIndex]) } != negated:
                    patternIndex += 1
                    nameIndex += 1
                    continue
                default:
                    break
                }
            }
            guard starPattern >= 0 else { return false }
            patternIndex = starPattern + 1
            starName += 1
            nameIndex = starName
        }
        while patternIndex < elements.count, elements[patternIndex] == .anyRun { patternIndex += 1 }
        return patternIndex == elements.count
    }
}

/// A glob that cannot be parsed.
package struct GlobError: Error, Sendable, Equatable, CustomStringConvertible {
    package var pattern: String
    package var reason: String
    package var description: String { "invalid glob '\(self.pattern)': \(self.reason)" }
}
