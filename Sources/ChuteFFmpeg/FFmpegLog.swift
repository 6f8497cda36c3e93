import CFFmpeg
import ChuteCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Routes FFmpeg's log into the worker's standard error and keeps its warnings for the job's report.
///
/// Only warnings and errors pass, each distinct message once per job and at most ``messageLimit`` of them. Each line
/// is escaped (control characters, bidirectional overrides) and capped before it is written, since decoders quote
/// bytes from the input, and it is kept for ``takeMessages()``, which the engine calls once per job to put them in
/// the report's warnings.
///
/// - Important: `av_log_set_callback` and `av_log_set_level` set state for the whole process, and the callback runs
///   on whichever thread logs (FFmpeg's decoder and encoder threads included). ``install()`` is called exactly once,
///   by ``FFmpegLibrary/shared``; nothing else in Chute touches FFmpeg's log settings. The state behind the callback
///   is a `Mutex`, and a worker runs one job at a time, so the messages taken belong to that job.
enum FFmpegLog {
    /// The most messages kept (and written) between two calls of ``takeMessages()``; later ones are only counted.
    static let messageLimit = 20
    /// The longest message kept, in characters.
    static let messageLength = 300

    private struct State: ~Copyable {
        /// Each thread's message whose line has not ended yet: its text so far (source first) and its level.
        var pending: [pthread_t: (text: String, level: Int32)] = [:]
        /// Messages since the last ``takeMessages()``, in order, without repeats.
        var messages: [String] = []
        /// How many messages did not fit in ``messages``.
        var dropped = 0
        /// The last error-level message of each thread since its last ``takeLastError()``.
        var lastErrors: [pthread_t: String] = [:]
    }

    private static let state = Mutex(State())

    /// Installs the callback and sets the level to warnings. The corresponding C functions are
    /// `av_log_set_level` and `av_log_set_callback`.
    static func install() {
        av_log_set_level(AV_LOG_WARNING)
        // The callback cannot capture context, so it works on the static state. `va_list` only exists as the
        // parameter of a closure literal passed straight to C: Swift cannot spell this function type itself.
        av_log_set_callback { object, level, format, arguments in
            guard level <= AV_LOG_WARNING, let format, let arguments else { return }
            let text = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 1024) { buffer -> String in
                guard let start = buffer.baseAddress, vsnprintf(start, buffer.count, format, arguments) >= 0 else {
                    return ""
                }
                return String(cString: start)
            }
            FFmpegLog.receive(text, level: level, source: FFmpegLog.sourceName(of: object))
        }
    }

    /// The warnings and errors logged since the last call, oldest first; the list is then emptied, and so are the
    /// last errors kept for ``takeLastError()``.
    static func takeMessages() -> [String] {
        Self.state.withLock { state in
            state.lastErrors = [:]
            var messages = state.messages
            if state.dropped > 0 {
                messages.append("(\(state.dropped) more FFmpeg messages)")
            }
            state.messages = []
            state.dropped = 0
            return messages
        }
    }

    /// The last error logged on the calling thread since the last call, if any; it is then forgotten.
    ///
    /// Per thread, so that the error read right after a failed call is that call's, even when other conversions
    /// run in the same process (tests do); errors logged on a codec's own threads are not seen here.
    static func takeLastError() -> String? {
        let thread = pthread_self()
        return Self.state.withLock { state in
            state.lastErrors.removeValue(forKey: thread)
        }
    }

    /// The name of the component that logged (`h264`, `mov,mp4,m4a,3gp,3g2,mj2`), from its `AVClass`.
    private static func sourceName(of object: UnsafeMutableRawPointer?) -> String? {
        // Every object FFmpeg logs with starts with a pointer to its AVClass.
        guard let object, let logClass = object.load(as: UnsafePointer<AVClass>?.self),
            let itemName = logClass.pointee.item_name, let name = itemName(object)
        else {
            return nil
        }
        return String(cString: name)
    }

    /// Adds a piece of a message; a message is complete when its text ends with a newline.
    private static func receive(_ text: String, level: Int32, source: String?) {
        let thread = pthread_self()
        let complete: (String, Int32)? = Self.state.withLock { state in
            var pending = state.pending[thread] ?? (text: source.map { "[\($0)] " } ?? "", level: level)
            pending.text += text
            guard pending.text.hasSuffix("\n") else {
                state.pending[thread] = pending
                return nil
            }
            state.pending[thread] = nil
            // Escaped and capped, so that bytes quoted from an input can neither forge a log line nor reorder what a
            // terminal shows.
            let line = LogText.escaped(String(pending.text.dropLast()), limit: Self.messageLength)
            let lineLevel = pending.level
            if lineLevel <= AV_LOG_ERROR {
                state.lastErrors[thread] = line
            }
            if state.messages.contains(line) {
                return nil
            }
            guard state.messages.count < Self.messageLimit else {
                // A badly damaged file can make a decoder complain about every frame: count, do not flood the log.
                state.dropped += 1
                return nil
            }
            state.messages.append(line)
            return (line, lineLevel)
        }
        guard let (line, lineLevel) = complete else { return }
        let record = "ffmpeg \(lineLevel <= AV_LOG_ERROR ? "error" : "warning"): \(line)\n"
        var bytes = Array(record.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = try? SystemCall.check("write") {
                    write(STDERR_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
                }
                guard let written, written > 0 else { return }
                offset += written
            }
        }
    }
}
