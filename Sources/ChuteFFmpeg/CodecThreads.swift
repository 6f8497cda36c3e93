import Foundation
import Synchronization

/// How many cores the FFmpeg decoders, encoders and filter graphs of this process may keep busy: 0 (the default), or
/// as many as the machine has, lets FFmpeg choose, as the `ffmpeg` program does (and its output is then the CLI's
/// bit for bit: x264's output depends on its thread count).
///
/// The daemon sizes it from its CPU budget, so that a video job uses the cores the budget gives it and no more: on two
/// cores, two jobs do not each start two threads per core (``MediaEngine/init(kind:threadsPerJob:progressInterval:)``).
/// Fewer cores than the machine's give each library the threads its own choice would give on a machine of that many
/// cores: a frame-threaded decoder one more than the cores, an encoder one and a half times the cores (x264's rule:
/// its frame threads wait on each other), a filter graph the cores.
///
/// - Important: process-wide, like FFmpeg's log callback. A worker process runs one engine, one job at a time, and
///   sets this once, when it makes its engine, before its first job; tests that convert in-process leave it at 0.
package enum CodecThreads {
    private static let cores = Atomic<Int>(0)

    /// The cores set, or 0 when FFmpeg chooses (none set, or every core of the machine).
    package static var limit: Int {
        let cores = Self.cores.load(ordering: .relaxed)
        return cores >= ProcessInfo.processInfo.activeProcessorCount ? 0 : cores
    }

    /// A decoder's `thread_count`.
    package static var decoder: Int32 { Self.threads(Self.limit + 1) }

    /// An encoder's `thread_count`.
    package static var encoder: Int32 { Self.threads(Self.limit * 3 / 2) }

    /// A filter graph's `nb_threads`.
    package static var filter: Int32 { Self.threads(Self.limit) }

    /// Sets the cores of every codec context and filter graph opened from now on; 0 lets FFmpeg choose.
    package static func set(_ cores: Int) {
        Self.cores.store(max(0, cores), ordering: .relaxed)
    }

    /// `count` threads, at least one, or 0 (FFmpeg's choice) without a limit.
    private static func threads(_ count: Int) -> Int32 {
        Self.limit == 0 ? 0 : Int32(clamping: max(1, count))
    }
}
