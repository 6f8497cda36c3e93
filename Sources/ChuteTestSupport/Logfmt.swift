/// A strict reader of logfmt lines, to check what `chute` logs: `key=value` pairs separated by one space, a value
/// either bare (no space, `=` or `"`) or quoted with `\"`, `\\`, `\n`, `\r`, `\t` and `\u{…}` escapes.
package enum Logfmt {
    /// Reads one line.
    ///
    /// - Returns: its fields, or `nil` when the line is not logfmt: a word without `=`, an unclosed quote, an unknown
    ///   escape, a bare value holding `=` or `"`, a key given twice, or an empty line.
    package static func parse(_ line: String) -> [String: String]? {
        let scalars = Array(line.unicodeScalars)
        var fields: [String: String] = [:]
        var index = 0
        while index < scalars.count {
            var key = ""
            while index < scalars.count, !" =\"".unicodeScalars.contains(scalars[index]) {
                key.unicodeScalars.append(scalars[index])
                index += 1
            }
            guard !key.isEmpty, index < scalars.count, scalars[index] == "=" else { return nil }
            index += 1
            var value = ""
            if index < scalars.count, scalars[index] == "\"" {
                index += 1
                var closed = false
                while index < scalars.count {
                    let scalar = scalars[index]
                    index += 1
                    if scalar == "\"" {
                        closed = true
                        break
                    }
                    guard scalar == "\\" else {
                        value.unicodeScalars.append(scalar)
                        continue
                    }
                    guard index < scalars.count else { return nil }
                    let escaped = scalars[index]
                    index += 1
                    switch escaped {
                    case "\"", "\\": value.unicodeScalars.append(escaped)
                    case "n": value += "\n"
                    case "r": value += "\r"
                    case "t": value += "\t"
                    case "u":
                        guard index < scalars.count, scalars[index] == "{",
                            let close = scalars[index...].firstIndex(of: "}"),
                            let number = UInt32(
                                String(String.UnicodeScalarView(scalars[(index + 1)..<close])),
                                radix: 16
                            ),
                            let decoded = Unicode.Scalar(number)
                        else { return nil }
                        value.unicodeScalars.append(decoded)
                        index = close + 1
                    default: return nil
                    }
                }
                guard closed else { return nil }
            } else {
                while index < scalars.count, scalars[index] != " " {
                    guard scalars[index] != "=", scalars[index] != "\"" else { return nil }
                    value.unicodeScalars.append(scalars[index])
                    index += 1
                }
            }
            guard fields[key] == nil else { return nil }
            fields[key] = value
            if index < scalars.count {
                guard scalars[index] == " ", index + 1 < scalars.count else { return nil }
                index += 1
            }
        }
        return fields.isEmpty ? nil : fields
    }
}
