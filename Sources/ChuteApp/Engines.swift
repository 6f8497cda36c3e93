import ChuteCore
import ChuteMagick

/// The engines built into this `chute`.
package enum Engines {
    /// Makes the engine for a lane, or `nil` when this build has none for it.
    ///
    /// - Parameter threadsPerJob: library threads per conversion; workers run one job each and several workers run
    ///   side by side, so the daemon passes 1.
    package static func make(_ kind: EngineKind, threadsPerJob: Int) -> (any ConversionEngine)? {
        switch kind {
        case .image: return ImageEngine(threadsPerJob: threadsPerJob)
        case .video, .audio: return nil
        }
    }

    /// Whether this build can convert to `format`.
    package static func available(for format: TargetFormat) -> Bool {
        format.engine == .image
    }
}
