import CFFmpeg
import Glibc

/// The process-wide FFmpeg set-up: the log routing and the AV1 encoder's verbosity, done once, and the libraries'
/// versions.
///
/// - Important: ``shared`` is the only caller of ``FFmpegLog/install()``. Swift runs a `static let` initialiser
///   exactly once, thread-safely, the first time it is read, so every path into FFmpeg (``MediaEngine``'s
///   conversion and its `libraries`) reads ``shared`` first.
struct FFmpegLibrary: Sendable {
    /// The set-up, done on first use.
    static let shared = FFmpegLibrary()

    /// Each library's version (`libavformat` → `59.27.100`) and the FFmpeg release (`FFmpeg` → `5.1.9-0+deb12u1`).
    let versions: [String: String]

    private init() {
        FFmpegLog.install()
        // SVT-AV1 prints its banner and settings straight to standard error, around FFmpeg's log, at info level:
        // some twenty lines per job that the supervisor would log as warnings. Its errors still come through. A
        // value set by the operator wins.
        setenv("SVT_LOG", "1", 0)
        func version(_ packed: UInt32) -> String {
            "\(packed >> 16).\(packed >> 8 & 0xFF).\(packed & 0xFF)"
        }
        self.versions = [
            "FFmpeg": String(cString: av_version_info()),
            "libavformat": version(avformat_version()),
            "libavcodec": version(avcodec_version()),
            "libavfilter": version(avfilter_version()),
            "libavutil": version(avutil_version()),
            "libswscale": version(swscale_version()),
            "libswresample": version(swresample_version()),
        ]
    }
}
