import CChuteLinux
import Foundation
import Glibc

/// systemd's notification socket (`$NOTIFY_SOCKET`), to which a `Type=notify` service says that it is ready, what it
/// is doing, that it is alive (the watchdog), reloading or stopping: what `sd_notify(3)` does, without libsystemd.
///
/// Each message is one datagram of `KEY=VALUE` lines on an unconnected `AF_UNIX` `SOCK_DGRAM` socket, sent to the
/// path in `$NOTIFY_SOCKET`, or to the abstract address it names with a leading `@`. Sending never blocks: a message
/// systemd cannot take at once is dropped, as a lost status line costs nothing and the next watchdog ping comes
/// soon.
///
/// - Important: Owns its socket, closed in `deinit`; `send(_:)` may be called from any thread.
package final class SystemdNotify: Sendable {
    private let descriptor: Int32
    private let address: sockaddr_un
    private let addressLength: socklen_t
    /// Half of `$WATCHDOG_USEC`, when systemd asks this process for watchdog pings: the interval sd_watchdog_enabled(3)
    /// recommends.
    package let watchdogInterval: Duration?

    /// The notification socket that systemd gave this process, if any.
    ///
    /// Takes `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` out of the environment, as `sd_notify`'s
    /// `unset_environment` does, so that worker processes neither inherit nor use them.
    ///
    /// - Returns: `nil` when `$NOTIFY_SOCKET` is not set, is not an absolute path or `@` name that fits in a
    ///   `sockaddr_un`, or no socket can be made.
    package static func fromEnvironment() -> SystemdNotify? {
        let environment = ProcessInfo.processInfo.environment
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] { unsetenv(name) }
        guard let path = environment["NOTIFY_SOCKET"] else { return nil }
        var watchdog: Duration?
        if let microseconds = environment["WATCHDOG_USEC"].flatMap(Int64.init), microseconds > 0,
            environment["WATCHDOG_PID"].flatMap(Int32.init).map({ $0 == getpid() }) ?? true
        {
            watchdog = .microseconds(microseconds / 2)
        }
        return SystemdNotify(path: path, watchdogInterval: watchdog)
    }

    /// - Parameters:
    ///   - path: an absolute socket path, or an abstract socket name starting with `@`.
    ///   - watchdogInterval: how often ``SystemdWatchdog`` pings; `nil` for no watchdog.
    init?(path: String, watchdogInterval: Duration?) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") || bytes.first == UInt8(ascii: "@"),
            bytes.count < MemoryLayout.size(ofValue: address.sun_path)
        else { return nil }
        // An abstract address starts with a NUL byte and is as long as its name: no terminating NUL counts.
        let abstract = bytes[0] == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        self.descriptor = descriptor
        self.address = address
        self.addressLength = socklen_t(
            MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + (abstract ? 0 : 1)
        )
        self.watchdogInterval = watchdogInterval
    }

    deinit {
        close(self.descriptor)
    }

    /// Sends `state`, one or more `KEY=VALUE` lines, in one datagram.
    ///
    /// - Returns: whether the datagram was sent. The corresponding C function is `sendto`.
    @discardableResult
    package func send(_ state: String) -> Bool {
        var address = self.address
        let bytes = Array(state.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bytes.withUnsafeBytes { buffer in
                    sendto(
                        self.descriptor,
                        buffer.baseAddress,
                        buffer.count,
                        Int32(MSG_NOSIGNAL | MSG_DONTWAIT),
                        address,
                        self.addressLength
                    )
                }
            }
        }
        return sent == bytes.count
    }

    /// `RELOADING=1` with the monotonic time in microseconds, which systemd 253 and later ask to come with it.
    ///
    /// The corresponding C function is `clock_gettime`.
    static var reloading: String {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return "RELOADING=1\nMONOTONIC_USEC=\(Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000)"
    }
}
