import ArgumentParser
import ChuteCore
import ChuteHTTP
import Foundation
import SystemPackage

extension Chute {
    struct Submit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send files to the running daemon as jobs of a rule that takes uploads (upload: true); with "
                + "--wait, wait for each job and download its outputs.",
            discussion: "On the daemon's socket (--config or --socket), or on its TCP address with --url and "
                + "--token-file. On a terminal a progress bar shows the upload, then the conversion; otherwise one "
                + "line per step. Exits 0 when every job completed (or, without --wait, was taken), 1 when one was "
                + "refused or failed, 3 when no daemon answers."
        )

        @Argument(help: "The files to send.")
        var files: [String]

        @Option(help: "The rule that converts them; it must say upload: true.")
        var rule: String

        @Flag(help: "Wait for each job to end and download its outputs.")
        var wait = false

        @Option(help: ArgumentHelp("Where the outputs go (implies --wait; default: here).", valueName: "folder"))
        var output: String?

        @Flag(help: "Replace an output that already exists in the output folder.")
        var overwrite = false

        @Option(name: .shortAndLong, help: "The rules file the daemon runs with; its socket is found from it.")
        var config: String?

        @Option(help: ArgumentHelp("The daemon's API socket.", valueName: "path"))
        var socket: String?

        @Option(
            help: ArgumentHelp("The daemon's TCP address, http://HOST:PORT (settings.api.listen).", valueName: "url")
        )
        var url: String?

        @Option(help: ArgumentHelp("The file holding the bearer token, with --url.", valueName: "path"))
        var tokenFile: String?

        func validate() throws {
            guard !self.files.isEmpty else { throw ValidationError("give at least one file to send") }
            if self.url != nil, self.tokenFile == nil {
                throw ValidationError("--url needs --token-file: every TCP request carries the bearer token")
            }
            if self.url == nil, self.config == nil, self.socket == nil {
                throw ValidationError(
                    "say where the daemon is: --config FILE, --socket PATH, or --url with --token-file"
                )
            }
            if let url = self.url, Self.hostAndPort(url) == nil {
                throw ValidationError("--url must be http://HOST:PORT, not '\(url)'")
            }
        }

        /// `http://HOST:PORT` split, or `nil`.
        static func hostAndPort(_ url: String) -> (host: String, port: Int)? {
            guard url.hasPrefix("http://") else { return nil }
            let address =
                url.dropFirst("http://".count).split(separator: "/", maxSplits: 1).first.map(String.init) ?? ""
            return APISettings.hostAndPort(address)
        }

        func run() async throws {
            let client = try self.client()
            let folder = FilePath(self.output ?? ".")
            let waits = self.wait || self.output != nil
            var failed = false
            for file in self.files {
                do {
                    failed = try await !self.send(FilePath(file), with: client, waits: waits, into: folder) || failed
                } catch let error as APIClient.Unreachable {
                    FileHandle.standardError.write(Data("chute submit: \(error.description)\n".utf8))
                    throw ExitCode(3)
                } catch let error as ControlClient.Refusal {
                    Progress.clear()
                    FileHandle.standardError.write(Data("chute submit: \(file): \(error.message)\n".utf8))
                    failed = true
                } catch {
                    Progress.clear()
                    FileHandle.standardError.write(Data("chute submit: \(file): \(error)\n".utf8))
                    failed = true
                }
            }
            if failed { throw ExitCode(1) }
        }

        /// The client: on TCP with the token, else on the socket named or found from the rules file.
        private func client() throws -> ControlClient {
            if let url = self.url, let (host, port) = Self.hostAndPort(url), let tokenFile = self.tokenFile {
                let token = try String(contentsOfFile: tokenFile, encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                return ControlClient(endpoint: .tcp(host: host, port: port, token: token))
            }
            if let socket = self.socket { return ControlClient(socket: FilePath(socket)) }
            let config = try loadConfig(self.config ?? "")
            let folder = FilePath(self.config ?? "").removingLastComponent()
            let journal = (folder.isEmpty ? FilePath(".") : folder).appending(".chute/journal.sqlite")
            return ControlClient(socket: config.settings.api.socketPath(journal: journal))
        }

        /// The size of the file at `path`, or `nil` when there is none.
        private static func size(of path: FilePath) -> Int64? {
            var status = stat()
            guard stat(path.string, &status) == 0 else { return nil }
            return Int64(status.st_size)
        }

        /// Sends one file; with `waits`, waits for its job and downloads its outputs into `folder`.
        ///
        /// - Returns: whether it was taken (and, with `waits`, completed).
        private func send(
            _ file: FilePath,
            with client: ControlClient,
            waits: Bool,
            into folder: FilePath
        ) async throws
            -> Bool
        {
            let size = Self.size(of: file) ?? 0
            let label = file.lastComponent.map { FilePath(root: nil, [$0]).readableString } ?? file.string
            let upload = try await client.submit(file, rule: self.rule) { sent in
                Progress.show(label, "upload", fraction: size > 0 ? Double(sent) / Double(size) : 1)
            }
            Progress.clear()
            print("\(file.readableString): job \(upload.id), \(upload.size) bytes sent")
            guard waits else { return true }
            var lastLine = ""
            while true {
                let detail = try await client.detail(upload.id)
                switch detail.status {
                case "completed":
                    Progress.clear()
                    for (index, output) in detail.outputs.enumerated() {
                        let name = FilePath(output.path).lastComponent ?? "output"
                        let target = folder.appending(name)
                        if !self.overwrite, Self.size(of: target) != nil {
                            throw ControlClient.Refusal(
                                status: 409,
                                message: "\(target) already exists; give --overwrite to replace it"
                            )
                        }
                        try await client.download(upload.id, output: index, to: target)
                        let bytes = Self.size(of: target) ?? 0
                        print("\(file.readableString): completed → \(target.readableString) (\(bytes) bytes)")
                    }
                    return true
                case "failed", "cancelled":
                    Progress.clear()
                    let why = detail.message ?? detail.status
                    FileHandle.standardError.write(Data("chute submit: \(file): \(detail.status): \(why)\n".utf8))
                    return false
                default:
                    if Progress.onTerminal {
                        Progress.show(label, detail.status, fraction: Double(detail.progress) / 100)
                    } else {
                        let line = "\(file.readableString): \(detail.status) \(detail.progress)%"
                        if line != lastLine { print(line) }
                        lastLine = line
                    }
                    try await Task.sleep(for: .milliseconds(250))
                }
            }
        }
    }
}

/// The one-line progress bar of `chute submit` on a terminal, on standard error; nothing elsewhere.
private enum Progress {
    static let onTerminal = isatty(STDERR_FILENO) == 1

    static func show(_ label: String, _ step: String, fraction: Double) {
        guard Self.onTerminal else { return }
        let bar = ControlClient.bar(fraction)
        FileHandle.standardError.write(Data("\r\u{1B}[K\(label)  \(step) \(bar)".utf8))
    }

    static func clear() {
        guard Self.onTerminal else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
