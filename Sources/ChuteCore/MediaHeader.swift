/// What a file's headers say about its size as media, read with a few small reads and no decoder: a picture's width
/// and height, a video's frame size and duration, a sound's duration.
///
/// The scheduler estimates a job's cost and memory from it before the job starts (the supervisor never links a media
/// library). Types without a cheap parse here, and headers that do not parse, leave the fields `nil`; the estimate
/// then goes by the file's size.
package struct MediaHeader: Sendable, Equatable {
    /// The picture's or the largest video track's width, in pixels.
    package var width: Int?
    /// The picture's or the largest video track's height, in pixels.
    package var height: Int?
    /// The duration in seconds, for video and sound.
    package var duration: Double?

    package init(width: Int? = nil, height: Int? = nil, duration: Double? = nil) {
        self.width = width
        self.height = height
        self.duration = duration
    }

    /// Width times height, when both are known.
    package var pixels: Int? {
        guard let width = self.width, let height = self.height else { return nil }
        // A PNG header can declare 2^32 - 1 by 2^32 - 1.
        let (product, overflow) = width.multipliedReportingOverflow(by: height)
        return overflow ? .max : product
    }

    /// The most bytes of JPEG segments walked to find the frame header (EXIF and ICC segments come first).
    static let jpegSearchLength: Int64 = 1 << 20
    /// The most boxes walked in an ISO media file before giving up.
    static let maximumBoxes = 10_000

    /// Reads the headers of a file of `type`.
    ///
    /// - Parameters:
    ///   - size: the file's size in bytes.
    ///   - read: reads up to `count` bytes at `offset` (fewer at the end of the file), or `nil` when reading fails.
    package static func read(_ type: MediaType, size: Int64, read: (_ offset: Int64, _ count: Int) -> [UInt8]?) -> Self
    {
        switch type {
        case .png:
            // The IHDR chunk comes first: width and height at bytes 16 and 20.
            guard let bytes = read(12, 12), bytes.count == 12, bytes[0..<4].elementsEqual("IHDR".utf8) else {
                return Self()
            }
            return Self(width: Self.bigEndian(bytes[4..<8]), height: Self.bigEndian(bytes[8..<12]))
        case .gif:
            guard let bytes = read(6, 4), bytes.count == 4 else { return Self() }
            return Self(width: Self.littleEndian(bytes[0..<2]), height: Self.littleEndian(bytes[2..<4]))
        case .webp:
            return Self.webp(read(12, 18))
        case .jpeg:
            return Self.jpeg(size: size, read: read)
        case .mp4, .quicktime:
            return Self.isoMedia(size: size, read: read)
        case .wav:
            return Self.wav(size: size, read: read)
        default:
            return Self()
        }
    }

    /// WebP's three kinds of first chunk: lossy `VP8 `, lossless `VP8L`, extended `VP8X` (the canvas).
    private static func webp(_ chunk: [UInt8]?) -> Self {
        guard let chunk, chunk.count == 18 else { return Self() }
        let name = String(decoding: chunk[0..<4], as: UTF8.self)
        let data = Array(chunk[8...])
        switch name {
        case "VP8X":
            return Self(width: Self.littleEndian(data[4..<7]) + 1, height: Self.littleEndian(data[7..<10]) + 1)
        case "VP8L":
            // A signature byte, then 14 bits of width - 1 and 14 bits of height - 1.
            let bits = Self.littleEndian(data[1..<5])
            return Self(width: bits & 0x3FFF + 1, height: (bits >> 14) & 0x3FFF + 1)
        case "VP8 ":
            // A 3-byte frame tag and a 3-byte start code, then 14 bits of width and of height.
            return Self(
                width: Self.littleEndian(data[6..<8]) & 0x3FFF,
                height: Self.littleEndian(data[8..<10]) & 0x3FFF
            )
        default:
            return Self()
        }
    }

    /// Walks a JPEG's segments to its start-of-frame marker.
    private static func jpeg(size: Int64, read: (Int64, Int) -> [UInt8]?) -> Self {
        var offset: Int64 = 2
        while offset < min(size, Self.jpegSearchLength) {
            guard let header = read(offset, 9), header.count == 9, header[0] == 0xFF else { return Self() }
            let marker = header[1]
            // SOF0 to SOF15, but DHT (C4), JPG (C8) and DAC (CC), which share the range.
            if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
                return Self(width: Self.bigEndian(header[7..<9]), height: Self.bigEndian(header[5..<7]))
            }
            offset += 2 + Int64(Self.bigEndian(header[2..<4]))
        }
        return Self()
    }

    /// Reads `mvhd` for the duration and each track's `tkhd` for its size, in the `moov` box wherever it lies.
    private static func isoMedia(size: Int64, read: (Int64, Int) -> [UInt8]?) -> Self {
        var result = Self()
        var boxes = 0
        // Walks the boxes from `start` to `end`, descending into `moov` and `trak`.
        func walk(_ start: Int64, _ end: Int64) {
            var offset = start
            while offset + 8 <= end, boxes < Self.maximumBoxes {
                boxes += 1
                guard let header = read(offset, 16), header.count >= 8 else { return }
                var length = Int64(Self.bigEndian(header[0..<4]))
                var body = offset + 8
                if length == 1, header.count == 16 {
                    length = Int64(Self.bigEndian(header[8..<16]))
                    body = offset + 16
                } else if length == 0 {
                    length = end - offset
                }
                guard length >= 8 else { return }
                switch String(decoding: header[4..<8], as: UTF8.self) {
                case "moov", "trak":
                    walk(body, min(end, offset + length))
                case "mvhd":
                    result.duration = Self.movieDuration(read(body, 32))
                case "tkhd":
                    if let (width, height) = Self.trackSize(read(body, 96)),
                        width * height > (result.pixels ?? 0)
                    {
                        (result.width, result.height) = (width, height)
                    }
                default:
                    break
                }
                offset += length
            }
        }
        walk(0, size)
        return result
    }

    /// An `mvhd` body: version 0 has 32-bit times, version 1 64-bit ones.
    private static func movieDuration(_ body: [UInt8]?) -> Double? {
        guard let body, body.count == 32 else { return nil }
        let (scale, duration) =
            body[0] == 1
            ? (Self.bigEndian(body[20..<24]), Self.bigEndian(body[24..<32]))
            : (Self.bigEndian(body[12..<16]), Self.bigEndian(body[16..<20]))
        guard scale > 0 else { return nil }
        return Double(duration) / Double(scale)
    }

    /// A `tkhd` body's width and height (16.16 fixed point, at its end); audio tracks have 0 there.
    private static func trackSize(_ body: [UInt8]?) -> (Int, Int)? {
        guard let body, body.count >= 84 else { return nil }
        let at = body[0] == 1 ? 88 : 76
        guard body.count >= at + 8 else { return nil }
        let (width, height) = (Self.bigEndian(body[at..<at + 4]) >> 16, Self.bigEndian(body[at + 4..<at + 8]) >> 16)
        return width > 0 && height > 0 ? (width, height) : nil
    }

    /// A WAV's duration: its data over the byte rate of its `fmt ` chunk.
    private static func wav(size: Int64, read: (Int64, Int) -> [UInt8]?) -> Self {
        guard let bytes = read(12, 24), bytes.count == 24, bytes[0..<4].elementsEqual("fmt ".utf8) else {
            return Self()
        }
        let rate = Self.littleEndian(bytes[16..<20])
        guard rate > 0 else { return Self() }
        return Self(duration: Double(max(0, size - 44)) / Double(rate))
    }

    private static func bigEndian(_ bytes: ArraySlice<UInt8>) -> Int {
        bytes.reduce(0) { $0 << 8 | Int($1) }
    }

    private static func littleEndian(_ bytes: ArraySlice<UInt8>) -> Int {
        bytes.reversed().reduce(0) { $0 << 8 | Int($1) }
    }
}
