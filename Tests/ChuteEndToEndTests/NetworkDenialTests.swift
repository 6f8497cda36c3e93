import CChuteLinux
import Foundation
import Testing

/// The filter that shuts workers off from the network, tried in a child process (it cannot be undone).
@Suite struct NetworkDenialTests {
    @Test func socketsOtherThanUnixOnesAreRefused() {
        #expect(Self.socketErrorAfterDenial(domain: AF_INET) == EACCES)
        #expect(Self.socketErrorAfterDenial(domain: AF_INET6) == EACCES)
        #expect(Self.socketErrorAfterDenial(domain: AF_NETLINK) == EACCES)
        #expect(Self.socketErrorAfterDenial(domain: AF_UNIX) == 0)
    }

    /// Forks; the child installs the filter, tries `socket(domain)` and exits with the errno (0 when it got a
    /// socket). Between fork and exit the child makes system calls only, as a child of a threaded process must.
    private static func socketErrorAfterDenial(domain: Int32) -> Int32 {
        let child = fork()
        if child == 0 {
            guard chute_deny_network() == 0 else { _exit(100) }
            let socketType = domain == AF_NETLINK ? Int32(SOCK_RAW.rawValue) : Int32(SOCK_STREAM.rawValue)
            _exit(socket(domain, socketType, 0) >= 0 ? 0 : errno)
        }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        return (status >> 8) & 0xff
    }
}
