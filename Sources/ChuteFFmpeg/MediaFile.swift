import ChuteCore
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// An open input or output file, which libavformat reads or writes only through ``IOContext``'s callbacks.
///
/// libavformat never sees a path: it cannot interpret `%d` in a name, reach for a protocol, or open a second file
/// next to this one. An output file is a ``TemporaryFile``, removed when the last reference goes away unless
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
    /// A new output's owner, which closes and removes it unless it is kept; `nil` for an input.
    private var output: TemporaryFile?
    /// Set by ``keep()``.
    private var isKept = false

    private init(descriptor: CInt, path: FilePath, size: Int64, output: consuming TemporaryFile?) {
        self.descriptor = descriptor
        self.path = path
        self.size = size
        self.output = output
    }

    deinit {
        guard let output = self.output.take() else {
            close(self.descriptor)
            return
        }
        // Synced by keep() already; unkept, the output's own deinit closes and removes it.
        if self.isKept { try? output.keep() }
    }

    /// Opens a job's input (``InputOpening``).
    ///
    /// - Throws: as ``InputOpening/open(_:)`` does.
    static func open(reading request: ConversionRequest) throws(ConversionFailure) -> MediaFile {
        let (descriptor, size) = try InputOpening.open(request)
        return MediaFile(descriptor: descriptor, path: request.input, size: size, output: nil)
    }

    /// Creates an output, which must not exist, open for writing and reading back (``TemporaryFile``).
    ///
    /// - Throws: `outputFailed`, saying whether the name was taken.
    static func create(at path: FilePath) throws(ConversionFailure) -> MediaFile {
        do throws(SystemCallError) {
            let output = try TemporaryFile(creatingAt: path, readable: true)
            return MediaFile(descriptor: output.descriptor.rawValue, path: path, size: 0, output: output)
        } catch {
            throw .writingOutput(error)
        }
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
            try self.output?.sync()
        } catch {
            throw .writingOutput(error)
        }
        self.isKept = true
    }
}
