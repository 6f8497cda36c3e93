import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Real files made at test time are whole; the same files cut short, as by a copy in progress, are not.
@Suite(.timeLimit(.minutes(3)))
struct CompletenessTests {
    /// Judges `data` as a file of its sniffed type.
    private func judge(_ data: Data) -> Completeness {
        guard let type = MediaType.sniff(data.prefix(MediaType.headerLength)) else { return .unknown }
        return Completeness.judge(type, size: Int64(data.count)) { offset, count in
            guard offset >= 0, offset <= Int64(data.count) else { return nil }
            let start = Int(offset)
            return Array(data[start..<min(data.count, start + count)])
        }
    }

    static let images = ["jpg", "png", "gif", "webp", "bmp", "heic"]
    static let media = ["wav", "mp4", "mov", "mkv", "webm"]
    /// Formats made with particular options: `name` (what the test reports) to file extension and arguments.
    static let variants: [String: (String, [String])] = [
        "tiff": ("tiff", ["-depth", "8"]),
        "tiff-lzw": ("tiff", ["-compress", "LZW"]),
        "tiff-tiled": ("tiff", ["-define", "tiff:tile-geometry=64x64"]),
        "bigtiff": ("tiff", ["-define", "tiff:format=big"]),
        "tga": ("tga", []),
        "tga-rle": ("tga", ["-compress", "RLE"]),
        "bmp-rle": ("bmp", ["-colors", "200", "-type", "Palette", "-compress", "RLE"]),
    ]
    static let audio: [String: [String]] = [
        "flac": ["-c:a", "flac"],
        "ogg": ["-c:a", "libvorbis"],
        "opus": ["-c:a", "libopus"],
        "mp3": ["-c:a", "libmp3lame"],
    ]

