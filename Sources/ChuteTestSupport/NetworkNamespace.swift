import Foundation
import Synchronization
import SystemPackage

/// A network namespace of a test's own (`ip netns`), joined to this one by a veth pair: `10.77.N.1` on this side,
/// `10.77.N.2` inside. ``command(hiding:_:)`` runs a program inside it with folders of this machine hidden from it,
/// as a second machine without the first one's storage. ``stop()`` removes both. Root only.
package final class NetworkNamespace: Sendable {
    package let name: String
    /// The address of this side of the veth pair, which programs inside reach this machine at.
    package let hostAddress: String
    /// The address inside.
    package let namespaceAddress: String
    private let hostLink: String
    private let stopped = Mutex(false)

    /// Whether namespaces can be made here: root, and `ip` installed.
    package static var isAvailable: Bool { getuid() == 0 && access(Self.ip, X_OK) == 0 }

    /// iproute2's `ip`, wherever the machine's merge of `/usr` put it.
    private static let ip =
        ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { (path: String) in access(path, X_OK) == 0 }
        ?? "/usr/sbin/ip"

    package init() throws {
        let tag = String(format: "%06x", UInt32.random(in: 0...0xFF_FFFF))
        let subnet = Int.random(in: 1...250)
        self.name = "chute-\(tag)"
        self.hostLink = "ch\(tag)a"
        self.hostAddress = "10.77.\(subnet).1"
        self.namespaceAddress = "10.77.\(subnet).2"
        let peer = "ch\(tag)b"
        do {
            for command in [
                ["netns", "add", self.name],
                ["link", "add", self.hostLink, "type", "veth", "peer", "name", peer],
                ["link", "set", peer, "netns", self.name],
                ["addr", "add", "\(self.hostAddress)/24", "dev", self.hostLink],
                ["link", "set", self.hostLink, "up"],
                ["-n", self.name, "addr", "add", "\(self.namespaceAddress)/24", "dev", peer],
                ["-n", self.name, "link", "set", peer, "up"],
                ["-n", self.name, "link", "set", "lo", "up"],
            ] {
                try CommandLineTool.run([Self.ip] + command)
            }
        } catch {
            self.stop()
            throw error
        }
    }

    deinit { self.stop() }

    /// The program and arguments that run `command` inside the namespace, in a mount namespace of its own where each
    /// of `folders` is an empty tmpfs: what is in them on this machine cannot be seen or written from there.
    ///
    /// `ip netns exec`, `unshare` and the shell each exec the next, so the process started is, in the end, `command`.
    package func command(hiding folders: [FilePath], _ command: [String]) -> (executable: FilePath, arguments: [String])
    {
        let script = #"while [ "$1" != -- ]; do mount -t tmpfs tmpfs "$1" || exit 1; shift; done; shift; exec "$@""#
        return (
            FilePath(Self.ip),
            ["netns", "exec", self.name, "unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh"]
                + folders.map(\.string) + ["--"] + command
        )
    }

    /// Removes the veth pair and the namespace; once.
    package func stop() {
        let first = self.stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        _ = try? CommandLineTool.run([Self.ip, "link", "del", self.hostLink], check: false)
        _ = try? CommandLineTool.run([Self.ip, "netns", "del", self.name], check: false)
    }
}
