import Foundation

/// Where notifications go and which events they are for: one item of a `notify:` list, at the top level of the
/// rules file or in a rule.
///
/// The daemon sends them (workers have no network): a webhook gets a JSON POST of the job, an ntfy topic a plain-text
/// POST with `Title`, `Priority` and `Tags` headers. A rule's `notify:` list replaces the top-level one for that
/// rule's jobs (`notify: []` silences a rule).
package struct NotifyTarget: Sendable, Hashable {
    /// How the notification is written.
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        /// `url`: a JSON POST of the job (or the digest).
        case webhook = "url"
        /// `ntfy`: an ntfy-style topic, a POST of a line of text.
        case ntfy
    }

    /// `url` or `ntfy`.
    package var kind: Kind
    /// The `http://` or `https://` URL, as written.
    package var url: String
    /// `on` (`failed`, `completed`, `cancelled` and/or `digest`; default `failed`): the events sent.
    package var events: Set<NotifyEvent>

    package init(kind: Kind, url: String, events: Set<NotifyEvent> = [.failed]) {
        self.kind = kind
        self.url = url
        self.events = events
    }

    /// The URL without its credentials, query and fragment, for the log and `chute check`: a token in the query or
    /// a password must not end up in a log file.
    package var redactedURL: String {
        Self.redacted(self.url)
    }

    /// `text` without credentials, query and fragment (the text unchanged when it is not a URL).
    package static func redacted(_ text: String) -> String {
        guard var components = URLComponents(string: text) else { return text }
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return components.string ?? text
    }

    /// Why `text` is not a URL notifications can be sent to, or `nil` when it is one: `http` or `https`, with a
    /// host.
    package static func problem(with text: String) -> String? {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            return "expected an http:// or https:// URL"
        }
        guard scheme == "http" || scheme == "https" else {
            return "expected an http:// or https:// URL, found a '\(scheme)' URL"
        }
        guard let host = components.host, !host.isEmpty else { return "the URL has no host" }
        return nil
    }
}

extension NotifyTarget: CustomStringConvertible {
    /// `url http://nas.local/hook on failed, completed`, without credentials or query: the service group logs its
    /// services, configuration included, at debug level.
    package var description: String {
        let events = NotifyEvent.allCases.filter { self.events.contains($0) }.map(\.rawValue)
        return "\(self.kind.rawValue) \(self.redactedURL) on \(events.joined(separator: ", "))"
    }
}

/// What a notification is sent for.
package enum NotifyEvent: String, Sendable, Hashable, CaseIterable {
    /// A job failed (it will not be tried again by itself).
    case failed
    /// A job's outputs are in place.
    case completed
    /// A job was cancelled on request.
    case cancelled
    /// Once a day (or every `digestEvery`): completed and failed jobs per rule, and the failures.
    case digest
}

/// When the digest is sent (`settings.digestAt`, `settings.digestEvery`).
package struct DigestSchedule: Sendable, Equatable {
    /// `digestAt` (`HH:MM`, default `08:00`): the local time of day of the daily digest.
    package var hour = 8
    package var minute = 0
    /// `digestEvery` (duration, default none): send the digest at this interval, counted from `digestAt` each day,
    /// instead of once a day (`6h` with `08:00`: at 08:00, 14:00, 20:00 and 02:00); each digest covers the time since
    /// the one before.
    package var every: Duration?

    package init(hour: Int = 8, minute: Int = 0, every: Duration? = nil) {
        self.hour = hour
        self.minute = minute
        self.every = every
    }

    /// The span a digest covers: `every`, or a day.
    package var period: Duration { self.every ?? .seconds(24 * 60 * 60) }

    /// `digestAt` as written: `08:00`.
    package var timeOfDay: String {
        (self.hour < 10 ? "0" : "") + "\(self.hour):" + (self.minute < 10 ? "0" : "") + "\(self.minute)"
    }

    /// Reads `HH:MM` (24-hour clock), or `nil`.
    package static func timeOfDay(_ text: String) -> (hour: Int, minute: Int)? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
            parts.allSatisfy({ $0.allSatisfy(\.isASCII) }),
            let hour = Int(parts[0]), let minute = Int(parts[1]), (0...23).contains(hour), (0...59).contains(minute)
        else { return nil }
        return (hour, minute)
    }

    /// When the next digest is due after `now`: the next `digestAt` in `calendar`'s time zone (a day whose
    /// `digestAt` does not exist, at a daylight-saving change, takes the next time that does), or with `every`, the
    /// next multiple of it after the latest `digestAt`, if that comes before the next `digestAt`.
    package func next(after now: Date, calendar: Calendar = .current) -> Date {
        let day: TimeInterval = 24 * 60 * 60
        let wanted = DateComponents(hour: self.hour, minute: self.minute, second: 0)
        let nextAnchor =
            calendar.nextDate(after: now, matching: wanted, matchingPolicy: .nextTime) ?? now.addingTimeInterval(day)
        guard let every = self.every else { return nextAnchor }
        let anchor =
            calendar.nextDate(after: now, matching: wanted, matchingPolicy: .nextTime, direction: .backward)
            ?? nextAnchor.addingTimeInterval(-day)
        let step = Double(every.components.seconds) + Double(every.components.attoseconds) / 1e18
        let steps = (now.timeIntervalSince(anchor) / step).rounded(.down) + 1
        return min(anchor.addingTimeInterval(steps * step), nextAnchor)
    }
}