    /// Makes a whole file of the named sample format in `directory` and returns its bytes.
    private func makeSample(_ format: String, in directory: TemporaryDirectory) throws -> Data {
        var file = directory.appending("whole.\(format)")
        if Self.images.contains(format) {
            try Fixtures.makeImage(at: file, width: 160, height: 120)
        } else if let (suffix, arguments) = Self.variants[format] {
            file = directory.appending("whole.\(suffix)")
            try Fixtures.makeImage(at: file, width: 160, height: 120, extraArguments: arguments)
            if suffix == "bmp" {
                // An RLE BMP is only written as BMP3; make sure this is one.
                let header = try Data(contentsOf: URL(fileURLWithPath: file.string)).prefix(34)
                #expect(header[30] == 1, "\(format) is not RLE-compressed")
            }
        } else if format == "avif" {
            // heif-enc (libheif-examples) from an 8-bit PNG: 16-bit input takes a 4:4:4 path that aom rejects.
            let png = directory.appending("source.png")
            try Fixtures.makeImage(at: png, width: 160, height: 120, extraArguments: ["-depth", "8"])
            try CommandLineTool.run(["heif-enc", "--avif", "-o", file.string, png.string])
        } else if let codecs = Self.audio[format] {
            try MediaFixtures.makeClip(at: file, width: nil, seconds: 2, codecArguments: codecs)
        } else if format == "mkv-live" {
            // A segment of unknown size, as a live recorder leaves it: only its Cues can tell.
            file = directory.appending("whole.mkv")
            try MediaFixtures.makeClip(
                at: file,
                width: 160,
                height: 120,
                seconds: 1,
                codecArguments: MediaFixtures.h264AAC
            )
            var data = try Data(contentsOf: URL(fileURLWithPath: file.string))
            let segment = try #require(data.range(of: Data([0x18, 0x53, 0x80, 0x67]))).lowerBound
            try #require(data[segment + 4] == 0x01, "FFmpeg writes the segment size in 8 bytes")
            data.replaceSubrange(
                (segment + 4)..<(segment + 12),
                with: [0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
            )
            return data
        } else {
            let codecs: [String] =
                switch format {
                case "wav": ["-c:a", "pcm_s16le"]
                case "webm": ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-c:a", "libopus"]
                default: MediaFixtures.h264AAC
                }
            try MediaFixtures.makeClip(
                at: file,
                width: format == "wav" ? nil : 160,
                height: 120,
                seconds: 1,
                codecArguments: codecs
            )
        }
        return try Data(contentsOf: URL(fileURLWithPath: file.string))
    }

    @Test(
        arguments: images + media + variants.keys.sorted() + audio.keys.sorted() + ["avif", "mkv-live"]
    )
    func aWholeFileIsWholeAndACutOneIsNot(format: String) throws {
        let directory = try TemporaryDirectory(prefix: "complete")
        defer { directory.remove() }
        let data = try self.makeSample(format, in: directory)

        #expect(self.judge(data) == .whole, "\(format) whole")
        var verdicts: [String] = []
        for kept in [data.count / 10, data.count / 2, data.count * 9 / 10, data.count - 1] {
            let verdict = self.judge(data.prefix(kept))
            verdicts.append("\(kept): \(verdict)")
            guard case .incomplete = verdict else {
                Issue.record("\(format) cut to \(kept) of \(data.count) bytes was judged \(verdict)")
                continue
            }
        }
        print("completeness of \(format) (\(data.count) bytes) cut to \(verdicts.joined(separator: "; "))")
    }

    /// A GIF cut anywhere is incomplete, even where the last byte kept happens to be the trailer's value (0x3B): the
    /// check walks the blocks to the trailer. An animation with a local colour table per frame and comments.
    @Test func aGIFCutAtAnyByteIsIncomplete() throws {
        let directory = try TemporaryDirectory(prefix: "complete")
        defer { directory.remove() }
        let file = directory.appending("anim.gif")
        try CommandLineTool.run([
            "convert", "-size", "40x30", "-seed", "3", "plasma:fractal", "-seed", "4", "plasma:fractal",
            "-seed", "5", "plasma:fractal", "-set", "comment", "three frames", "-loop", "0", file.string,
        ])
        let data = try Data(contentsOf: URL(fileURLWithPath: file.string))
        #expect(self.judge(data) == .whole)
        let judgedWhole = (13..<data.count).filter { self.judge(data.prefix($0)) == .whole }
        let trailerValued = (13..<data.count).filter { data[data.startIndex + $0 - 1] == 0x3B }.count
        #expect(judgedWhole.isEmpty, "cuts judged whole: \(judgedWhole)")
        print("GIF of \(data.count) bytes: every cut incomplete; \(trailerValued) of them end with the byte 0x3B")
    }

    @Test func anMP4WhoseIndexIsNotWrittenYetIsIncomplete() throws {
        let directory = try TemporaryDirectory(prefix: "complete")
        defer { directory.remove() }
        let file = directory.appending("clip.mp4")
        try MediaFixtures.makeClip(at: file, seconds: 1, codecArguments: MediaFixtures.h264AAC)
        let data = try Data(contentsOf: URL(fileURLWithPath: file.string))
        // The CLI writes `moov` last: everything before it is a file whose writer has not finished.
        let moov = try #require(data.range(of: Data("moov".utf8))).lowerBound - 4

        #expect(self.judge(data.prefix(moov)) == .incomplete("the file has no 'moov' box yet"))
    }

    /// A motion photo, Google's or Samsung's, is whole with its appended video (its JPEG's end marker is not at the
    /// end of the file); cut anywhere, in its video or in its still, it is not.
    @Test(arguments: [MetadataFixtures.MotionPhotoLayout.google, .samsung])
    func aMotionPhotoIsWholeWithItsVideoAndACutOneIsNot(layout: MetadataFixtures.MotionPhotoLayout) throws {
        let directory = try TemporaryDirectory(prefix: "complete")
        defer { directory.remove() }
        let file = directory.appending("motion.jpg")
        let video = try MetadataFixtures.makeMotionPhoto(at: file, layout: layout)
        let data = try Data(contentsOf: URL(fileURLWithPath: file.string))

        #expect(self.judge(data) == .whole)
        let cuts = [data.count - 1, data.count - video / 2, data.count - video - 40, data.count / 3, 4000]
        let judgedWhole = cuts.filter { self.judge(data.prefix($0)) == .whole }
        #expect(judgedWhole.isEmpty, "cuts judged whole: \(judgedWhole) of \(data.count) bytes")
    }

    @Test func aDamagedBoxTypeIsNamedInHex() throws {
        // An `ftyp` box, then a box whose type is four NUL bytes and whose size runs past the end (as in the corpus's
        // heic_corrupted.heic): the message must not carry control characters into the log and the sidecar.
        var data = Data([0, 0, 0, 16]) + Data("ftypisom".utf8) + Data([0, 0, 2, 0])
        data += Data([0, 0, 1, 0, 0, 0, 0, 0]) + Data(repeating: 7, count: 32)
        #expect(self.judge(data) == .incomplete("the '0x00000000' box at byte 16 runs past the end of the file"))
    }

    /// Cuts that fall exactly between two units of a format (pages, frames, boxes) leave a file that looks tidy at its
    /// end; the checks must still find it short.
    @Test func cutsBetweenPagesFramesAndBoxesAreIncomplete() throws {
        let directory = try TemporaryDirectory(prefix: "complete")
        defer { directory.remove() }
        let song = directory.appending("song.ogg")
        try MediaFixtures.makeClip(at: song, width: nil, seconds: 2, codecArguments: ["-c:a", "libvorbis"])
        let ogg = try Data(contentsOf: URL(fileURLWithPath: song.string))
        let lastPage = try #require(ogg.range(of: Data("OggS".utf8), options: .backwards)).lowerBound
        #expect(self.judge(ogg.prefix(lastPage)) == .incomplete("the last Ogg page does not end its stream"))

        let flacFile = directory.appending("song.flac")
        try MediaFixtures.makeClip(at: flacFile, width: nil, seconds: 2, codecArguments: ["-c:a", "flac"])
        let flac = try Data(contentsOf: URL(fileURLWithPath: flacFile.string))
        // The last FF F8: where the last frame starts (a fixed-block frame header), or by chance a cut inside it.
        let lastFrame = try #require(flac.range(of: Data([0xFF, 0xF8]), options: .backwards)).lowerBound
        guard case .incomplete = self.judge(flac.prefix(lastFrame)) else {
            Issue.record("a FLAC without its last frame was judged \(self.judge(flac.prefix(lastFrame)))")
            return
        }

        // A HEIC cut right after its `meta` box: the boxes end with the file, the coded image is missing.
        let photo = directory.appending("photo.heic")
        try Fixtures.makeImage(at: photo, width: 160, height: 120)
        let heic = try Data(contentsOf: URL(fileURLWithPath: photo.string))
        let mediaData = try #require(heic.range(of: Data("mdat".utf8))).lowerBound - 4
        #expect(
            self.judge(heic.prefix(mediaData))
                == .incomplete("an image item's data ends beyond the end of the file (\(mediaData) bytes)")
        )
    }

