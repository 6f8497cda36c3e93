import Foundation
import SystemPackage

/// Makes untrusted text (file names, decoder messages) safe to put in a log record or a sidecar field.
package enum LogText {
    /// The longest field kept; longer text is cut and marked with `…`.
    package static let maximumLength = 1024

    /// Escapes control characters (newlines, ESC, DEL) and bidirectional overrides as `\u{…}` and caps the length,
    /// so a hostile name can neither forge a log line nor reorder what a terminal shows.
    ///
    /// - Parameter limit: the most characters kept (``maximumLength`` by default).
    package static func escaped(_ text: String, limit: Int = Self.maximumLength) -> String {
        Self.escaped(units: text.unicodeScalars.map { .scalar($0) }, limit: limit)
    }

    /// Escapes a path as ``escaped(_:limit:)`` escapes text, from the path's bytes: a byte that is not valid UTF-8
    /// (a Latin-1 `é` in `caf\xe9.jpg`) is shown as `\x{e9}` rather than as the U+FFFD that `FilePath.string` makes
    /// of it, so two such names stay apart in the log and the bytes can be read back.
    ///
    /// - Parameter limit: the most characters kept (``maximumLength`` by default).
    package static func escaped(_ path: FilePath, limit: Int = Self.maximumLength) -> String {
        Self.escaped(units: NameUnit.decode(path.bytes), limit: limit)
    }

    private static func escaped(units: [NameUnit], limit: Int) -> String {
        var result = ""
        for unit in units {
            if result.unicodeScalars.count >= limit {
                result += "…"
                break
            }
            switch unit {
            case .scalar(let scalar) where Self.isUnsafe(scalar):
                result += "\\u{\(String(scalar.value, radix: 16))}"
            case .scalar(let scalar):
                result.unicodeScalars.append(scalar)
            case .invalidByte(let byte):
                result += "\\x{\(String(byte, radix: 16))}"
            }
        }
        return result
    }

    /// Whether a character could forge a log line or reorder what a terminal shows: a control character (newline,
    /// ESC, DEL, …) or a bidirectional override or isolate.
    package static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return scalar.properties.generalCategory == .control || (0x202A...0x202E).contains(value)
            || (0x2066...0x2069).contains(value)
    }
}

extension LogText {
    /// A time as the log writes its own: local time with its offset, such as `2024-06-01T10:00:00+0200`.
    package static func localTime(_ date: Date) -> String {
        Date.ISO8601FormatStyle(timeZone: .current).format(date)
    }
}
