import ChuteCore
import ChuteFFmpeg
import ChuteMagick

/// The engines built into this `chute`.
package enum Engines {
    /// Every engine's formats and options. A new engine is one more descriptor here, and a case in ``make(_:threadsPerJob:)``.
    package static let registry = EngineRegistry([
        ImageEngine.descriptor, MediaEngine.videoDescriptor, MediaEngine.audioDescriptor,
    ])

    /// Makes the engine for a lane.
    ///
    /// - Parameter threadsPerJob: ImageMagick threads per conversion; workers run one job each and several workers run
    ///   side by side, so the daemon passes 1. The media engine lets FFmpeg's codecs pick their own thread counts, as
    ///   the `ffmpeg` CLI does: video lanes default to half the CPU count, which leaves the encoder's threads room.
    package static func make(_ kind: EngineKind, threadsPerJob: Int) -> any ConversionEngine {
        switch kind {
        case .image: return ImageEngine(threadsPerJob: threadsPerJob)
        case .video, .audio: return MediaEngine(kind: kind)
        }
    }
}
