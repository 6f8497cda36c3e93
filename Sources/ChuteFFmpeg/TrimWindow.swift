import CFFmpeg
import ChuteCatalog
import ChuteCore

/// The part of the input a rule keeps (`start`, `end`, `duration`), resolved against the file: where the output
/// really begins (the keyframe at or before `start` when the video is copied, `start` itself otherwise) and how long
/// it lasts.
///
/// Every timestamp of the input is shifted so that the start becomes 0; copied packets before it or from the end on
/// are left out, and re-encoded streams are cut by a `trim`/`atrim` filter to the frame (to the sample for audio).
struct TrimWindow {
    /// Where the output begins, in ``timeBase`` on the input's clock (its start time included).
    let startTicks: Int64
    let timeBase: AVRational
    /// Where the output begins, in seconds after the input's first timestamp.
    let startSeconds: Double
    /// How long the output lasts at most, in seconds; `nil` to the end of the input.
    let length: Double?
    /// Whether the reading starts with a seek: the rule's `start` is past the beginning.
    let seeks: Bool

    /// Resolves the rule's trim, or returns `nil` when it keeps the whole input.
    ///
    /// - Throws: ``FFmpegError`` with code `unsupportedStream` when `start` is past the input's end, `decode` when the
    ///   input cannot seek to the start.
    init?(options: ConversionOptions, plan: ConversionPlan, input: borrowing InputContainer) throws(FFmpegError) {
        guard let trim = MediaOptions.trim(in: options) else { return nil }
        if let declared = input.declaredDuration, trim.start >= declared {
            throw FFmpegError(
                .unsupportedStream,
                "start",
                detail: "the rule's start (\(OutputVerifier.seconds(trim.start))) is past the end of the input, which "
                    + "lasts \(OutputVerifier.seconds(declared))"
            )
        }
        let inputStart = input.startMicroseconds
        let microseconds = AVRational(num: 1, den: Int32(AV_TIME_BASE))
        var ticks = inputStart + Int64((trim.start * Double(AV_TIME_BASE)).rounded())
        var timeBase = microseconds
        if let video = plan.video, video.isCopy, trim.start > 0,
            let keyframe = try input.keyframe(atOrBefore: ticks, timeBase: timeBase, streamIndex: video.source.index)
        {
            // Copied packets start on a keyframe: the output begins there, with the keyframe's own timestamp.
            ticks = keyframe
            timeBase = input.stream(at: video.source.index).pointee.time_base
        }
        self.startTicks = ticks
        self.timeBase = timeBase
        let startSeconds = max(0, Double(ticks) * av_q2d(timeBase) - Double(inputStart) / Double(AV_TIME_BASE))
        self.startSeconds = startSeconds
        self.length = trim.end.map { max(0, $0 - startSeconds) }
        self.seeks = trim.start > 0
    }

    /// The filter that keeps a re-encoded stream's frames from the start (time 0 once shifted) to the end.
    func filter(isAudio: Bool) -> String {
        (isAudio ? "atrim" : "trim") + "=start=0" + (self.length.map { ":end=\($0)" } ?? "")
    }

    /// The seconds read past the end before the reading stops: reordered video and interleaving put packets that
    /// belong before the end a little after it in the file.
    static let readingMargin = 2.0
}
