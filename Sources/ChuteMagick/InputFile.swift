import ChuteCore
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// An input file, opened so that neither a symbolic link nor a FIFO or device can stand in for it
/// (``InputOpening``); everything afterwards uses that descriptor.
struct InputFile: ~Copyable {
    private let descriptor: CInt
    /// The size `fstat` reported when the file was opened, in bytes.
    let size: Int

    /// Opens a job's input (``InputOpening``).
    ///
    /// - Throws: as ``InputOpening/open(_:)`` does.
    init(opening request: ConversionRequest) throws(ConversionFailure) {
        let (descriptor, size) = try InputOpening.open(request)
        self.descriptor = descriptor
        self.size = Int(size)
    }

    deinit {
        close(self.descriptor)
    }

    /// Reads the whole file.
    ///
    /// The corresponding C function is `read`, repeated until end of file.
    ///
    /// - Parameter limit: the largest size accepted, in bytes.
    /// - Returns: the file's bytes.
    /// - Throws: `limitExceeded` when the file is (or grows) larger than `limit`; `internalError` when reading fails.
    func readAll(limit: Int) throws(ConversionFailure) -> [UInt8] {
        guard self.size <= limit else {
            throw ConversionFailure(.limitExceeded, "input is \(self.size) bytes, more than the \(limit)-byte limit")
        }
        // One byte more than the limit shows that a file grew past it while it was read.
        var bytes = [UInt8](repeating: 0, count: min(limit + 1, max(self.size, 64 * 1024)))
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
                    bytes.withUnsafeMutableBytes { read(self.descriptor, $0.baseAddress! + filled, $0.count - filled) }
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
}
