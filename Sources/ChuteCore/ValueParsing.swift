/// Reads and writes the human-friendly values of configuration files: durations (`500ms`, `2s`, `1.5m`) and byte
/// sizes (`10KB`, `2.5MB`, `1GiB`).
///
/// Numbers are plain decimals (`2`, `1.5`, `.5`): no sign, exponent or digit separators. Arithmetic is exact
/// (decimal digits, not floating point), so `100ms` is exactly 100 milliseconds.
package enum ValueParsing {
    /// The duration units, with their length in nanoseconds, largest first.
    private static let durationUnits: [(suffix: String, nanoseconds: Int64)] = [
        ("d", 86_400_000_000_000), ("h", 3_600_000_000_000), ("m", 60_000_000_000), ("s", 1_000_000_000),
        ("ms", 1_000_000),
    ]

    /// The byte-size units: decimal (`KB` = 1000) and binary (`KiB` = 1024), largest first in each family.
    private static let byteUnits: [(suffix: String, bytes: Int64)] = [
        ("TiB", 1 << 40), ("TB", 1_000_000_000_000), ("GiB", 1 << 30), ("GB", 1_000_000_000), ("MiB", 1 << 20),
        ("MB", 1_000_000), ("KiB", 1 << 10), ("KB", 1000),
    ]

    /// Parses a duration: a number followed by `ms`, `s`, `m`, `h` or `d`; a bare number is seconds; `M:SS` or
    /// `H:MM:SS` (``clockSeconds(_:)``) as the media keys' times.
    ///
    /// The unit is case-insensitive and may follow a space (`2 s`). Parts of a nanosecond are dropped.
    ///
    /// - Parameter text: the value as written, such as `500ms`, `2s`, `1.5m`, `1h`, `30d`, `10` or `1:30`.
    /// - Returns: the duration (never negative), or `nil` when `text` is not a duration or is too long to represent.
    package static func duration(_ text: String) -> Duration? {
        if text.contains(":") {
            // `1:30`, `00:01:30.5`: as the media keys `start`, `end` and `duration` take a time.
            return Self.clockSeconds(text).map { .nanoseconds(Int64(($0 * 1e9).rounded())) }
        }
        guard let (number, unit) = Self.splitUnit(text) else { return nil }
        let nanoseconds: Int64
        if unit.isEmpty {
            nanoseconds = 1_000_000_000
        } else if let match = Self.durationUnits.first(where: { $0.suffix == unit.lowercased() }) {
            nanoseconds = match.nanoseconds
        } else {
            return nil
        }
        return Self.scale(number, by: nanoseconds).map { Duration.nanoseconds($0) }
    }

    /// Parses a time written as a clock does, `M:SS` or `H:MM:SS` with optional decimals (`1:30`, `00:01:30.5`), or
    /// bare seconds (`90`, `2.5`).
    ///
    /// - Returns: the seconds, or `nil` when `text` is not well formed (minutes and seconds after a colon must be
    ///   below 60), or too large.
    package static func clockSeconds(_ text: String) -> Double? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count) else { return nil }
        var total = 0.0
        for (index, part) in parts.enumerated() {
            let isLast = index == parts.count - 1
            guard !part.isEmpty, part.allSatisfy({ $0.isASCII && ($0.isNumber || (isLast && $0 == ".")) }),
                !part.hasPrefix("."), !part.hasSuffix("."), let value = Double(part), value.isFinite
            else { return nil }
            if index > 0 && value >= 60 { return nil }
            total = total * 60 + value
        }
        // Within what a Duration of nanoseconds holds (about 292 years).
        return total < 9e9 ? total : nil
    }

    /// Parses a byte size: a number followed by `B`, `KB`, `MB`, `GB`, `TB` (powers of 1000) or `KiB`, `MiB`, `GiB`,
    /// `TiB` (powers of 1024); a bare number is bytes.
    ///
    /// The unit is case-insensitive and may follow a space (`10 KB`). A fraction of a byte is dropped (`1.1KiB` is
    /// 1126 bytes).
    ///
    /// - Parameter text: the value as written, such as `10KB`, `2.5MB`, `1GiB` or `123`.
    /// - Returns: the number of bytes, or `nil` when `text` is not a byte size or does not fit in 63 bits.
    package static func byteSize(_ text: String) -> Int64? {
        guard let (number, unit) = Self.splitUnit(text) else { return nil }
        let bytes: Int64
        if unit.isEmpty || unit.lowercased() == "b" {
            bytes = 1
        } else if let match = Self.byteUnits.first(where: { $0.suffix.lowercased() == unit.lowercased() }) {
            bytes = match.bytes
        } else {
            return nil
        }
        return Self.scale(number, by: bytes)
    }

    /// Writes a duration the way a configuration file would: the largest unit that shows it with at most two
    /// decimals (`90s` is `1.5m`; also `500ms`, `30d`), else seconds with as many decimals as needed (`0.0015s`).
    ///
    /// Whatever ``duration(_:)`` returns reads back unchanged from this text.
    package static func describe(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 else { return duration.description }
        let attosecondsPerMillisecond: Int64 = 1_000_000_000_000_000
        if attoseconds % attosecondsPerMillisecond == 0,
            case (let whole, false) = seconds.multipliedReportingOverflow(by: 1000),
            case (let milliseconds, false) = whole.addingReportingOverflow(attoseconds / attosecondsPerMillisecond)
        {
            if milliseconds == 0 { return "0s" }
            let units = Self.durationUnits.dropLast().map { (suffix: $0.suffix, size: $0.nanoseconds / 1_000_000) }
            return Self.describe(milliseconds, units: units) ?? "\(milliseconds)ms"
        }
        // Finer than a millisecond: seconds with up to nine decimals (the parser keeps nanoseconds).
        let nanoseconds = String(attoseconds / 1_000_000_000)
        var fraction = String(repeating: "0", count: 9 - nanoseconds.count) + nanoseconds
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return fraction.isEmpty ? "\(seconds)s" : "\(seconds).\(fraction)s"
    }

    /// A bitrate the way rules write it: `128k`, `2.5M`, `800500`.
    package static func describe(bitrate: Int) -> String {
        if bitrate >= 1_000_000, bitrate % 100_000 == 0 { return "\(OptionValue.number(Double(bitrate) / 1e6))M" }
        if bitrate % 1000 == 0 { return "\(bitrate / 1000)k" }
        return "\(bitrate)"
    }

    /// Writes a byte size the way a configuration file would: the largest unit, decimal or binary, that shows it
    /// with at most two decimals (`10KB`, `2.5MB`, `1GiB`, `123B`).
    package static func describe(bytes: Int64) -> String {
        Self.describe(bytes, units: Self.byteUnits.map { (suffix: $0.suffix, size: $0.bytes) }) ?? "\(bytes)B"
    }

    /// Renders `value` in the first of `units` (largest first) that is no larger than it and shows it exactly with
    /// at most two decimals.
    private static func describe(_ value: Int64, units: [(suffix: String, size: Int64)]) -> String? {
        guard value > 0 else { return nil }
        for unit in units where value >= unit.size {
            // Units are at most 2^40 or 86,400,000 ms, so `remainder * 100` cannot overflow.
            let remainder = value % unit.size * 100
            guard remainder % unit.size == 0 else { continue }
            let hundredths = remainder / unit.size
            var number = String(value / unit.size)
            if hundredths != 0 {
                let digits = hundredths < 10 ? "0\(hundredths)" : "\(hundredths)"
                number += "." + (digits.hasSuffix("0") ? String(digits.dropLast()) : digits)
            }
            return number + unit.suffix
        }
        return nil
    }

    /// A plain decimal: its digits as an integer and how many of them follow the point.
    private struct Decimal {
        var digits: Int64
        var fractionDigits: Int
    }

    /// Splits `2.5 MB` into the number `2.5` and the unit `MB` (empty when absent).
    private static func splitUnit(_ text: String) -> (Decimal, Substring)? {
        var value = Substring(text)
        while value.first == " " { value.removeFirst() }
        while value.last == " " { value.removeLast() }
        let numberEnd = value.firstIndex { !($0.isASCII && ($0.isNumber || $0 == ".")) } ?? value.endIndex
        let unit = value[numberEnd...].drop { $0 == " " }
        guard unit.allSatisfy({ $0.isASCII && $0.isLetter }), let number = Self.decimal(value[..<numberEnd]) else {
            return nil
        }
        return (number, unit)
    }

    /// Parses `12`, `1.5`, `.5` or `3.` exactly; `nil` for anything else, for more than 18 decimals, or for digits
    /// that do not fit in 63 bits.
    private static func decimal(_ text: Substring) -> Decimal? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let allDigits = parts.joined()
        let fractionDigits = parts.count == 2 ? parts[1].count : 0
        guard !allDigits.isEmpty, fractionDigits <= 18, allDigits.allSatisfy({ $0.isASCII && $0.isWholeNumber }),
            let digits = Int64(allDigits)
        else {
            return nil
        }
        return Decimal(digits: digits, fractionDigits: fractionDigits)
    }

    /// `number × unit`, rounded down to a whole number; `nil` on overflow.
    private static func scale(_ number: Decimal, by unit: Int64) -> Int64? {
        var divisor: Int64 = 1
        for _ in 0..<number.fractionDigits { divisor *= 10 }
        // Split the unit so that `digits × unit` cannot overflow when the result itself fits.
        let (product, overflow) = number.digits.multipliedReportingOverflow(by: unit)
        if !overflow { return product / divisor }
        let wholeUnits = number.digits / divisor
        let fractionDigits = number.digits % divisor
        guard case (let whole, false) = wholeUnits.multipliedReportingOverflow(by: unit),
            case (let fraction, false) = fractionDigits.multipliedReportingOverflow(by: unit),
            case (let sum, false) = whole.addingReportingOverflow(fraction / divisor)
        else {
            return nil
        }
        return sum
    }
}
