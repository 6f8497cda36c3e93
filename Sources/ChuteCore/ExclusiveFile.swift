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
        let descriptor: Int32
        do throws(SystemCallError) {
            descriptor = try SystemCall.check("open") {
                path.withPlatformString { open($0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644) }
            }
        } catch {
            if error.cause == .fileExists { throw ConversionFailure(.outputFailed, "output already exists") }
            throw ConversionFailure.creating("cannot create output", error)
        }
        var failure: ConversionFailure?
        bytes.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                do throws(SystemCallError) {
                    written += try SystemCall.check("write") {
                        Glibc.write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                    }
                } catch {
                    failure = ConversionFailure.writing("cannot write output", error)
                    return
                }
            }
        }
        if failure == nil {
            do throws(SystemCallError) {
                try SystemCall.check("fsync") { fsync(descriptor) }
            } catch {
                failure = ConversionFailure.writing("cannot flush output", error)
            }
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
}
