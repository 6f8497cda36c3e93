import SystemPackage

/// A system call that failed: the C function and the `errno` it left (swift-nio: `FileSystemError.SystemCallError`).
///
/// ``SystemCall/check(_:_:)`` throws it; callers turn it into their own domain's error (``ConversionFailure``, the
/// watcher's `WatchError`) with the errno as the cause.
package struct SystemCallError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The C function that failed, such as `open`.
    package var call: String
    /// The `errno` it set.
    package var cause: Errno

    package init(_ call: String, cause: Errno) {
        self.call = call
        self.cause = cause
    }

    package var description: String { "\(self.call) failed: \(self.cause)" }

    /// The errno of `error` when it is a `SystemCallError`, else `error` itself: what a message for a person names
    /// after saying what was being done ("cannot write output: No space left on device").
    package static func cause(of error: any Error) -> any Error {
        (error as? SystemCallError)?.cause ?? error
    }
}
