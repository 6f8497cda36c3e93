/// What one job may use, and how large its input may be.
///
/// `settings:` gives the defaults and each rule may set its own. The worker process applies ``memory``,
/// ``cpuTime`` and ``outputSize`` to itself as resource limits (`setrlimit`) for the length of the job; the engines
/// check ``pixels``, ``frames`` and ``duration`` against the input's headers before they decode anything; the
/// supervisor enforces ``timeout`` by killing the worker.
package struct JobLimits: Sendable, Codable, Equatable {
    /// `jobTimeout` (duration, default 30m): wall-clock time, after which the worker is killed.
    package var timeout: Duration = .seconds(30 * 60)
    /// `memoryLimit` (byte size, default 4GB): the worker's address space during the job (`RLIMIT_AS`); ImageMagick
    /// is also told to keep its pixel cache within it.
    package var memory: Int64? = 4 << 30
    /// `cpuTimeLimit` (duration, default none): CPU time the job may use (`RLIMIT_CPU`), counted on all threads.
    package var cpuTime: Duration?
    /// `maxOutputSize` (byte size, default none): the largest output file the job may write (`RLIMIT_FSIZE`).
    package var outputSize: Int64?
    /// `maxPixels` (count, default: the libraries' own ceilings): the most pixels one image or video frame may
    /// have, read from the headers.
    package var pixels: Int?
    /// `maxImageSide` (count, default ``defaultImageSide``): the most pixels an image may have across or down, read
    /// from the headers.
    package var imageSide: Int?
    /// `maxFrames` (count, default: 100 for images, none for video): the most frames or pages an input may have,
    /// from the headers (for video, the frame count or the duration times the frame rate).
    package var frames: Int?
    /// `maxDuration` (duration, default none): the longest audio or video input, from its headers.
    package var duration: Duration?

    package init() {}

    /// The least `memoryLimit` accepted: a worker with its libraries loaded already uses about 70 MB.
    package static let smallestMemory: Int64 = 100_000_000

    /// The widest and tallest image taken when `maxImageSide` is not set: Debian's ImageMagick policy's, which Chute
    /// applied alone before the key existed.
    package static let defaultImageSide = 16_000
    /// The most pixels of an image when `maxPixels` is not set: Debian's ImageMagick policy's `area` (128 MP).
    package static let defaultImagePixels = 128_000_000

    /// The rule keys and settings keys that set a limit.
    package static let keys = [
        "jobTimeout", "memoryLimit", "cpuTimeLimit", "maxOutputSize", "maxPixels", "maxImageSide", "maxFrames",
        "maxDuration",
    ]
}
