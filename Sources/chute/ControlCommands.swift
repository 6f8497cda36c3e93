import ArgumentParser
import ChuteCore
import ChuteHTTP
import Foundation
import SystemPackage

/// How the commands that talk to a running daemon find its status API.
struct DaemonOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: "The rules file the daemon runs with; its socket is found from it.")
    var config: String

    @Option(
        help: ArgumentHelp(
            "The daemon's API socket, when it is not the config's (settings.api.socket, else .chute/api.sock beside "
                + "the rules file's journal).",
            valueName: "path"
        )
    )
    var socket: String?

    /// The socket: `--socket`, else the config's `settings.api.socket`, else `.chute/api.sock` beside the rules file.
    func client() throws -> ControlClient {
        if let socket = self.socket { return ControlClient(socket: FilePath(socket)) }
        let config = try loadConfig(self.config)
        let folder = FilePath(self.config).removingLastComponent()
        let journal = (folder.isEmpty ? FilePath(".") : folder).appending(".chute/journal.sqlite")
        return ControlClient(socket: config.settings.api.socketPath(journal: journal))
    }

    /// Runs one request; prints its text, or its refusal, or that no daemon answers (exit 3).
    func perform(_ command: String, _ body: (ControlClient) async throws -> String) async throws {
        let client = try self.client()
        do {
            print(try await body(client))
        } catch let error as APIClient.Unreachable {
            FileHandle.standardError.write(Data("chute \(command): \(error.description)\n".utf8))
            throw ExitCode(3)
        } catch let error as ControlClient.Refusal {
            FileHandle.standardError.write(Data("chute \(command): \(error.message)\n".utf8))
            throw ExitCode(1)
        }
    }
}

extension Chute {
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show what the running daemon is doing: jobs by state, and the running ones with progress.",
            discussion: "Exits 3 when no daemon answers."
        )

        @OptionGroup var daemon: DaemonOptions

        @Flag(help: "Print the API's JSON, for scripts.")
        var json = false

        func run() async throws {
            try await self.daemon.perform("status") { try await $0.status(json: self.json) }
        }
    }

    struct Jobs: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the daemon's jobs: waiting, queued and running ones first, then the latest finished.",
            discussion: "Exits 3 when no daemon answers."
        )

        @OptionGroup var daemon: DaemonOptions

        @Flag(help: "Only failed jobs.")
        var failed = false

        @Option(
            help:
                "Only jobs in this state (waiting, queued, running, postponed, completed, failed, cancelled, retried)."
        )
        var state: String?

        @Option(help: "Only jobs of this rule.")
        var rule: String?

        @Option(help: "At most this many jobs.")
        var limit = 50

        @Flag(help: "Print the API's JSON, for scripts.")
        var json = false

        func validate() throws {
            if self.failed, self.state != nil { throw ValidationError("--failed and --state cannot be used together") }
        }

        func run() async throws {
            let state = self.failed ? "failed" : self.state
            try await self.daemon.perform("jobs") {
                try await $0.jobs(state: state, rule: self.rule, limit: self.limit, json: self.json)
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show one job: its state, outputs and sidecar.",
            discussion: "Exits 1 for an unknown job, 3 when no daemon answers."
        )

        @OptionGroup var daemon: DaemonOptions

        @Argument(help: "The job's id (chute jobs lists them).")
        var job: String

        @Flag(help: "Print the API's JSON, for scripts.")
        var json = false

        func run() async throws {
            try await self.daemon.perform("show") { try await $0.show(self.job, json: self.json) }
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Queue a failed or cancelled job again, or every failed job (of a rule).",
            discussion: "A job whose source was quarantined (move it back instead) or deleted cannot be retried. "
                + "Exits 3 when no daemon answers."
        )

        @OptionGroup var daemon: DaemonOptions

        @Argument(help: "The failed or cancelled job's id.")
        var job: String?

        @Flag(help: "Every failed job.")
        var allFailed = false

        @Option(help: "With --all-failed: only this rule's failed jobs.")
        var rule: String?

        @Flag(help: "Print the API's JSON, for scripts.")
        var json = false

        func validate() throws {
            guard (self.job == nil) != !self.allFailed else { throw ValidationError("give a JOB or --all-failed") }
            if self.rule != nil, !self.allFailed { throw ValidationError("--rule goes with --all-failed") }
        }

        func run() async throws {
            try await self.daemon.perform("retry") { client in
                if let job = self.job { return try await client.retry(job) }
                return try await client.retryFailed(rule: self.rule, json: self.json)
            }
        }
    }

    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Cancel a queued or running job: its worker is killed, nothing is written, its sidecar says "
                + "cancelled.",
            discussion: "The same version of the file is not taken again. Exits 3 when no daemon answers."
        )

        @OptionGroup var daemon: DaemonOptions

        @Argument(help: "The job's id.")
        var job: String

        func run() async throws {
            try await self.daemon.perform("cancel") { try await $0.cancel(self.job) }
        }
    }

    struct Pause: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Pause intake: new files wait, queued and running jobs go on.",
            discussion: "Exits 3 when no daemon answers."
        )

        @OptionGroup var daemon: DaemonOptions

        func run() async throws {
            try await self.daemon.perform("pause") { try await $0.setPaused(true) }
        }
    }

    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Resume intake: files that waited while it was paused are queued.",
            discussion: "Exits 3 when no daemon answers."
        )

        @OptionGroup var daemon: DaemonOptions

        func run() async throws {
            try await self.daemon.perform("resume") { try await $0.setPaused(false) }
        }
    }
}
