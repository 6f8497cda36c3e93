import ChuteCore
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// The PDF engine's file I/O: the input read whole through the one descriptor ``InputOpening`` gives; outputs are
/// written by ``TemporaryFile/writeOutput(_:at:)``.
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
            let count: Int
            do throws(SystemCallError) {
                count = try SystemCall.check("read") {
                    bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
                }
            } catch {
                throw ConversionFailure(.internalError, "cannot read input: \(error.cause)")
            }
            if count == 0 { break }
            filled += count
        }
        bytes.removeSubrange(filled...)
        return bytes
    }

    /// Removes files written before a later step failed.
    static func remove(_ paths: [FilePath]) {
        for path in paths {
            _ = path.withPlatformString { unlink($0) }
        }
    }
}
