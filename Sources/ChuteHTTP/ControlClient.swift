import ChuteCore
import ChuteRuntime
import Foundation
import NIOHTTP1
import SystemPackage

/// What the CLI's `status`, `jobs`, `show`, `retry`, `cancel`, `pause`, `resume` and `submit` do: requests to the
/// running daemon's status API, their answers as text for a person or as the API's JSON for a script.
package struct ControlClient: Sendable {
    /// The API refused the request; `message` is its reason.
    package struct Refusal: Error, CustomStringConvertible {
        package var status: Int
        package var message: String
        package var description: String { self.message }

        package init(status: Int, message: String) {
            self.status = status
            self.message = message
        }
    }

    private let client: APIClient

    package init(socket: FilePath) {
        self.client = APIClient(socket: socket)
    }

    package init(endpoint: APIClient.Endpoint) {
        self.client = APIClient(endpoint: endpoint)
    }

    /// Counts by state and the running jobs with progress bars.
    package func status(json: Bool) async throws -> String {
        let data = try await self.request(.GET, "/api/status")
        if json { return Self.text(data) }
        let status = try API.decoder().decode(API.Status.self, from: data)
        let order = ["waiting", "queued", "running", "postponed", "completed", "failed", "cancelled", "retried"]
        var lines = [
            "Intake " + (status.paused ? "paused (chute resume starts it again)" : "running"),
            order.map { "\($0) \(status.counts[$0] ?? 0)" }.joined(separator: ", "),
        ]
        lines.append(Self.describe(status.budget))
        if let agents = status.agents {
            lines.append("Agents (this one is \(status.agent ?? "?")):")
            for agent in agents {
                let beat = Int(max(0, Date().timeIntervalSince(agent.heartbeat)).rounded())
                lines.append(
                    "  \(agent.name) on \(agent.host) (pid \(agent.pid)): "
                        + (agent.alive ? "alive" : "silent") + ", last heartbeat \(beat) s ago; "
                        + "\(agent.cpu) cores, \(Self.bytes(agent.memory)); engines \(agent.engines.joined(separator: " ")); "
                        + "holding \(agent.holding), completed \(agent.completed)"
                )
            }
        }
        if !status.running.isEmpty { lines.append("Running:") }
        for job in status.running {
            lines.append("  \(Self.bar(job.progress)) \(job.id ?? "")  \(job.rule ?? "")  \(job.source)")
        }
        return lines.joined(separator: "\n")
    }

    /// `Budget: 1 of 2 cores, 244 MB of 1 GB; waiting for memory: JOB (needs 1.6 GB, 756 MB free)`.
    private static func describe(_ budget: BudgetStatus) -> String {
        var line =
            "Budget: \(budget.cpuInUse) of \(budget.cpu) cores, \(Self.bytes(budget.memoryInUse)) of "
            + Self.bytes(budget.memory)
        for wait in budget.waiting {
            let amount = { (value: Int64) in wait.resource == "cpu" ? "\(value) cores" : Self.bytes(value) }
            line +=
                "; waiting for \(wait.resource): \(wait.job) (needs \(amount(wait.needed)), \(amount(wait.free)) free)"
        }
        return line
    }

    /// A size in decimal units, as the rules write them: `851.1 MB`, `0 B`.
    private static func bytes(_ count: Int64) -> String {
        count == 0 ? "0 B" : ByteCountFormatter.string(fromByteCount: count, countStyle: .decimal)
    }

    /// The latest jobs, live first.
    package func jobs(state: String?, rule: String?, limit: Int, json: Bool) async throws -> String {
        var query: [String] = ["limit=\(limit)"]
        if let state { query.append("state=\(Self.escaped(state))") }
        if let rule { query.append("rule=\(Self.escaped(rule))") }
        let data = try await self.request(.GET, "/api/jobs?" + query.joined(separator: "&"))
        if json { return Self.text(data) }
        let list = try API.decoder().decode(API.JobList.self, from: data)
        guard !list.jobs.isEmpty else { return "No jobs." }
        return list.jobs.map { job in
            var line =
                "\(job.state.padding(toLength: 10, withPad: " ", startingAt: 0)) \(job.id ?? "-")  "
                + "\(job.rule ?? "-")  \(job.source)"
            if job.state == "running" { line += "  " + Self.bar(job.progress) }
            if let message = job.message, job.state == "failed" { line += "\n           \(message)" }
            if let message = job.message, job.state == "postponed" {
                let retry = job.retryAt.map { " (tried again at \($0.formatted(date: .omitted, time: .standard)))" }
                line += "\n           \(message)\(retry ?? "")"
            }
            if let quarantined = job.quarantined { line += "\n           moved to quarantine: \(quarantined)" }
            if job.state == "waiting", let message = job.message {
                line += "\n           \(message)" + (job.until.map { "; " + Self.takenAt($0) } ?? "")
            }
            return line
        }.joined(separator: "\n")
    }

    /// "taken at 17:08 unless it changes", in the local time zone (with the date when it is not today).
    package static func takenAt(_ date: Date) -> String {
        let style: Date.FormatStyle =
            Calendar.current.isDateInToday(date)
            ? .dateTime.hour().minute().second() : .dateTime.year().month().day().hour().minute().second()
        return "taken at \(date.formatted(style)) unless it changes"
    }

    /// One job, its outputs and its sidecar.
    package func show(_ id: String, json: Bool) async throws -> String {
        let data = try await self.request(.GET, "/api/jobs/\(Self.escaped(id))")
        if json { return Self.text(data) }
        let detail = try API.decoder().decode(API.JobDetail.self, from: data)
        let job = detail.job
        var lines = [
            "Job \(job.id ?? "-"): \(job.state)", "  rule:   \(job.rule ?? "-")", "  source: \(job.source)",
        ]
        if let progress = job.progress, job.state == "running" { lines.append("  progress: \(Self.bar(progress))") }
        if let message = job.message { lines.append("  message: \(message)") }
        if let quarantined = job.quarantined { lines.append("  quarantine: \(quarantined)") }
        if let until = job.until { lines.append("  waits: \(Self.takenAt(until))") }
        for output in detail.outputs {
            lines.append("  output: \(output.path) (\(output.size.map { "\($0) bytes" } ?? "gone"))")
        }
        if let sidecar = detail.sidecar {
            let encoder = API.encoder()
            encoder.outputFormatting.insert(.prettyPrinted)
            lines.append("  sidecar:")
            lines.append(Self.text(try encoder.encode(sidecar)))
        }
        return lines.joined(separator: "\n")
    }

    /// Queues a failed job again.
    package func retry(_ id: String) async throws -> String {
        _ = try await self.request(.POST, "/api/jobs/\(Self.escaped(id))/retry")
        return "Job \(id) queued again."
    }

    /// Queues every failed job again, of `rule` if given.
    package func retryFailed(rule: String?, json: Bool) async throws -> String {
        let data = try await self.request(.POST, "/api/retry" + (rule.map { "?rule=\(Self.escaped($0))" } ?? ""))
        if json { return Self.text(data) }
        let report = try API.decoder().decode(API.RetryReport.self, from: data)
        var lines = ["\(report.retried.count) failed job(s) queued again."]
        for (id, reason) in report.skipped.sorted(by: { $0.key < $1.key }) {
            lines.append("  not \(id): \(reason)")
        }
        return lines.joined(separator: "\n")
    }

    /// Cancels a queued or running job.
    package func cancel(_ id: String) async throws -> String {
        let data = try await self.request(.POST, "/api/jobs/\(Self.escaped(id))/cancel")
        let answer = try API.decoder().decode(API.Acknowledgement.self, from: data)
        return answer.state == "cancelled" ? "Job \(id) cancelled." : "Job \(id): \(answer.state)."
    }

    /// Pauses or resumes intake.
    package func setPaused(_ paused: Bool) async throws -> String {
        _ = try await self.request(.POST, paused ? "/api/pause" : "/api/resume")
        return paused ? "Intake paused: new files wait until chute resume." : "Intake resumed."
    }

    private func request(_ method: HTTPMethod, _ path: String) async throws -> Data {
        try Self.accepted(try await self.client.send(method, path))
    }

    // MARK: - chute submit

    /// Uploads a file as a job of `rule` (`PUT /api/jobs?rule=R&name=FILE`).
    ///
    /// - Parameter sent: called with the bytes sent so far.
    /// - Returns: the job the upload became.
    /// - Throws: ``Refusal`` with the daemon's reason (403, 413, 415, 429 …).
    package func submit(
        _ file: FilePath,
        rule: String,
        sent: @escaping @Sendable (Int64) -> Void
    ) async throws -> API.Upload {
        let name = file.lastComponent.map { FilePath(root: nil, [$0]).readableString } ?? "upload"
        let path = "/api/jobs?rule=\(Self.escaped(rule))&name=\(Self.escaped(name))"
        let reply = try await self.client.upload(file, to: path, sent: sent)
        return try API.decoder().decode(API.Upload.self, from: try Self.accepted(reply))
    }

    /// A job's status, in the shape `GET /api/jobs/ID` answers.
    package func detail(_ id: String) async throws -> API.JobDetail {
        try API.decoder().decode(
            API.JobDetail.self,
            from: try await self.request(.GET, "/api/jobs/\(Self.escaped(id))")
        )
    }

    /// Downloads output `index` of a completed job into `file`.
    package func download(_ id: String, output index: Int, to file: FilePath) async throws {
        let reply = try await self.client.download("/api/jobs/\(Self.escaped(id))/outputs/\(index)", to: file)
        _ = try Self.accepted(reply)
    }

    /// The body of a 2xx reply.
    ///
    /// - Throws: ``Refusal`` with the API's reason for any other.
    private static func accepted(_ reply: APIClient.Reply) throws -> Data {
        guard (200..<300).contains(reply.status) else {
            let problem = try? API.decoder().decode(API.Problem.self, from: reply.body)
            throw Refusal(status: reply.status, message: problem?.error ?? "the daemon answered \(reply.status)")
        }
        return reply.body
    }

    /// A 20-cell progress bar with the percentage.
    package static func bar(_ progress: Double?) -> String {
        guard let progress else { return "[" + String(repeating: " ", count: 20) + "]   ?%" }
        let fraction = min(1, max(0, progress))
        let filled = Int((fraction * 20).rounded(.down))
        let percent = String(Int((fraction * 100).rounded(.down)))
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: 20 - filled) + "] "
            + String(repeating: " ", count: 3 - percent.count) + percent + "%"
    }

    private static func escaped(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(["&", "=", "+", "/", "?"]))
            ?? text
    }

    private static func text(_ data: Data) -> String {
        String(decoding: data, as: UTF8.self).trimmingCharacters(in: .newlines)
    }
}
