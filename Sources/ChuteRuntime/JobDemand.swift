import ChuteCore

/// What a job is expected to take, estimated before it starts from what is cheap to know: the engine, the file's
/// size and its headers (``MediaHeader``), never a decoded byte.
///
/// The numbers are rough on purpose: the cost only orders the queue (cheap jobs first), and the memory only keeps
/// jobs that would not fit together from running at once. The model, measured on the development machine, is in
/// docs/decisions.md ("The scheduler").
package struct JobDemand: Sendable, Equatable {
    /// The estimated work, in seconds of one core.
    package var cost: Double
    /// The cores it occupies while it runs: the threads its library is given (``SchedulerBudget/threads``).
    package var cpu: Int
    /// The estimated peak memory of its worker process, in bytes.
    package var memory: Int64

    package init(cost: Double, cpu: Int, memory: Int64) {
        self.cost = cost
        self.cpu = cpu
        self.memory = memory
    }

    /// A worker with its libraries loaded, before it holds any picture.
    static let workerBase: Int64 = 64 << 20
    /// ImageMagick's Q16 build holds 4 channels of 16 bits per pixel.
    static let bytesPerPixel: Int64 = 8
    /// Copies of the picture held at once: the decoded one and the one an operation or the encoder makes from it.
    static let pictureCopies: Int64 = 2
    /// Frames an encoder holds beside the ones its threads work on: x264's 16 reference frames and its look-ahead of
    /// 40 (the `medium` preset's).
    static let heldFrames: Int64 = 56
    /// The frame size assumed for a video whose headers were not read: 1080p.
    static let assumedFrame = (width: 1920, height: 1080)
    /// The frame rate assumed for a video's cost (headers give the duration, not the rate, cheaply).
    static let assumedFrameRate = 30.0
    /// Seconds of one core per pixel decoded and encoded: a 1.5 MP JPEG to WebP takes about 0.15 s.
    static let imageSecondsPerPixel = 1e-7
    /// Seconds of one core per pixel of video transcoded with x264 (`medium`): 1080p at about 20 frames a second.
    static let videoSecondsPerPixel = 2.5e-8
    /// Seconds of one core per second of sound transcoded.
    static let audioSecondsPerSecond = 0.02
    /// What a start costs whatever the file: a request to the worker, opening the file, writing the output.
    static let startCost = 0.01
    /// Pixels per byte assumed for a picture whose headers were not read: a compressed photo holds about a quarter of
    /// a byte per pixel, so this errs on the large side.
    static let pixelsPerByte: Int64 = 4
    /// Bytes per second assumed for a video whose duration was not read (8 Mbit/s), and for sound (128 kbit/s).
    static let videoBytesPerSecond = 1_000_000.0
    static let audioBytesPerSecond = 16_000.0
    /// What LibreOffice holds in a document worker beside the document: its libraries and caches, about 300 MB.
    static let officeBase: Int64 = 320 << 20
    /// Seconds of one core per byte of a document or a PDF: a 100 KB document takes LibreOffice about 0.3 s once
    /// loaded, qpdf rewrites a PDF at tens of megabytes a second.
    static let documentSecondsPerByte = 3e-6
    static let pdfSecondsPerByte = 5e-8
    /// Copies of a PDF a worker holds: the file, qpdf's objects parsed from it, and the output written to memory.
    static let pdfCopies: Int64 = 4

    /// The demand of a job on a file of `size` bytes whose headers say `header`, by the category of its content.
    ///
    /// - Parameters:
    ///   - category: the sniffed content's; pictures follow the picture model, video the video model, documents
    ///     and PDFs their size (LibreOffice's own memory added for documents),
    ///     sound and content that was not recognised the sound model.
    ///   - threads: the threads the engine's library gets per job, which is also the cores the job occupies.
    package static func estimate(
        category: MediaCategory?,
        size: Int64,
        header: MediaHeader,
        threads: Int
    ) -> JobDemand {
        let size = max(0, size)
        switch category {
        case .image:
            let pixels = header.pixels.map(Int64.init) ?? size.multipliedReportingOverflow(by: Self.pixelsPerByte).0
            let pixelBytes = Self.saturating(pixels, Self.bytesPerPixel * Self.pictureCopies)
            return JobDemand(
                cost: Self.startCost + Double(pixels) * Self.imageSecondsPerPixel,
                cpu: threads,
                memory: Self.workerBase.addingReportingOverflow(pixelBytes).overflow
                    ? .max : Self.workerBase + pixelBytes
            )
        case .video:
            let width = header.width ?? Self.assumedFrame.width
            let height = header.height ?? Self.assumedFrame.height
            let frame = Int64(width) * Int64(height) * 3 / 2
            let duration = header.duration ?? Double(size) / Self.videoBytesPerSecond
            let frames = Self.heldFrames + Int64(threads)
            let pixelsPerSecond = Double(width) * Double(height) * Self.assumedFrameRate
            return JobDemand(
                cost: Self.startCost + duration * pixelsPerSecond * Self.videoSecondsPerPixel,
                cpu: threads,
                memory: Self.workerBase + Self.saturating(frame, frames)
            )
        case .document:
            return JobDemand(
                cost: Self.startCost + Double(size) * Self.documentSecondsPerByte,
                cpu: threads,
                memory: Self.workerBase + Self.officeBase + Self.saturating(size, Self.pdfCopies)
            )
        case .pdf:
            return JobDemand(
                cost: Self.startCost + Double(size) * Self.pdfSecondsPerByte,
                cpu: threads,
                memory: Self.workerBase + Self.saturating(size, Self.pdfCopies)
            )
        case .audio, nil:
            // A duration from the headers or from the size.
            let duration = header.duration ?? Double(size) / Self.audioBytesPerSecond
            return JobDemand(
                cost: Self.startCost + duration * Self.audioSecondsPerSecond,
                cpu: threads,
                memory: Self.workerBase
            )
        }
    }

    private static func saturating(_ value: Int64, _ factor: Int64) -> Int64 {
        let (product, overflow) = value.multipliedReportingOverflow(by: factor)
        return overflow ? .max : product
    }
}

