import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real daemon under a stand-in for systemd's notification socket (`Type=notify`): what it says, and when.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct SystemdNotifyEndToEndTests {
    @Test func readyStatusWatchdogReloadAndStopping() async throws {
        let harness = try DaemonHarness(settings: "  workerIdle: 10m")
        defer { harness.stop() }
        let socket = try NotifySocket(path: harness.directory.appending("notify.sock").string)
        try await harness.start(environment: ["NOTIFY_SOCKET": socket.address, "WATCHDOG_USEC": "2000000"])
        let daemon = try #require(harness.daemon)

        let ready = try await socket.waitFor("READY=1") { $0.contains("READY=1") }
        let idle = try #require(Self.status(in: ready), "READY=1 comes with a status: \(ready)")
        #expect(idle == "0 running, 0 queued, 0 completed, 0 failed")

        // A converted photo changes the status line (the sentinel's job may be counted too).
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("photo.png"), width: 64, height: 48)
        try harness.moveIn(["photo.png"], from: staging)
        try await harness.waitForSidecars(1)
        // Once the jobs are over: nothing running or queued, at least one completed, none failed.
        try await socket.waitFor("a STATUS= line with the completed jobs and nothing else to do") { message in
            guard let status = Self.status(in: message) else { return false }
            return status.hasPrefix("0 running, 0 queued, ") && status.hasSuffix(" completed, 0 failed")
                && status != idle
        }

        // WATCHDOG_USEC=2000000: a ping every second.
        try await socket.waitFor("two WATCHDOG=1", count: 2) { $0.contains("WATCHDOG=1") }

        // The workers inherit none of it.
        let started = try #require(daemon.logLines(containing: "Job started").first)
        let worker = try #require(Logfmt.parse(started)?["worker.pid"])
        let environment = try String(contentsOfFile: "/proc/\(worker)/environ", encoding: .utf8)
        #expect(!environment.contains("NOTIFY_SOCKET"))
        #expect(!environment.contains("WATCHDOG_USEC"))

        // A reload is framed by RELOADING=1 and READY=1.
        let before = socket.messages.count
        daemon.send(SIGHUP)
        try await daemon.waitForLog("Rules reloaded")
        let reloading = try await socket.waitFor("RELOADING=1", after: before) { $0.contains("RELOADING=1") }
        #expect(reloading.contains("MONOTONIC_USEC="))
        let reloaded = socket.messages.lastIndex { $0.contains("RELOADING=1") } ?? before
        try await socket.waitFor("READY=1 after the reload", after: reloaded + 1) { $0.contains("READY=1") }

        daemon.send(SIGTERM)
        try await socket.waitFor("STOPPING=1") { $0.contains("STOPPING=1") }
        let exit = try await daemon.waitForExit()
        #expect(exit.status == 0 && !exit.signalled)
    }

    @Test func abstractSocketGetsReadyAndStopping() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        let socket = try NotifySocket(path: "@chute-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try await harness.start(environment: ["NOTIFY_SOCKET": socket.address])
        try await socket.waitFor("READY=1") { $0.contains("READY=1") }
        harness.daemon?.send(SIGTERM)
        try await socket.waitFor("STOPPING=1") { $0.contains("STOPPING=1") }
        // No WATCHDOG_USEC, no pings.
        #expect(!socket.messages.contains { $0.contains("WATCHDOG=1") })
    }

    /// The value of a message's `STATUS=` line.
    private static func status(in message: String) -> String? {
        message.split(separator: "\n").first { $0.hasPrefix("STATUS=") }.map { String($0.dropFirst(7)) }
    }
}

/// A datagram socket standing in for systemd's notification socket: bound to a path, or to an abstract name given
/// with a leading `@` as `$NOTIFY_SOCKET` spells it; read without blocking, every wait with a deadline.
///
/// The corresponding C functions are `socket`, `bind` and `recv`.
private final class NotifySocket {
    /// The address as `$NOTIFY_SOCKET` gives it.
    let address: String
    private let descriptor: Int32
    /// Every message received so far, in order.
    private(set) var messages: [String] = []

    init(path: String) throws {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        precondition(bytes.count < MemoryLayout.size(ofValue: address.sun_path), "socket path too long: \(path)")
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + (abstract ? 0 : 1))
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Errno(rawValue: errno) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else {
            let error = Errno(rawValue: errno)
            close(descriptor)
            throw error
        }
        self.address = path
        self.descriptor = descriptor
    }

    deinit {
        close(self.descriptor)
        if !self.address.hasPrefix("@") { unlink(self.address) }
    }

    /// Reads every message waiting, without blocking.
    private func receive() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes {
                recv(self.descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            guard count > 0 else { return }
            self.messages.append(String(decoding: buffer[0..<count], as: UTF8.self))
        }
    }

    /// Waits until `count` messages from index `after` on satisfy `condition`, and returns the last of them.
    ///
    /// - Throws: ``DeadlineExceeded`` naming `what` and every message received.
    @discardableResult
    func waitFor(
        _ what: String,
        after: Int = 0,
        count: Int = 1,
        timeout: Double = 30,
        _ condition: (String) -> Bool
    ) async throws -> String {
        try await waitUntil("\(what) on \(self.address); received: \(self.messages)", timeout: timeout) {
            self.receive()
            let matching = self.messages.dropFirst(after).filter(condition)
            return matching.count >= count ? matching.last : nil
        }
    }
}
