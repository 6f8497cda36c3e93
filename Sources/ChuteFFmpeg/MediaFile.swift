import ChuteCore
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// An open input or output file, which libavformat reads or writes only through ``IOContext``'s callbacks.
///
/// libavformat never sees a path: it cannot interpret `%d` in a name, reach for a protocol, or open a second file
/// next to this one. An output file is created exclusively and removed when the last reference goes away, unless
/// ``keep()`` was called first; it is read back for verification through the same descriptor, never reopened by
/// name.
///
/// A `final class` rather than a `~Copyable` struct because several owners share it: the engine, which keeps or
/// drops the output at the very end, and each ``IOContext`` that reads or writes it.
final class MediaFile {
    /// The open descriptor.
    let descriptor: CInt
    /// The path the file was opened at, for removal and messages.
    let path: FilePath
    /// The size `fstat` reported when the file was opened (0 for a new output).
    let size: Int64
    /// Whether the file was created here, and so is removed unless kept.
    private let isNew: Bool
    /// Set by ``keep()``.
    private var isKept = false

    private init(descriptor: CInt, path: FilePath, size: Int64, isNew: Bool) {
        self.descriptor = descriptor
        self.path = path
        self.size = size
        self.isNew = isNew
    }

    deinit {
        close(self.descriptor)
        if self.isNew && !self.isKept {
            _ = self.path.withPlatformString { unlink($0) }
        }
    }

    /// Opens a job's input (``InputOpening``).
    ///
    /// - Throws: as ``InputOpening/open(_:)`` does.
    static func open(reading request: ConversionRequest) throws(ConversionFailure) -> MediaFile {
        let (descriptor, size) = try InputOpening.open(request)
        return MediaFile(descriptor: descriptor, path: request.input, size: size, isNew: false)
    }

    /// Creates an output, which must not exist, with mode 0644, open for writing and reading back.
    /// The corresponding C function is `open` with `O_CREAT | O_EXCL | O_NOFOLLOW`.
    ///
    /// - Throws: `outputFailed`, saying whether the name was taken.
    static func create(at path: FilePath) throws(ConversionFailure) -> MediaFile {
        let descriptor: CInt
        do throws(SystemCallError) {
            descriptor = try SystemCall.check("open") {
                path.withPlatformString { Glibc.open($0, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644) }
            }
        } catch {
            if error.cause == .fileExists { throw ConversionFailure(.outputFailed, "output already exists") }
            throw ConversionFailure.creating("cannot create output", error)
        }
        return MediaFile(descriptor: descriptor, path: path, size: 0, isNew: true)
    }

    /// The file's size now, in bytes, or `nil` when it cannot be read. The corresponding C function is `fstat`.
    var currentSize: Int64? {
        var status = stat()
        return fstat(self.descriptor, &status) == 0 ? Int64(status.st_size) : nil
    }

    /// The first bytes of the file, at most `count`. The corresponding C function is `pread`.
    func header(count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let read = try? SystemCall.check("pread") {
            bytes.withUnsafeMutableBytes { pread(self.descriptor, $0.baseAddress, $0.count, 0) }
        }
        bytes.removeSubrange((read ?? 0)...)
        return bytes
    }

    /// Flushes a new file to storage and keeps it when the last reference goes away.
    /// The corresponding C function is `fsync`.
    ///
    /// - Throws: `outputFailed`; the file is then still removed with the last reference.
    func keep() throws(ConversionFailure) {
        do throws(SystemCallError) {
            try SystemCall.check("fsync") { fsync(self.descriptor) }
        } catch {
            throw ConversionFailure.writing("cannot flush output", error)
        }
        self.isKept = true
    }
}
