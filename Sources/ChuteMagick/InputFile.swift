import ChuteCore
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// An input file, opened so that neither a symbolic link nor a FIFO or device can stand in for it.
///
/// The file is opened once; everything afterwards uses that descriptor, so the path is never looked up twice.
struct InputFile: ~Copyable {
    private let descriptor: CInt
    /// The size `fstat` reported when the file was opened, in bytes.
    let size: Int

    /// Opens the file at `path` for reading and checks that it is a regular file.
    ///
    /// `O_NOFOLLOW` refuses a symbolic link in the last component, and `O_NONBLOCK` makes opening a FIFO return at
    /// once instead of waiting for a writer. The corresponding C functions are `open` and `fstat`.
    ///
    /// - Parameter path: the input.
    /// - Throws: `unsupportedInput` for a symbolic link, FIFO, socket, device or directory; `inputChanged` when the
    ///   file is gone; `internalError` for other `open` failures.
    init(openingAt path: FilePath) throws(ConversionFailure) {
        let descriptor = path.withPlatformString { name in
            retryingOnInterrupt { open(name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK) }
        }
        guard descriptor >= 0 else {
            let error = Errno(rawValue: errno)
            switch error {
            case .tooManySymbolicLinkLevels: throw ConversionFailure(.unsupportedInput, "input is a symbolic link")
            case .noSuchAddressOrDevice: throw ConversionFailure(.unsupportedInput, "not a regular file")
            case .noSuchFileOrDirectory: throw ConversionFailure(.inputChanged, "input disappeared before it was read")
            case .resourceBusy, .textFileBusy, .wouldBlock:
                throw ConversionFailure(.sourceBusy, "another program holds the input (\(error))")
            default: throw ConversionFailure(.internalError, "cannot open input: \(error)")
            }
        }
        var status = Glibc.stat()
        guard fstat(descriptor, &status) == 0 else {
            let error = Errno(rawValue: errno)
            close(descriptor)
            throw ConversionFailure(.internalError, "cannot inspect input: \(error)")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw ConversionFailure(.unsupportedInput, "not a regular file")
        }
        self.descriptor = descriptor
        self.size = Int(status.st_size)
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
            let count = bytes.withUnsafeMutableBytes { buffer in
                retryingOnInterrupt { read(self.descriptor, buffer.baseAddress! + filled, buffer.count - filled) }
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
}
