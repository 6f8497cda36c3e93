import ChuteCore
import ChuteTestSupport
import Foundation
import Glibc
import SystemPackage
import Testing

/// A real SMB client writing through a real Samba server that exports the watched folder: each file yields exactly
/// one job once the client has finished writing it, never a job on a part of it. smbd runs as root on 127.0.0.1,
/// which CI does; `scripts/install-deps.sh` installs `samba` and `smbclient`.
@Suite(
    .serialized,
    .timeLimit(.minutes(3)),
    .enabled(if: geteuid() == 0, "running smbd with a share of the watched folder needs root")
)
struct SambaEndToEndTests {
    @Test func smbclientPutOfALargeFileIsTakenOnceWhole() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        let samba = try await SambaServer.start(sharing: harness.inbox, in: harness.directory.makeDirectory("samba"))
        defer { samba.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let staging = try harness.directory.makeDirectory("staging")
        let local = staging.appending("photo.png")
        // A noisy 2400x1600 PNG is about 16 MB: some 1,000 SMB writes of at most 16 KiB each.
        try await onOwnThread { try Fixtures.makeImage(at: local, width: 2400, height: 1600) }
        let data = try Data(contentsOf: URL(fileURLWithPath: local.string))
        let hash = try Self.sha256(of: local)

        try await onOwnThread { try samba.put(local, as: "photo.png") }

        let sidecars = try await harness.waitForSidecars(1)
        #expect(Array(sidecars.keys) == ["photo.jpg.chute.json"])
        let sidecar = try #require(sidecars["photo.jpg.chute.json"])
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        #expect(sidecar.source.size == Int64(data.count))
        #expect(sidecar.source.sha256 == hash)
        #expect(daemon.logLines(containing: "Job queued", "photo.png").count == 1)
        #expect(Self.outputs(of: harness) == ["photo.jpg"])
        let output = try Fixtures.identify(harness.outbox.appending("photo.jpg"))
        #expect(output.format == "JPEG" && output.width == 2400 && output.height == 1600)
        #expect(try Data(contentsOf: URL(fileURLWithPath: harness.inbox.appending("photo.png").string)) == data)
        #expect(harness.temporaryFiles().isEmpty)
    }