    @Test func tagsAfterTheLastFLACFrameAreNotTakenForACut() throws {
        let directory = try TemporaryDirectory(prefix: "complete")
        defer { directory.remove() }
        let file = directory.appending("song.flac")
        try MediaFixtures.makeClip(at: file, width: nil, seconds: 2, codecArguments: ["-c:a", "flac"])
        let flac = try Data(contentsOf: URL(fileURLWithPath: file.string))
        // An ID3v1 tag (128 bytes), and an APEv2 tag with a header, one item and its footer.
        let id3 = Data("TAG".utf8) + Data(repeating: 0x20, count: 125)
        func ape(flags: UInt32) -> Data {
            // Version 2000, size of the items and footer, one item, flags, 8 reserved bytes.
            let fields: [UInt32] = [2000, 17 + 32, 1, flags, 0, 0]
            return Data("APETAGEX".utf8)
                + Data(fields.flatMap { value in (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } })
        }
        // Value length 4, flags 0, key "Year", NUL, value "2026": 17 bytes.
        let item = Data([4, 0, 0, 0, 0, 0, 0, 0]) + Data("Year".utf8) + Data([0]) + Data("2026".utf8)
        let apeTag = ape(flags: 0xA000_0000) + item + ape(flags: 0x8000_0000)

        #expect(self.judge(flac + id3) == .whole)
        #expect(self.judge(flac + apeTag) == .whole)
        #expect(self.judge(flac + apeTag + id3) == .whole)
        guard case .incomplete = self.judge(flac.prefix(flac.count - 100) + apeTag + id3) else {
            Issue.record("a FLAC cut short before its tags was not judged incomplete")
            return
        }
    }

