import Foundation

/// When a photo or clip was taken, as its metadata says: what a worker reports for the name template's `{taken}`.
///
/// EXIF gives a wall-clock time, with its offset from UTC only when the camera wrote `OffsetTimeOriginal`;
/// QuickTime's `creation_time` is in UTC. The supervisor turns it into an instant in its own time zone
/// (``instant(localZone:)``), since a worker's zone is not the daemon's business.
package struct CaptureTime: Sendable, Codable, Equatable {
    package var year: Int
    package var month: Int
    package var day: Int
    package var hour: Int
    package var minute: Int
    package var second: Int
    /// Seconds east of UTC, or `nil` when the metadata gave no zone: the wall clock is then taken as the daemon's
    /// local time, as the camera's clock usually is.
    package var utcOffset: Int?
    /// Where it was read, for the sidecar: `EXIF DateTimeOriginal`, `QuickTime creation_time`.
    package var origin: String

    /// Reads an EXIF date, `2024:05:01 14:30:00`, and its offset, `+02:00`; `nil` for a blank or impossible date
    /// (cameras without a clock write `0000:00:00 00:00:00`). An offset that cannot be read is left out.
    package init?(exif text: String, offset: String?, origin: String) {
        let fields = text.trimmingCharacters(in: .whitespaces.union(.controlCharacters))
            .split(whereSeparator: { $0 == ":" || $0 == " " })
        let values = fields.compactMap { Int($0) }
        guard fields.count == 6, values.count == 6 else { return nil }
        self.init(values, utcOffset: offset.flatMap(Self.offset(_:)), origin: origin)
    }

    /// Reads an ISO 8601 time in UTC as FFmpeg gives `creation_time`, `2024-05-01T12:30:00.000000Z`; `nil` for
    /// anything else, or the 1904 or 1970 epoch that a muxer writes for an unknown time.
    package init?(utc text: String, origin: String) {
        guard text.hasSuffix("Z"), text.count >= 20 else { return nil }
        let fields = text.dropLast().split(whereSeparator: { "-T:".contains($0) })
        let values = fields.compactMap { Int($0.prefix { $0 != "." }) }
        guard fields.count == 6, values.count == 6, values[0] > 1970 else { return nil }
        self.init(values, utcOffset: 0, origin: origin)
    }

    private init?(_ values: [Int], utcOffset: Int?, origin: String) {
        guard (1...9999).contains(values[0]), (1...12).contains(values[1]), (1...31).contains(values[2]),
            (0...23).contains(values[3]), (0...59).contains(values[4]), (0...60).contains(values[5])
        else { return nil }
        (self.year, self.month, self.day) = (values[0], values[1], values[2])
        (self.hour, self.minute, self.second) = (values[3], values[4], values[5])
        self.utcOffset = utcOffset
        self.origin = origin
    }

    /// `+02:00`, `-0530` or `Z` in seconds east of UTC.
    private static func offset(_ text: String) -> Int? {
        let text = text.trimmingCharacters(in: .whitespaces.union(.controlCharacters))
        if text == "Z" { return 0 }
        guard let sign = text.first, sign == "+" || sign == "-" else { return nil }
        let digits = text.dropFirst().filter { $0 != ":" }
        guard digits.count == 4, let hours = Int(digits.prefix(2)), let minutes = Int(digits.suffix(2)),
            hours <= 14, minutes < 60
        else { return nil }
        return (sign == "-" ? -1 : 1) * (hours * 3600 + minutes * 60)
    }

    /// The instant it names: at its offset from UTC, or without one at the same wall-clock time in `localZone`.
    package func instant(localZone: TimeZone = .current) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = self.utcOffset.flatMap { TimeZone(secondsFromGMT: $0) } ?? localZone
        return calendar.date(
            from: DateComponents(
                year: self.year,
                month: self.month,
                day: self.day,
                hour: self.hour,
                minute: self.minute,
                second: self.second
            )
        )
    }

    /// As the sidecar says it: `2024-05-01 14:30:00 +02:00 (EXIF DateTimeOriginal)`, the zone left out when the
    /// metadata gave none.
    package var description: String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        var text =
            "\(self.year)-\(two(self.month))-\(two(self.day)) \(two(self.hour)):\(two(self.minute)):"
            + two(self.second)
        if let offset = self.utcOffset {
            let minutes = abs(offset) / 60
            text += " \(offset < 0 ? "-" : "+")\(two(minutes / 60)):\(two(minutes % 60))"
        }
        return "\(text) (\(self.origin))"
    }
}
