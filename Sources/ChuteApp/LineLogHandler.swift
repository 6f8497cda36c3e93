import ChuteCore
import Foundation
import Glibc
import Logging
import Synchronization

/// How `chute` writes its log records: one line each, in a form a program can read back.
package enum LogFormat: String, Sendable, CaseIterable {
    /// `time=… level=info msg="Job completed" input.path="/in/a b.png" job.id=…`: `key=value` pairs, a value
    /// quoted when it is empty or holds a space, `=`, `"` or a control character, with `\"`, `\\`, `\n`, `\r`, `\t`
    /// and `\u{…}` escapes inside the quotes.
    case logfmt
    /// One JSON object per line, with the keys `time`, `level`, `msg` and the metadata keys.
    case json
}

/// Writes each record to standard error as one line in a ``LogFormat``, the metadata sorted by key.
///
/// The record's `time` is local time with its offset (`2024-06-01T10:00:00+0200`), as swift-log's
/// `StreamLogHandler` writes it. An error given with `logger.error(…, error:)` adds `error.message` and `error.type`.
///
/// - Important: Lines are written whole, one `write` each, under a lock shared by every handler of the process, so
///   records from several threads never interleave.
package struct LineLogHandler: LogHandler {
    package var metadata: Logger.Metadata = [:]
    package var metadataProvider: Logger.MetadataProvider?
    package var logLevel: Logger.Level = .info
    private let format: LogFormat

    /// Serialises writes to standard error across every handler.
    private static let output = Mutex<Int32>(STDERR_FILENO)

    package init(format: LogFormat, level: Logger.Level) {
        self.format = format
        self.logLevel = level
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    package func log(event: LogEvent) {
        var metadata = self.metadata
        if let provided = self.metadataProvider?.get() {
            metadata.merge(provided) { _, new in new }
        }
        if let explicit = event.metadata {
            metadata.merge(explicit) { _, new in new }
        }
        if let error = event.error {
            metadata["error.message"] = "\(error)"
            metadata["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        let line = Self.render(
            time: Self.timestamp(),
            level: event.level,
            message: event.message.description,
            metadata: metadata,
            format: self.format
        )
        Self.write(line + "\n")
    }

    /// One record as a line, without its newline.
    package static func render(
        time: String,
        level: Logger.Level,
        message: String,
        metadata: Logger.Metadata,
        format: LogFormat
    ) -> String {
        let fields = metadata.sorted { $0.key < $1.key }
        switch format {
        case .logfmt:
            var parts = [
                "time=\(Self.logfmtValue(time))", "level=\(level.rawValue)", "msg=\(Self.logfmtValue(message))",
            ]
            for (key, value) in fields {
                parts.append("\(Self.logfmtKey(key))=\(Self.logfmtValue(value.description))")
            }
            return parts.joined(separator: " ")
        case .json:
            var parts = [
                "\"time\":\(Self.jsonString(time))", "\"level\":\(Self.jsonString(level.rawValue))",
                "\"msg\":\(Self.jsonString(message))",
            ]
            for (key, value) in fields {
                parts.append("\(Self.jsonString(key)):\(Self.json(value))")
            }
            return "{" + parts.joined(separator: ",") + "}"
        }
    }

    // MARK: - logfmt

    /// A key with what would end it (a space, `=`, `"`, a control character) replaced by `_`.
    private static func logfmtKey(_ key: String) -> String {
        guard !key.isEmpty else { return "_" }
        var result = ""
        for scalar in key.unicodeScalars {
            result.unicodeScalars.append(Self.endsBareValue(scalar) ? "_" : scalar)
        }
        return result
    }

    /// A value as it is when nothing in it could end it early, otherwise quoted with escapes.
    private static func logfmtValue(_ value: String) -> String {
        guard value.isEmpty || value.unicodeScalars.contains(where: Self.endsBareValue) else { return value }
        return Self.quoted(value) { "\\u{\(String($0, radix: 16))}" }
    }

    /// `text` between double quotes, with `"`, `\`, newlines, returns and tabs escaped as in C, and other control
    /// characters and bidirectional overrides written by `escape` from their code point.
    private static func quoted(_ text: String, escape: (UInt32) -> String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if LogText.isUnsafe(scalar) {
                    result += escape(scalar.value)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "\""
    }

    /// Whether a bare value or key would end at this character or show it raw: a space, `=`, `"` or a control
    /// character (bidirectional overrides included, so that a terminal shows the line in its order).
    private static func endsBareValue(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "=" || scalar == "\"" || LogText.isUnsafe(scalar)
    }

    // MARK: - JSON

    private static func json(_ value: Logger.Metadata.Value) -> String {
        switch value {
        case .string(let text): Self.jsonString(text)
        case .stringConvertible(let convertible): Self.jsonString(convertible.description)
        case .array(let values): "[" + values.map(Self.json).joined(separator: ",") + "]"
        case .dictionary(let values):
            "{"
                + values.sorted { $0.key < $1.key }.map { "\(Self.jsonString($0.key)):\(Self.json($0.value))" }
                .joined(separator: ",") + "}"
        }
    }

    /// A JSON string literal; control characters and bidirectional overrides are written as `\u` escapes.
    private static func jsonString(_ text: String) -> String {
        Self.quoted(text) { code in
            let hex = String(code, radix: 16)
            return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        }
    }

    // MARK: - Output

    /// The local time with its offset, such as `2024-06-01T10:00:00+0200`. The corresponding C function is
    /// `strftime`.
    private static func timestamp() -> String {
        var now = time(nil)
        var local = tm()
        guard localtime_r(&now, &local) != nil else { return "unknown" }
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            let count = strftime(buffer.baseAddress!, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
            return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress, count: count), as: UTF8.self)
        }
    }

    /// Writes the whole line, retrying after a signal and after a short write. The corresponding C function is
    /// `write`.
    private static func write(_ line: String) {
        let bytes = Array(line.utf8)
        Self.output.withLock { descriptor in
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = try? SystemCall.check("write") {
                        Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    }
                    guard let written else { return }  // standard error is gone: there is nowhere left to say so
                    offset += written
                }
            }
        }
    }
}
