import Foundation
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// An engine's output written in one go, for engines whose library hands over the whole file in memory (the PDF and
/// document engines).
package enum ExclusiveFile {
    /// Creates `path`, which must not exist (nor be a symbolic link), writes `bytes` and syncs it; a file that
    /// cannot be finished is removed. The corresponding C functions are `open` with `O_CREAT | O_EXCL |
    /// O_NOFOLLOW`, `write` and `fsync`.
    ///
    /// - Throws: `outputFailed`, saying whether the name was taken; `diskFull` for `ENOSPC` and `EDQUOT`.
    package static func write(_ bytes: some ContiguousBytes, at path: FilePath) throws(ConversionFailure) {
        let descriptor = path.withPlatformString { name in
            retryingOnInterrupt { open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644) }
        }
        guard descriptor >= 0 else {
            let error = Errno(rawValue: errno)
            if error == .fileExists { throw ConversionFailure(.outputFailed, "output already exists") }
            throw ConversionFailure.creating("cannot create output", error)
        }
        var failure: ConversionFailure?
        bytes.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                let count = retryingOnInterrupt {
                    Glibc.write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                }
                guard count >= 0 else {
                    failure = ConversionFailure.writing("cannot write output", Errno(rawValue: errno))
                    return
                }
                written += count
            }
        }
        if failure == nil, retryingOnInterrupt({ fsync(descriptor) }) != 0 {
            failure = ConversionFailure.writing("cannot flush output", Errno(rawValue: errno))
        }
        // close is not retried on EINTR: Linux has already released the descriptor.
        if close(descriptor) != 0, failure == nil {
            failure = ConversionFailure.writing("cannot close output", Errno(rawValue: errno))
        }
        if let failure {
            _ = path.withPlatformString { unlink($0) }
            throw failure
        }
    }

    /// Runs a system call again while it fails with `EINTR`.
    private static func retryingOnInterrupt<Result: FixedWidthInteger>(_ body: () -> Result) -> Result {
        var result: Result
        repeat {
            result = body()
        } while result < 0 && errno == EINTR
        return result
    }
}
