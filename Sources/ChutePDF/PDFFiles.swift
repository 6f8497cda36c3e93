import ChuteCore
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// The PDF engine's file I/O: the input read whole through the one descriptor ``InputOpening`` gives, outputs
/// created exclusively and synced.
enum PDFFiles {
    /// Reads a job's input whole. The corresponding C function is `read`, repeated until end of file.
    ///
    /// - Parameter limit: the largest size accepted, in bytes.
    /// - Throws: as ``InputOpening/open(_:)`` does; `limitExceeded` past `limit`; `internalError` when reading fails.
    static func readInput(_ request: ConversionRequest, limit: Int) throws(ConversionFailure) -> [UInt8] {
        let (descriptor, size) = try InputOpening.open(request)
        defer { close(descriptor) }
        guard size <= limit else {
            throw ConversionFailure(.limitExceeded, "input is \(size) bytes, more than the \(limit)-byte limit")
        }
        var bytes = [UInt8](repeating: 0, count: Int(size) + 1)
        var filled = 0
        while true {
            if filled == bytes.count {
                guard bytes.count <= limit else {
                    throw ConversionFailure(.limitExceeded, "input grew past the \(limit)-byte limit while read")
                }
                bytes.append(contentsOf: repeatElement(0, count: min(bytes.count, limit + 1 - bytes.count)))
            }
            let count = bytes.withUnsafeMutableBytes { buffer in
                retryingOnInterrupt { read(descriptor, buffer.baseAddress! + filled, buffer.count - filled) }
            }
            guard count >= 0 else {
                throw ConversionFailure(.internalError, "cannot read input: \(Errno(rawValue: errno))")
            }
            if count == 0 { break }
            filled += count
        }
        bytes.removeSubrange(filled...)
        return bytes
    }

    /// Creates `path`, which must not exist (nor be a symbolic link), writes `bytes` and syncs it; a file that
    /// cannot be finished is removed. The corresponding C functions are `open` with `O_CREAT | O_EXCL |
    /// O_NOFOLLOW`, `write` and `fsync`.
    ///
    /// - Throws: `outputFailed`, saying whether the name was taken; `diskFull` for `ENOSPC` and `EDQUOT`.
    static func writeOutput(_ bytes: [UInt8], at path: FilePath) throws(ConversionFailure) {
        let descriptor = path.withPlatformString { name in
            retryingOnInterrupt { open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644) }
        }
        guard descriptor >= 0 else {
            let error = Errno(rawValue: errno)
            if error == .fileExists { throw ConversionFailure(.outputFailed, "output already exists") }
            throw ConversionFailure.writing("cannot create output", error)
        }
        var failure: ConversionFailure?
        bytes.withUnsafeBytes { buffer in
            var written = 0
            while written < buffer.count {
                let count = retryingOnInterrupt {
                    write(descriptor, buffer.baseAddress! + written, buffer.count - written)
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

    /// Removes files written before a later step failed.
    static func remove(_ paths: [FilePath]) {
        for path in paths {
            _ = path.withPlatformString { unlink($0) }
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