/// The machine's share that jobs may use at once: cores and memory, and how long cheaper jobs may pass a queued one.
package struct SchedulerBudget: Sendable, Equatable {
    /// Cores (`settings.cpuBudget`): the sum of the running jobs' ``JobDemand/cpu`` stays within it.
    package var cpu: Int
    /// Bytes (`settings.memoryBudget`): the sum of the running jobs' ``JobDemand/memory`` stays within it.
    package var memory: Int64
    /// The threads each engine's library gets per job, which are also the cores a job of that engine occupies;
    /// engines left out get 1.
    package var threads: [EngineKind: Int]
    /// How long a queued job may be passed by cheaper ones (`settings.agingLimit`); after that, no job queued after
    /// it starts before it.
    package var agingLimit: Duration
    /// The engines whose libraries keep busy every core they are given for the whole of a long job (the video
    /// encoders): a job of theirs gets for its threads every core that other such jobs do not hold.
    package var multiThreaded: Set<EngineKind>

    package init(
        cpu: Int,
        memory: Int64,
        threads: [EngineKind: Int],
        agingLimit: Duration,
        multiThreaded: Set<EngineKind> = []
    ) {
        self.cpu = cpu
        self.memory = memory
        self.threads = threads
        self.agingLimit = agingLimit
        self.multiThreaded = multiThreaded
    }

    /// No limit but the lanes' and the rules' own: every job fits, and cheaper jobs may always go first.
    package static let unlimited = SchedulerBudget(cpu: .max, memory: .max, threads: [:], agingLimit: .seconds(3600))

    /// The threads of one job of `engine`.
    package func threads(_ engine: EngineKind) -> Int { self.threads[engine] ?? 1 }
}