    @Test func typesWithoutAStructuralEndAreUnknown() throws {
        let directory = try TemporaryDirectory(prefix: "complete")
        defer { directory.remove() }
        // An MP3 without a Xing or Info header declares no length; an MPEG-TS never does.
        let song = directory.appending("song.mp3")
        try MediaFixtures.makeClip(
            at: song,
            width: nil,
            seconds: 1,
            codecArguments: ["-c:a", "libmp3lame", "-write_xing", "0"]
        )
        let clip = directory.appending("clip.ts")
        try MediaFixtures.makeClip(at: clip, seconds: 1, codecArguments: MediaFixtures.h264AAC)

        for file in [song, clip] {
            let data = try Data(contentsOf: URL(fileURLWithPath: file.string))
            #expect(self.judge(data) == .unknown, "\(file)")
            #expect(self.judge(data.prefix(data.count / 2)) == .unknown, "\(file)")
        }
    }

    /// A camera RAW file that is TIFF inside is judged by its strips: whole as written, incomplete when cut.
    @Test func aDNGCutInItsRawDataIsIncomplete() {
        let dng = DNGFixture.make(width: 64, height: 48) { _, _ in (0.5, 0.5, 0.5) }
        #expect(self.judge(Data(dng)) == .whole)
        guard case .incomplete = self.judge(Data(dng.prefix(dng.count - 100))) else {
            Issue.record("a cut DNG: \(self.judge(Data(dng.prefix(dng.count - 100))))")
            return
        }
    }

    /// Every image, video and audio file of the shared corpus that must convert is judged whole or unknown, never
    /// incomplete: the checks must not hold back real files made by others.
    @Test(.enabled(if: Corpus.isPresent, "the shared corpus (../shared/corpus) is absent"))
    func noValidCorpusFileIsJudgedIncomplete() throws {
        var counts: [String: Int] = [:]
        for row in try Corpus.rows() where row.expect == "ok" && !row.path.hasPrefix("broken/") {
            let data = try Data(contentsOf: URL(fileURLWithPath: Corpus.folder.appending(row.path).string))
            let verdict = self.judge(data)
            switch verdict {
            case .whole: counts["whole", default: 0] += 1
            case .unknown: counts["unknown", default: 0] += 1
            case .incomplete(let reason): Issue.record("\(row.path) judged incomplete: \(reason)")
            }
        }
        print("completeness over the corpus: \(counts["whole"] ?? 0) whole, \(counts["unknown"] ?? 0) unknown")
        #expect((counts["whole"] ?? 0) > 50)
    }
}