    @Test func aStalledSMBUploadIsNotTakenBeforeTheClientClosesTheFile() async throws {
        // TIFF has no cheap structural end, so nothing in the file itself can hold a part of it back.
        let harness = try DaemonHarness(
            rules: """
                  - name: scans
                    match: "*.tif"
                    to: jpg
                    output: ./outbox
                  - name: sentinels
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        let samba = try await SambaServer.start(sharing: harness.inbox, in: harness.directory.makeDirectory("samba"))
        defer { samba.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let staging = try harness.directory.makeDirectory("staging")
        let local = staging.appending("scan.tif")
        // 1600x1200 at 16 bits per sample: an 11.5 MB TIFF, in parts of 3.8 MB.
        try await onOwnThread { try Fixtures.makeImage(at: local, width: 1600, height: 1200) }
        let data = try Data(contentsOf: URL(fileURLWithPath: local.string))
        let hash = try Self.sha256(of: local)

        // smbclient reads the file from a pipe, so the upload stalls, with the file open in smbd, whenever the pipe
        // is empty; the stalls are the writer's behaviour under test. In each of the two stalls, once more of the
        // file has reached the share, a sentinel proves that the daemon has handled every event so far: had the
        // partial file been taken, its job would have been queued before the sentinel's.
        let third = data.count / 3 + 1
        let parts = stride(from: 0, to: data.count, by: third).map { data[$0..<min(data.count, $0 + third)] }
        let remote = harness.inbox.appending("scan.tif")
        var stalledSizes: [Int64] = []
        try await samba.put(parts, as: "scan.tif") { part in
            guard part < parts.count - 1 else { return }
            let reached = try await waitUntil("part \(part + 1) to reach the share") {
                let size = Self.size(of: remote) ?? 0
                return size > (stalledSizes.last ?? 0) ? size : nil
            }
            let early = try await harness.waitForSidecars(0)
            #expect(early.isEmpty, "a job on the partial file: \(early)")
            #expect(daemon.logLines(containing: "Job queued", "scan.tif").isEmpty)
            stalledSizes.append(reached)
        }

        let sidecars = try await harness.waitForSidecars(1)
        #expect(Array(sidecars.keys) == ["scan.jpg.chute.json"])
        let sidecar = try #require(sidecars["scan.jpg.chute.json"])
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        #expect(sidecar.source.size == Int64(data.count))
        #expect(sidecar.source.sha256 == hash)
        #expect(daemon.logLines(containing: "Job queued", "scan.tif").count == 1)
        #expect(Self.outputs(of: harness) == ["scan.jpg"])
        let output = try Fixtures.identify(harness.outbox.appending("scan.jpg"))
        #expect(output.format == "JPEG" && output.width == 1600 && output.height == 1200)
        #expect(stalledSizes.count == 2 && stalledSizes.allSatisfy { $0 < Int64(data.count) }, "\(stalledSizes)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: harness.inbox.appending("scan.tif").string)) == data)
        #expect(harness.temporaryFiles().isEmpty)
    }

    /// The outbox's files other than sidecars and the sentinels' outputs.
    private static func outputs(of harness: DaemonHarness) -> [String] {
        harness.directory.files(below: "outbox").filter {
            !$0.hasSuffix(Sidecar.fileSuffix) && !$0.contains("zz-sentinel-")
        }
    }

    /// A file's size, or `nil` when it does not exist.
    private static func size(of path: FilePath) -> Int64? {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path.string)
        return (attributes?[.size] as? NSNumber)?.int64Value
    }

    /// The SHA-256 of a file in hex, as `sha256sum` prints it.
    private static func sha256(of path: FilePath) throws -> String {
        let result = try CommandLineTool.run(["sha256sum", path.string])
        return String(result.standardOutput.prefix { $0 != " " })
    }
}

/// `smbd`, run by the test as root on 127.0.0.1 at a free port, with its configuration and every state folder in a
/// temporary folder, exporting one folder as the guest-writable share `inbox`.
///
/// smbd runs in the foreground as the test's own child, so its process id is known without reading its pid file
/// (which it writes only once it is up). Foundation's `Process` starts it as a process group leader, so ``stop()``
/// reaches the helper and connection processes it forks too.
private final class SambaServer: Sendable {
    /// The share's name.
    static let share = "inbox"

    let port: UInt16
    let folder: FilePath
    private let process: Process

    private init(port: UInt16, folder: FilePath, process: Process) {
        self.port = port
        self.folder = folder
        self.process = process
    }

    /// The server's log (smbd writes it to standard output with `--debug-stdout`).
    var log: String {
        (try? String(contentsOfFile: self.folder.appending("smbd.log").string, encoding: .utf8)) ?? ""
    }

    /// Starts smbd sharing `share`, with its state in `folder`, and waits until it accepts connections.
    ///
    /// - Throws: ``SambaUnavailable`` when `smbd` or `smbclient` is not installed, ``DeadlineExceeded`` when smbd
    ///   does not come up.
    static func start(sharing share: FilePath, in folder: FilePath) async throws -> SambaServer {
        let smbd = try self.tool("smbd")
        _ = try self.tool("smbclient")
        // Another process may take the free port between the probe and smbd's bind; smbd then exits, and a new
        // port is tried.
        var attempt = 0
        while true {
            attempt += 1
            let port = try self.freePort()
            let configuration = folder.appending("smb.conf")
            try self.configuration(port: port, share: share, folder: folder)
                .write(toFile: configuration.string, atomically: true, encoding: .utf8)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: smbd.string)
            // Process makes smbd a process group leader already, so smbd must not try to (its setsid fails).
            process.arguments = [
                "--foreground", "--no-process-group", "--debug-stdout", "--configfile=\(configuration.string)",
            ]
            let logPath = folder.appending("smbd.log").string
            guard FileManager.default.createFile(atPath: logPath, contents: nil),
                let log = FileHandle(forWritingAtPath: logPath)
            else { throw CocoaError(.fileWriteUnknown) }
            process.standardOutput = log
            process.standardError = log
            process.standardInput = FileHandle.nullDevice
            try process.run()
            try log.close()
            let server = SambaServer(port: port, folder: folder, process: process)
            let listening: Bool
            do {
                listening = try await waitUntil("smbd to accept connections on 127.0.0.1:\(port)", timeout: 30) {
                    if server.acceptsConnections() { return true }
                    return process.isRunning ? nil : false
                }
            } catch {
                server.stop()
                throw error
            }
            if listening { return server }
            server.stop()
            guard attempt < 3 else {
                throw SambaUnavailable(reason: "smbd exited at start-up; its log:\n\(server.log.suffix(3000))")
            }
        }
    }

    /// Uploads `local` to the share as `remote` with `smbclient put`.
    func put(_ local: FilePath, as remote: String) throws {
        try CommandLineTool.run(self.smbclient(command: "put \"\(local.string)\" \"\(remote)\""))
    }

    /// Uploads `parts` one after another to the share as `remote`, through a pipe into `smbclient put -`, awaiting
    /// `between(index)` after the part at `index` has been handed to smbclient. The file stays open in smbd from
    /// the first part to the end.
    func put(_ parts: [Data], as remote: String, between: (Int) async throws -> Void) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.tool("smbclient").string)
        process.arguments = Array(self.smbclient(command: "put - \"\(remote)\"").dropFirst())
        let input = Pipe()
        process.standardInput = input
        let logPath = self.folder.appending("smbclient.log").string
        guard FileManager.default.createFile(atPath: logPath, contents: nil),
            let log = FileHandle(forWritingAtPath: logPath)
        else { throw CocoaError(.fileWriteUnknown) }
        process.standardOutput = log
        process.standardError = log
        try process.run()
        try log.close()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let writer = input.fileHandleForWriting
        for (index, part) in parts.enumerated() {
            // A write to a pipe blocks until smbclient has read most of it: off the cooperative pool. Should
            // smbclient die, the write would raise SIGPIPE and end the whole test process; blocked on this thread of
            // its own, the write fails with EPIPE instead, and the pending signal ends with the thread.
            try await onOwnThread {
                var signals = sigset_t()
                sigemptyset(&signals)
                sigaddset(&signals, SIGPIPE)
                pthread_sigmask(SIG_BLOCK, &signals, nil)
                try writer.write(contentsOf: part)
            }
            try await between(index)
        }
        try writer.close()
        try await waitUntil("smbclient to finish the upload", timeout: 60) { process.isRunning ? nil : true }
        guard process.terminationStatus == 0 else {
            let output = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            throw SambaUnavailable(reason: "smbclient put - exited \(process.terminationStatus): \(output)")
        }
    }

    /// Stops smbd and every process it forked: SIGTERM to its process group, SIGKILL if it is still there after
    /// 10 s. For teardown, so it neither throws nor waits without a bound.
    func stop() {
        let pid = self.process.processIdentifier
        kill(-pid, SIGTERM)
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + .seconds(10)
        while self.process.isRunning && ContinuousClock.now < deadline { usleep(20_000) }
        if self.process.isRunning {
            kill(pid, SIGKILL)
            self.process.waitUntilExit()
        }
        // Helpers that outlived their parent.
        kill(-pid, SIGKILL)
    }

    /// The arguments of `smbclient` running one command on the share as a guest.
    private func smbclient(command: String) -> [String] {
        ["smbclient", "//127.0.0.1/\(Self.share)", "--port=\(self.port)", "--no-pass", "--command=\(command)"]
    }

    /// Whether something accepts a TCP connection on 127.0.0.1 at the server's port.
    private func acceptsConnections() -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = Self.loopback(port: self.port)
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return status == 0
    }

    /// smb.conf for a standalone server on 127.0.0.1 only, with no NetBIOS, printers or RPC helpers, whose every
    /// state folder is below `folder`, and a guest-writable share of `share` where every file is written as root.
    private static func configuration(port: UInt16, share: FilePath, folder: FilePath) throws -> String {
        var folders: [String: FilePath] = [:]
        for name in ["pid", "lock", "state", "cache", "private", "ncalrpc"] {
            folders[name] = folder.appending(name)
            try FileManager.default.createDirectory(
                atPath: folder.appending(name).string,
                withIntermediateDirectories: true
            )
        }
        // `smb2 max write = 16 KiB` (Samba offers 8 MiB) makes a client split a large file into many writes. It also
        // keeps smbclient's read-ahead small: it reads 256 chunks of its input before it sends the second write, so
        // a file piped into it in parts reaches the share part by part only once 4 MiB are in.
        return """
            [global]
                server role = standalone server
                smb ports = \(port)
                interfaces = 127.0.0.1
                bind interfaces only = yes
                disable netbios = yes
                pid directory = \(folders["pid"]!.string)
                lock directory = \(folders["lock"]!.string)
                state directory = \(folders["state"]!.string)
                cache directory = \(folders["cache"]!.string)
                private dir = \(folders["private"]!.string)
                ncalrpc dir = \(folders["ncalrpc"]!.string)
                rpc start on demand helpers = no
                map to guest = Bad User
                load printers = no
                printcap name = /dev/null
                disable spoolss = yes
                usershare max shares = 0
                smb2 max write = 16384
            [\(Self.share)]
                path = \(share.string)
                guest ok = yes
                read only = no
                force user = root

            """
    }

    /// The absolute path of an installed Samba tool: on PATH, or in the sbin folders that a non-login PATH may lack.
    private static func tool(_ name: String) throws -> FilePath {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let folders = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/local/sbin"]
        for folder in folders where FileManager.default.isExecutableFile(atPath: "\(folder)/\(name)") {
            return FilePath("\(folder)/\(name)")
        }
        throw SambaUnavailable(reason: "\(name) is not installed; scripts/install-deps.sh installs samba and smbclient")
    }

    /// A TCP port on 127.0.0.1 that nothing uses now: the one the kernel picks for a socket bound to port 0.
    private static func freePort() throws -> UInt16 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Errno(rawValue: errno) }
        defer { close(socket) }
        var address = self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let status = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 ? getsockname(socket, $0, &length) : -1
            }
        }
        guard status == 0 else { throw Errno(rawValue: errno) }
        return UInt16(bigEndian: address.sin_port)
    }

    /// 127.0.0.1 at `port`.
    private static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        return address
    }
}

/// Samba cannot run the test: a tool is missing or smbd does not start.
private struct SambaUnavailable: Error, CustomStringConvertible {
    var reason: String
    var description: String { "Samba is unavailable: \(self.reason)" }
}
