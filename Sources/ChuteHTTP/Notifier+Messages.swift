import ChuteCore
import ChuteRuntime
import Foundation
import SystemPackage

extension Notifier {
    /// A notification as it goes on the wire.
    struct Request: Sendable {
        var headers: [(String, String)]
        var body: Data
    }

    /// The request for a message: the JSON of ``API/Notification`` for a webhook, a line of text (several for the
    /// digest) with `Title`, `Priority` and `Tags` headers for an ntfy topic.
    static func request(for message: Message) -> Request {
        switch message.target.kind {
        case .webhook:
            let body = (try? API.encoder().encode(message.payload)) ?? Data()
            return Request(headers: [("Content-Type", "application/json")], body: body)
        case .ntfy:
            let text = Self.text(of: message.payload)
            return Request(
                headers: [
                    ("Content-Type", "text/plain; charset=utf-8"), ("Title", text.title), ("Priority", text.priority),
                    ("Tags", text.tags),
                ],
                body: Data(text.body.utf8)
            )
        }
    }

    /// An ntfy message: its title, body, priority (`high` for a failure) and tags (ntfy shows them as emoji).
    static func text(of payload: API.Notification) -> (title: String, body: String, priority: String, tags: String) {
        if let digest = payload.digest {
            let completed = digest.rules.reduce(0) { $0 + $1.completed }
            let failed = digest.rules.reduce(0) { $0 + $1.failed }
            var lines = digest.rules.map { "\(Self.safe($0.rule)): \($0.completed) completed, \($0.failed) failed" }
            if !digest.failures.isEmpty {
                lines.append("Failed:")
                for failure in digest.failures {
                    lines.append(
                        "- " + Self.failureLine(source: failure.source, code: failure.code, message: failure.message)
                    )
                }
            }
            return (
                "Chute digest: \(completed) completed, \(failed) failed", lines.joined(separator: "\n"),
                failed > 0 ? "high" : "default", failed > 0 ? "bar_chart,warning" : "bar_chart"
            )
        }
        guard let job = payload.job else { return ("Chute", "", "default", "") }
        let name = Self.name(job.source)
        let rule = " (rule \(Self.safe(job.rule ?? "?")))"
        switch job.state {
        case "failed":
            return (
                "Chute: \(name) failed",
                Self.failureLine(source: job.source, code: job.code, message: job.message) + rule,
                "high", "warning"
            )
        case "cancelled":
            return (
                "Chute: \(name) cancelled", "\(name) cancelled: \(Self.safe(job.message ?? ""))" + rule, "default",
                "no_entry"
            )
        default:
            var details: [String] = []
            let outputSize = payload.outputs?.compactMap(\.size).reduce(0, +)
            switch (payload.sourceSize, outputSize) {
            case (let input?, let output?):
                details.append("\(Self.size(input)) → \(Self.size(output))")
            case (nil, let output?):
                details.append(Self.size(output))
            default:
                break
            }
            if let duration = payload.duration {
                // To the hundredth of a second: `1.23s`, `40ms`.
                details.append("in " + ValueParsing.describe(.milliseconds(Int64((duration * 100).rounded()) * 10)))
            }
            let outputs = job.outputs.map(Self.name).joined(separator: ", ")
            let detail = details.isEmpty ? "" : ", " + details.joined(separator: ", ")
            return (
                "Chute: \(name) converted", "\(name) → \(outputs) (rule \(Self.safe(job.rule ?? "?"))\(detail))",
                "default", "white_check_mark"
            )
        }
    }

    /// `IMG_0042.heic failed: corruptInput: the message`.
    private static func failureLine(source: String, code: String?, message: String?) -> String {
        let reason = [code, message].compactMap { $0 }.map { Self.safe($0) }.joined(separator: ": ")
        return "\(Self.name(source)) failed" + (reason.isEmpty ? "" : ": " + reason)
    }

    /// A size as people read it: `81 KB`, `4.2 MB`.
    private static func size(_ bytes: Int64) -> String {
        ByteCountFormatter.string(fromByteCount: bytes, countStyle: .file)
    }

    /// A path's file name, escaped.
    private static func name(_ path: String) -> String {
        Self.safe(FilePath(path).lastComponent?.string ?? path)
    }

    /// Text from a file name or a library's message, with control characters escaped (a header value stays one
    /// line, a body line cannot forge another) and its length capped.
    private static func safe(_ text: String) -> String {
        LogText.escaped(text, limit: 300)
    }
}
