import ChuteCore
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// A new output file that removes itself unless ``finish()`` completes.
///
/// The file is created exclusively, so an existing file (or a symbolic link planted at the name) is never written
/// through; dropping an unfinished `OutputFile`, because a later step threw, closes and unlinks it.
struct OutputFile: ~Copyable {
    private let descriptor: CInt
    private let path: FilePath
    /// Set by ``finish()``, which closes the descriptor itself; `deinit` then leaves the file alone.
    private var isFinished = false

    /// Creates the file at `path`, which must not exist, with mode 0644.
    /// The corresponding C function is `open` with `O_CREAT | O_EXCL | O_NOFOLLOW`.
    ///
    /// - Parameter path: the output.
    /// - Throws: `outputFailed`, saying whether the name was taken.
    init(creatingAt path: FilePath) throws(ConversionFailure) {
        let descriptor: CInt
        do throws(SystemCallError) {
            descriptor = try SystemCall.check("open") {
                path.withPlatformString { open($0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644) }
            }
        } catch {
            if error.cause == .fileExists { throw ConversionFailure(.outputFailed, "output already exists") }
            throw ConversionFailure.creating("cannot create output", error)
        }
        self.descriptor = descriptor
        self.path = path
    }

    deinit {
        guard !self.isFinished else { return }
        close(self.descriptor)
        _ = self.path.withPlatformString { unlink($0) }
    }

    /// Appends `bytes`, however many `write` calls that takes. The corresponding C function is `write`.
    ///
    /// - Throws: `outputFailed`; `diskFull` for `ENOSPC` and `EDQUOT`.
    func write(_ bytes: UnsafeRawBufferPointer) throws(ConversionFailure) {
        var written = 0
        while written < bytes.count {
            do throws(SystemCallError) {
                written += try SystemCall.check("write") {
                    Glibc.write(self.descriptor, bytes.baseAddress! + written, bytes.count - written)
                }
            } catch {
                throw ConversionFailure.writing("cannot write output", error)
            }
        }
    }

    /// Flushes the file to storage and closes it, keeping it.
    /// The corresponding C functions are `fsync` and `close`.
    ///
    /// - Throws: `outputFailed`, after removing the file.
    consuming func finish() throws(ConversionFailure) {
        do throws(SystemCallError) {
            try SystemCall.check("fsync") { fsync(self.descriptor) }
        } catch {
            // Leaving through a throw runs deinit, which closes and unlinks.
            throw ConversionFailure.writing("cannot flush output", error)
        }
        // `discard self` would end the file's life here, but Swift only allows it for types whose stored properties
        // are all trivial, and FilePath is not; the flag does the same job.
        self.isFinished = true
        // After fsync a close error cannot mean lost data, but report it all the same rather than keep a file
        // whose state is unknown. close is not retried on EINTR: Linux has already released the descriptor.
        guard close(self.descriptor) == 0 else {
            let error = Errno(rawValue: errno)
            _ = self.path.withPlatformString { unlink($0) }
            throw ConversionFailure.writing("cannot close output", error)
        }
    }
}
