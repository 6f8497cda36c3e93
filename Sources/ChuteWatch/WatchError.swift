import ChuteCore
import Glibc
import SystemPackage

/// A system call of the watcher that failed, with its `errno`, the C function and the path it was about.
package struct WatchError: Error, Sendable, CustomStringConvertible {
    /// What the watcher was doing.
    package enum Code: Sendable, Equatable {
        /// Creating the inotify instance or the stop signal.
        case createInstance
        /// Adding an inotify watch to a folder.
        case addWatch
        /// Waiting for or reading inotify events.
        case readEvents
        /// Opening or listing a folder during a scan.
        case listFolder
    }

    /// What the watcher was doing.
    package var code: Code
    /// The C function that failed.
    package var function: String
    /// Its `errno`.
    package var errno: Errno
    /// The folder concerned, `nil` for calls that concern no path (`inotify_init1`, `poll`).
    package var path: FilePath?

    package var description: String {
        let cause = "\(self.function) failed: \(self.errno) (\(self.errno.rawValue))"
        guard let path = self.path else { return cause }
        return "\(path.escapedForLog): \(cause)"
    }

    /// The error of the call that just failed: reads `errno` at once, so call it right after the failing call.
    static func lastError(_ code: Code, function: String, path: FilePath? = nil) -> WatchError {
        WatchError(code: code, function: function, errno: Errno(rawValue: Glibc.errno), path: path)
    }
}

extension WatchError {
    /// The error of a call that failed in ``SystemCall/check(_:_:)``, with its C function and `errno`.
    init(_ code: Code, _ error: SystemCallError, path: FilePath? = nil) {
        self.init(code: code, function: error.call, errno: error.cause, path: path)
    }
}
