import Foundation
import Synchronization
import SystemPackage

/// A PostgreSQL server of a test's own, from Debian's packages: `initdb` in a temporary folder, a free port on
/// 127.0.0.1, password authentication (scram-sha-256) for the user `chute`, and a database `chute`. Run as root, it
/// runs as `nobody`, since PostgreSQL refuses to run as root. ``stop()`` stops it and removes its folder.
///
/// The server is this process's child, not `pg_ctl`'s: Foundation's `Process` learns that a child ended when a socket
/// the child inherited closes, and a server that `pg_ctl start` leaves behind keeps that socket open for good.
package final class PostgresServer: Sendable {
    package let port: Int
    package let folder: FilePath
    package let user = "chute"
    package let database = "chute"
    package let password: String
    /// A file holding the password, for `settings.storePasswordFile`.
    package let passwordFile: FilePath
    /// The addresses it listens on beside 127.0.0.1.
    package let extraListenAddresses: [String]
    private let binaries: FilePath
    private let server = Mutex<Process?>(nil)

    /// The folder of the newest PostgreSQL's programs (`/usr/lib/postgresql/N/bin`), or `nil` when none is installed.
    package static var binaries: FilePath? {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init)
        return versions.sorted().reversed().map { FilePath("\(root)/\($0)/bin") }.first {
            access($0.appending("initdb").string, X_OK) == 0
        }
    }

    /// Creates the cluster and starts the server.
    ///
    /// - Parameter extraListenAddresses: addresses to listen on beside 127.0.0.1 (a veth's, for an agent in a network
    ///   namespace), which clients from 10.77.0.0/16 may log in through.
    /// - Throws: when no PostgreSQL is installed, or a step fails (with what it printed).
    package init(extraListenAddresses: [String] = []) throws {
        guard let binaries = Self.binaries else {
            throw CommandLineTool.Failure(
                command: ["initdb"],
                result: .init(status: 127, standardOutput: "", standardError: "no /usr/lib/postgresql/N/bin/initdb")
            )
        }
        let folder = try TemporaryDirectory(prefix: "postgres").path
        let password = UUID().uuidString
        let passwordFile = folder.appending("password")
        try Data((password + "\n").utf8).write(to: URL(fileURLWithPath: passwordFile.string))
        if getuid() == 0 {
            // nobody must reach and own the cluster's folder.
            for path in [folder, passwordFile] {
                guard chown(path.string, 65534, 65534) == 0 else { throw Errno(rawValue: errno) }
            }
        }
        self.binaries = binaries
        self.folder = folder
        self.password = password
        self.passwordFile = passwordFile
        self.extraListenAddresses = extraListenAddresses
        self.port = try LoopbackListener.freePort()
        try self.command(
            "initdb",
            "--pgdata",
            self.data.string,
            "--username",
            self.user,
            "--pwfile",
            passwordFile.string,
            "--auth",
            "scram-sha-256",
            "--encoding",
            "UTF8",
            "--locale",
            "C",
            "--no-sync"
        )
        if !extraListenAddresses.isEmpty {
            let hba = FileHandle(forWritingAtPath: self.data.appending("pg_hba.conf").string)
            hba?.seekToEndOfFile()
            hba?.write(Data("host all all 10.77.0.0/16 scram-sha-256\n".utf8))
            try hba?.close()
        }
        try self.start()
        try CommandLineTool.run([
            "PGPASSWORD=\(password)", binaries.appending("createdb").string, "--host", "127.0.0.1", "--port",
            "\(self.port)", "--username", self.user, self.database,
        ])
    }

    /// The address for `settings.store` (without the password, which comes from ``passwordFile``).
    package var address: String { self.address(host: "127.0.0.1") }

    /// The address for `settings.store` through `host`, one of ``extraListenAddresses``.
    package func address(host: String) -> String {
        "postgres://\(self.user)@\(host):\(self.port)/\(self.database)?sslmode=disable"
    }

    private var data: FilePath { self.folder.appending("data") }

    /// Starts the server and waits until it takes connections.
    package func start() throws {
        if !FileManager.default.fileExists(atPath: self.logFile.string) {
            _ = FileManager.default.createFile(atPath: self.logFile.string, contents: nil)
        }
        guard let log = FileHandle(forWritingAtPath: self.logFile.string) else { throw Errno(rawValue: errno) }
        log.seekToEndOfFile()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            Self.asNobody + [
                self.binaries.appending("postgres").string, "-D", self.data.string, "-p", "\(self.port)", "-c",
                "listen_addresses=\((["127.0.0.1"] + self.extraListenAddresses).joined(separator: ","))", "-k",
                self.folder.string,
            ]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        try process.run()
        self.server.withLock { $0 = process }
        let deadline = Date() + 30
        while try CommandLineTool.run(
            [self.binaries.appending("pg_isready").string, "--host", "127.0.0.1", "--port", "\(self.port)"],
            check: false
        ).status != 0 {
            guard process.isRunning, Date() < deadline else {
                throw CommandLineTool.Failure(
                    command: process.arguments ?? [],
                    result: .init(status: 1, standardOutput: "", standardError: (try? self.serverLog()) ?? "")
                )
            }
            usleep(50_000)
        }
    }

    /// Restarts the server as `pg_ctl restart -m fast` does: SIGINT (a fast shutdown: every connection is closed and
    /// the transactions in flight are rolled back), then a new server on the same folder and port.
    package func restart() throws {
        self.shutDown()
        try self.start()
    }

    /// Stops the server (fast: connections are closed) and removes its folder.
    package func stop() {
        self.shutDown()
        try? FileManager.default.removeItem(atPath: self.folder.string)
    }

    /// What the server logged.
    package func serverLog() throws -> String {
        try String(contentsOfFile: self.logFile.string, encoding: .utf8)
    }

    private var logFile: FilePath { self.folder.appending("server.log") }

    private func shutDown() {
        guard let process = self.server.withLock({ $0.take() }) else { return }
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
    }

    /// Runs `sql` with `psql` and returns what it printed: unaligned, tuples only.
    @discardableResult
    package func psql(_ sql: String) throws -> String {
        try CommandLineTool.run([
            "PGPASSWORD=\(self.password)", self.binaries.appending("psql").string, "--host", "127.0.0.1", "--port",
            "\(self.port)", "--username", self.user, "--dbname", self.database, "--no-psqlrc", "--tuples-only",
            "--no-align", "--set", "ON_ERROR_STOP=1", "--command", sql,
        ]).standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `setpriv` to `nobody` when this is root.
    private static var asNobody: [String] {
        getuid() == 0 ? ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] : []
    }

    /// Runs one of PostgreSQL's programs, as `nobody` when this is root.
    @discardableResult
    private func command(_ name: String, _ arguments: String...) throws -> CommandLineTool.Result {
        try CommandLineTool.run(Self.asNobody + [self.binaries.appending(name).string] + arguments)
    }
}
