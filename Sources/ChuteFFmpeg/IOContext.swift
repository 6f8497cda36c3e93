import CChuteLinux
import CFFmpeg
import ChuteCore
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Owns one `AVIOContext` whose callbacks read or write a ``MediaFile`` at their own position.
///
/// Each context keeps its own offset and uses `pread`/`pwrite`, so the output can be read back for verification
/// through the descriptor it was written with. A writing context asks the kernel to start writing the file out every
/// ``writebackInterval`` bytes, so that the `fsync` before the output is kept (``MediaFile/keep()``) finds most of it
/// on storage already, instead of writing the whole file then. The corresponding C functions are `avio_alloc_context`
/// and `avio_context_free`.
struct IOContext: ~Copyable {
    /// The opaque value the callbacks receive: the file and this context's offset in it.
    ///
    /// A class because C holds it as an unretained pointer, which needs a stable address; ``IOContext`` keeps it
    /// alive for as long as the `AVIOContext` exists.
    private final class Cursor {
        let file: MediaFile
        var position: Int64 = 0
        /// Bytes written since writeback was last started.
        var sinceWriteback: Int64 = 0

        init(file: MediaFile) {
            self.file = file
        }
    }

    /// The size of the buffer between libavformat and the read callback. A packet larger than it is read straight into
    /// the packet, so most video packets are copied once.
    private static let readingBufferSize: Int32 = 64 * 1024
    /// The size of the buffer between libavformat and the write callback: each `pwrite` hands the kernel this much
    /// (a 66 MB remux wrote in 4,617 calls at one per packet; in 64 at this size).
    private static let writingBufferSize: Int32 = 1024 * 1024
    /// How many bytes are written between two starts of writeback.
    private static let writebackInterval: Int64 = 8 * 1024 * 1024

    /// The context, for `AVFormatContext.pb`.
    let context: UnsafeMutablePointer<AVIOContext>
    private let cursor: Cursor

    /// Creates a context that reads `file` from its start and can seek.
    ///
    /// - Throws: ``FFmpegError`` with code `openInput` when memory runs out.
    init(reading file: MediaFile) throws(FFmpegError) {
        let cursor = Cursor(file: file)
        self.context = try Self.makeContext(cursor: cursor, writable: false, code: .openInput)
        self.cursor = cursor
    }

    /// Creates a context that writes `file` from its start and can seek back (MP4 and Matroska update their headers
    /// at the end).
    ///
    /// - Throws: ``FFmpegError`` with code `writeOutput` when memory runs out.
    init(writing file: MediaFile) throws(FFmpegError) {
        let cursor = Cursor(file: file)
        self.context = try Self.makeContext(cursor: cursor, writable: true, code: .writeOutput)
        self.cursor = cursor
    }

    deinit {
        var context: UnsafeMutablePointer<AVIOContext>? = self.context
        // libavformat may have replaced the buffer it was given, so free the one the context holds now.
        av_freep(&self.context.pointee.buffer)
        avio_context_free(&context)
    }

    /// Writes out whatever is still buffered. The corresponding C function is `avio_flush`.
    ///
    /// - Throws: ``FFmpegError`` with code `writeOutput` when a write failed, now or earlier.
    func flush() throws(FFmpegError) {
        avio_flush(self.context)
        try FFmpegError.check(self.context.pointee.error, .writeOutput, "avio_flush")
    }

    private static func makeContext(
        cursor: Cursor,
        writable: Bool,
        code: FFmpegError.Code
    ) throws(FFmpegError) -> UnsafeMutablePointer<AVIOContext> {
        let size = writable ? Self.writingBufferSize : Self.readingBufferSize
        guard let buffer = av_malloc(Int(size)) else {
            throw FFmpegError(code, "av_malloc", status: chute_averror(ENOMEM))
        }
        let opaque = Unmanaged.passUnretained(cursor).toOpaque()
        let context = avio_alloc_context(
            buffer.assumingMemoryBound(to: UInt8.self),
            size,
            writable ? 1 : 0,
            opaque,
            writable ? nil : Self.read,
            writable ? Self.write : nil,
            Self.seek
        )
        guard let context else {
            av_free(buffer)
            throw FFmpegError(code, "avio_alloc_context", status: chute_averror(ENOMEM))
        }
        return context
    }

    /// Reads at the cursor; `AVERROR_EOF` at the end.
    private static let read: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = {
        opaque,
        buffer,
        size in
        let cursor = Unmanaged<Cursor>.fromOpaque(opaque!).takeUnretainedValue()
        let count: Int
        do throws(SystemCallError) {
            count = try SystemCall.check("pread") {
                pread(cursor.file.descriptor, buffer, Int(size), off_t(cursor.position))
            }
        } catch {
            return chute_averror(error.cause.rawValue)
        }
        guard count > 0 else { return chute_averror_eof() }
        cursor.position += Int64(count)
        return Int32(count)
    }

    /// Writes all of `buffer` at the cursor.
    private static let write: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 =
        {
            opaque,
            buffer,
            size in
            let cursor = Unmanaged<Cursor>.fromOpaque(opaque!).takeUnretainedValue()
            guard let buffer else { return 0 }
            var written = 0
            while written < Int(size) {
                let count: Int
                do throws(SystemCallError) {
                    count = try SystemCall.check("pwrite") {
                        pwrite(cursor.file.descriptor, buffer + written, Int(size) - written, off_t(cursor.position))
                    }
                } catch {
                    return chute_averror(error.cause.rawValue)
                }
                written += count
                cursor.position += Int64(count)
            }
            cursor.sinceWriteback += Int64(size)
            if cursor.sinceWriteback >= Self.writebackInterval {
                // A hint: where it fails, the fsync at the end writes everything and reports what went wrong.
                _ = chute_start_writeback(cursor.file.descriptor)
                cursor.sinceWriteback = 0
            }
            return size
        }

    /// Moves the cursor, or answers the file's size for `AVSEEK_SIZE`.
    private static let seek: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64 = {
        opaque,
        offset,
        whence in
        let cursor = Unmanaged<Cursor>.fromOpaque(opaque!).takeUnretainedValue()
        guard let size = cursor.file.currentSize else { return Int64(chute_averror(errno)) }
        let target: Int64
        switch whence & ~AVSEEK_FORCE {
        case AVSEEK_SIZE: return size
        case SEEK_SET: target = offset
        case SEEK_CUR: target = cursor.position + offset
        case SEEK_END: target = size + offset
        default: return Int64(chute_averror(EINVAL))
        }
        guard target >= 0 else { return Int64(chute_averror(EINVAL)) }
        cursor.position = target
        return target
    }
}
