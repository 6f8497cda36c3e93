import ChuteCore
import Testing

/// `bytes` followed by zeros up to 64 bytes, the least a sniff needs to see everything it checks.
private func header(_ bytes: [UInt8]) -> [UInt8] {
    bytes + [UInt8](repeating: 0, count: max(0, 64 - bytes.count))
}

/// An ISO base media file (MP4, HEIF, QuickTime) starting with an `ftyp` box of the given major brand.
private func isoHeader(brand: String) -> [UInt8] {
    header([0x00, 0x00, 0x00, 0x18] + Array("ftyp".utf8) + Array(brand.utf8) + [0x00, 0x00, 0x00, 0x00])
}

/// First bytes of real file types, and what they should be recognised as.
private let signatures: [([UInt8], MediaType)] = [
    (header([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8)), .jpeg),
    (header([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D] + Array("IHDR".utf8)), .png),
    (isoHeader(brand: "heic"), .heif),
    (isoHeader(brand: "mif1"), .heif),
    (isoHeader(brand: "avif"), .avif),
    (isoHeader(brand: "isom"), .mp4),
    (isoHeader(brand: "qt  "), .quicktime),
    (header([0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 0x01]), .matroska),
    (header(Array("RIFF".utf8) + [0x24, 0x08, 0x00, 0x00] + Array("WAVEfmt ".utf8)), .wav),
    (header(Array("RIFF".utf8) + [0x24, 0x08, 0x00, 0x00] + Array("WEBPVP8 ".utf8)), .webp),
    (header(Array("GIF89a".utf8)), .gif),
    // The raster formats of issue 11, with the first bytes ImageMagick 6.9.11 writes (97x61 pixels).
    (header([0x01, 0xDA, 0x00, 0x02, 0x00, 0x03, 0x00, 0x61, 0x00, 0x3D, 0x00, 0x03]), .sgi),
    (header([0x01, 0xDA, 0x01, 0x01, 0x00, 0x02, 0x00, 0x61, 0x00, 0x3D, 0x00, 0x01]), .sgi),
    (
        header([0x59, 0xA6, 0x6A, 0x95, 0x00, 0x00, 0x00, 0x61, 0x00, 0x00, 0x00, 0x3D, 0x00, 0x00, 0x00, 0x18]),
        .sunraster
    ),
    (header([0x00, 0x00, 0x00, 0x65, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x18]), .xwd),
    (header([0x65, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00]), .xwd),
    (
        header([
            0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x61, 0x00, 0x3D, 0x00, 0x18, 0x00,
        ]), .tga
    ),
    (
        header([
            0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x20, 0x00, 0x08, 0x00,
        ]), .tga
    ),
    (
        header([
            0x00, 0x00, 0x0B, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x20, 0x00, 0x10, 0x08,
        ]), .tga
    ),
    (header(Array("P7\nWIDTH 128\nHEIGHT 128\n".utf8)), .netpbm),
    (header(Array("Pf\n128 128\n-1.0\n".utf8)), .netpbm),
    (header(Array("PF\n97 61\n-1.0\n".utf8)), .netpbm),
    (header(Array("P4\n97 61\n".utf8)), .netpbm),
    (header(Array("P5 97 61 255\n".utf8)), .netpbm),
    (header(Array("P1\n# plain\n".utf8)), .netpbm),
    (header([0x76, 0x2F, 0x31, 0x01, 0x02, 0x00, 0x00, 0x00] + Array("channels".utf8)), .openexr),
    (header([0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20, 0x0D, 0x0A, 0x87, 0x0A]), .jpeg2000),
    (header([0xFF, 0x4F, 0xFF, 0x51, 0x00, 0x2F]), .jpeg2000),
    (header(Array("%PDF-1.7\n".utf8)), .pdf),
    (Array("#EXTM3U\n#EXTINF:10,clip\nhttp://example.invalid/a.ts\n".utf8), .playlist),
    (Array("<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n".utf8), .svg),
    (Array("  <svg width=\"10\" height=\"10\"></svg>".utf8), .svg),
]

@Suite struct MediaTypeTests {
    @Test(arguments: signatures)
    func recognisesFileTypeFromItsFirstBytes(bytes: [UInt8], expected: MediaType) {
        #expect(MediaType.sniff(bytes) == expected)
    }

    @Test func categoriesFollowTheType() {
        #expect(MediaType.jpeg.category == .image)
        #expect(MediaType.heif.category == .image)
        #expect(MediaType.mp4.category == .video)
        #expect(MediaType.matroska.category == .video)
        #expect(MediaType.wav.category == .audio)
        #expect(MediaType.pdf.category == .document)
        // Text that poses as media has no category, so a `type:` filter never lets it through.
        #expect(MediaType.playlist.category == nil)
        #expect(MediaType.svg.category == nil)
    }

    @Test func randomBytesAreNotRecognised() {
        // A fixed pseudo-random sequence (a linear congruential generator), so the test is the same every run.
        var state: UInt32 = 0x2545_F491
        let bytes = (0..<512).map { _ -> UInt8 in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
        #expect(MediaType.sniff(bytes) == nil)
    }

    @Test(
        arguments: [
            // A TGA-like header whose interleaving bits (6 and 7 of the descriptor) are set.
            [
                0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x61, 0x00, 0x3D, 0x00, 0x18,
                0xC0,
            ],
            // A colour-mapped TGA-like header without a colour map.
            [
                0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x61, 0x00, 0x3D, 0x00, 0x08,
                0x00,
            ],
            // A TGA-like header of width 0.
            [
                0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3D, 0x00, 0x18,
                0x00,
            ],
            // SGI's magic number with 5 bytes per channel.
            [0x01, 0xDA, 0x00, 0x05, 0x00, 0x03, 0x00, 0x61, 0x00, 0x3D, 0x00, 0x03],
            // XWD's version 7 after a header size too small for its fixed header.
            [0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x18],
        ] as [[UInt8]]
    )
    func headersOutsideTheirFormatsRangesAreNotRecognised(bytes: [UInt8]) {
        #expect(MediaType.sniff(header(bytes)) == nil)
    }

    @Test func tooFewBytesAreNotRecognised() {
        #expect(MediaType.sniff([UInt8]()) == nil)
        #expect(MediaType.sniff([0xFF, 0xD8]) == nil)
        #expect(MediaType.sniff(Array("plain text, nothing more".utf8)) == nil)
    }
}