/// Hostile structures: loops, offsets beyond the end, absurd counts. Each is judged at once, without a crash and
/// without reading more than the file holds.
@Suite(.timeLimit(.minutes(1)))
struct HostileCompletenessTests {
    private func judge(_ bytes: [UInt8]) -> Completeness {
        guard let type = MediaType.sniff(bytes.prefix(MediaType.headerLength)) else { return .unknown }
        return Completeness.judge(type, size: Int64(bytes.count)) { offset, count in
            // The checks never ask for a negative offset, or for more than a few megabytes at once.
            precondition(offset >= 0 && count >= 0 && count <= 16 << 20, "read(\(offset), \(count))")
            guard offset <= Int64(bytes.count) else { return nil }
            let start = Int(offset)
            return Array(bytes[start..<min(bytes.count, start + count)])
        }
    }

    private static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    private static func le32(_ value: UInt32) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }

    /// A little-endian classic TIFF whose first IFD is at `first`, followed by `body` (from byte 8).
    private static func tiff(first: UInt32, _ body: [UInt8]) -> [UInt8] {
        [0x49, 0x49, 0x2A, 0x00] + Self.le32(first) + body
    }

    /// One IFD: its entries (tag, type, count, value or offset) and the offset of the next.
    private static func ifd(_ entries: [(UInt16, UInt16, UInt32, UInt32)], next: UInt32) -> [UInt8] {
        Self.le16(UInt16(entries.count))
            + entries.flatMap { Self.le16($0.0) + Self.le16($0.1) + Self.le32($0.2) + Self.le32($0.3) }
            + Self.le32(next)
    }

    private static func be32(_ value: UInt32) -> [UInt8] { Self.le32(value).reversed() }

    /// A box: its size, its four-character name and its content.
    private static func box(_ name: String, _ content: [UInt8]) -> [UInt8] {
        Self.be32(UInt32(8 + content.count)) + Array(name.utf8) + content
    }

    /// iloc version 2 with offset, length, base offset and index sizes all 0: each of 100,000 items claims 65,535
    /// extents of no bytes at all, six billion turns of the check's loop for 1 MB of file, which held a thread for
    /// minutes at every quiet period. Such an `iloc` is not read, and the boxes, which fit, make the file whole.
    @Test(.timeLimit(.minutes(1))) func aHEIFWhoseItemLocationsTakeNoBytesIsJudgedAtOnce() {
        let item: [UInt8] = [0, 0, 0, 1, 0, 0, 0, 0, 0xFF, 0xFF]
        let count: UInt32 = 100_000
        let header: [UInt8] = [2, 0, 0, 0, 0x00, 0x00] + Self.be32(count)
        let iloc = Self.box("iloc", header + Array(repeatElement(item, count: Int(count)).joined()))
        let heif =
            Self.box("ftyp", Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8))
            + Self.box("meta", [0, 0, 0, 0] + iloc)
        #expect(self.judge(heif) == .whole)
    }

    @Test func aTIFFWhoseIFDChainLoopsIsUnknown() {
        // IFD at 8 points to itself; a second file has two IFDs pointing at each other.
        #expect(self.judge(Self.tiff(first: 8, Self.ifd([], next: 8))) == .unknown)
        let pair = Self.tiff(first: 8, Self.ifd([], next: 14) + Self.ifd([], next: 8))
        #expect(self.judge(pair) == .unknown)
    }

    @Test func aTIFFPointingBeyondItsEndIsIncomplete() {
        let beyond = Self.tiff(first: 0xFFFF_FFF0, [UInt8](repeating: 0, count: 64))
        #expect(
            self.judge(beyond) == .incomplete("the IFD at byte 4294967280 is beyond the end of the file (72 bytes)")
        )
        // A strip far beyond the end; then an ICC profile (tag 34675) longer than the file.
        let strip = Self.tiff(first: 8, Self.ifd([(273, 4, 1, 0x8000_0000), (279, 4, 1, 100)], next: 0))
        #expect(self.judge(strip) == .incomplete("strip or tile 0 ends beyond the end of the file (38 bytes)"))
        let profile = Self.tiff(first: 8, Self.ifd([(34675, 7, 0xFFFF_FFFF, 8)], next: 0))
        #expect(
            self.judge(profile) == .incomplete("the value of TIFF tag 34675 ends beyond the end of the file (26 bytes)")
        )
    }

    @Test func aTIFFWithHugeCountsIsJudgedWithoutReadingThem() {
        // 65,535 entries declared, none there.
        let entries = Self.tiff(first: 8, Self.le16(0xFFFF) + [UInt8](repeating: 0, count: 32))
        #expect(self.judge(entries) == .incomplete("the IFD at byte 8 runs past the end of the file (42 bytes)"))
        // 2^32-1 strips whose offsets are said to be at byte 8: the array cannot be in the file.
        let strips = Self.tiff(first: 8, Self.ifd([(273, 4, 0xFFFF_FFFF, 8), (279, 4, 0xFFFF_FFFF, 8)], next: 0))
        guard case .incomplete = self.judge(strips) else {
            Issue.record("4 billion strips in a 38-byte file were judged \(self.judge(strips))")
            return
        }
        // A BigTIFF whose first IFD declares 2^63 entries.
        let big: [UInt8] =
            [0x49, 0x49, 0x2B, 0x00, 0x08, 0x00, 0x00, 0x00] + [16, 0, 0, 0, 0, 0, 0, 0]
            + [0, 0, 0, 0, 0, 0, 0, 0x80] + [UInt8](repeating: 0, count: 32)
        #expect(self.judge(big) == .incomplete("the IFD at byte 16 runs past the end of the file (56 bytes)"))
    }

    @Test func otherFormatsWithAbsurdHeadersAreJudgedAtOnce() {
        // A TGA (RLE) claiming 65535 x 65535 pixels in 64 bytes of one-pixel runs.
        let tga: [UInt8] =
            [0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 24, 0]
            + [UInt8](repeating: 0x80, count: 64)
        guard case .incomplete = self.judge(tga) else {
            Issue.record("TGA: \(self.judge(tga))")
            return
        }
        // A BMP whose width times height overflows.
        let bmp: [UInt8] =
            Array("BM".utf8) + Self.le32(0) + Self.le32(0) + Self.le32(54) + Self.le32(40)
            + Self.le32(0x7FFF_FFFF) + Self.le32(0x7FFF_FFFF) + Self.le16(1) + Self.le16(32)
            + [UInt8](repeating: 0, count: 24)
        #expect(self.judge(bmp) == .unknown)
        // A FLAC whose first metadata block claims 16 MB.
        let flac: [UInt8] = Array("fLaC".utf8) + [0x80, 0xFF, 0xFF, 0xFF] + [UInt8](repeating: 0, count: 64)
        #expect(self.judge(flac) == .incomplete("a FLAC metadata block runs past the end of the file (72 bytes)"))
        // An Ogg file that is nothing but page signatures, each claiming to be the last page.
        let ogg = [UInt8]((0..<20000).flatMap { _ in Array("OggS".utf8) })
        #expect(self.judge(ogg) != .whole)
        // A Matroska segment of unknown size whose SeekHead puts the Cues 256 KiB in, far beyond its end.
        let mkv: [UInt8] =
            [0x1A, 0x45, 0xDF, 0xA3, 0x80]  // an empty EBML header
            + [0x18, 0x53, 0x80, 0x67, 0xFF]  // Segment, unknown size
            + [0x11, 0x4D, 0x9B, 0x74, 0x91]  // SeekHead, 17 bytes
            + [0x4D, 0xBB, 0x8E]  // Seek, 14 bytes
            + [0x53, 0xAB, 0x84, 0x1C, 0x53, 0xBB, 0x6B]  // SeekID: Cues
            + [0x53, 0xAC, 0x84, 0x00, 0x04, 0x00, 0x00]  // SeekPosition: 262,144
        guard case .incomplete = self.judge(mkv) else {
            Issue.record("MKV: \(self.judge(mkv))")
            return
        }
    }
}
