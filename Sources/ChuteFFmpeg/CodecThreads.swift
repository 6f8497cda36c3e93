import Synchronization

/// How many threads each FFmpeg decoder, encoder and filter graph of this process may use: 0 (the default) lets
/// FFmpeg choose, as many as the machine has cores, as the `ffmpeg` program does.
///
/// The daemon sizes it from its CPU budget, so that a video job uses the cores the budget gives it and no more: on two
/// cores, two jobs do not each start two threads per core (``MediaEngine/videoDescriptor``'s `make`).
///
/// - Important: process-wide, like FFmpeg's log callback. A worker process runs one engine, one job at a time, and
///   sets this once, when it makes its engine, before its first job; tests that convert in-process leave it at 0.
package enum CodecThreads {
    private static let count = Atomic<Int>(0)

    /// The threads each codec context and filter graph is opened with (`thread_count`, `nb_threads`).
    package static var perCodec: Int32 { Int32(clamping: Self.count.load(ordering: .relaxed)) }

    /// Sets the threads of every codec context and filter graph opened from now on; 0 lets FFmpeg choose.
    package static func set(_ count: Int) {
        Self.count.store(max(0, count), ordering: .relaxed)
    }
}
