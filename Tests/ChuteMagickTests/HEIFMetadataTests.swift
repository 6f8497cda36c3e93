import Testing

@testable import ChuteMagick

/// A HEIF `Exif` item becomes the `Exif\0\0` + TIFF bytes that a JPEG's APP1 segment holds.
@Suite struct HEIFMetadataTests {
    /// A TIFF header (big-endian) and an empty first directory.
    private static let tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00]
    private static let exifHeader: [UInt8] = Array("Exif".utf8) + [0, 0]

    private static func profile(ofItem item: [UInt8]) -> [UInt8]? {
        HEIFMetadata(iccProfile: nil, exifItem: item).jpegExifProfile
    }

    @Test func appleItemKeepsItsHeader() {
        // Apple: offset 6, then "Exif\0\0", then the TIFF header.
        #expect(Self.profile(ofItem: [0, 0, 0, 6] + Self.exifHeader + Self.tiff) == Self.exifHeader + Self.tiff)
    }

    @Test func libheifItemGetsTheHeader() {
        // libheif's heif-enc: offset 0, the TIFF header right after it.
        #expect(Self.profile(ofItem: [0, 0, 0, 0] + Self.tiff) == Self.exifHeader + Self.tiff)
    }

    @Test func offsetThatMissesTheTIFFHeaderGivesNothing() {
        #expect(Self.profile(ofItem: [0, 0, 0, 2] + Self.tiff) == nil)
        #expect(Self.profile(ofItem: [0xFF, 0xFF, 0xFF, 0xF0] + Self.tiff) == nil)
        #expect(Self.profile(ofItem: [0, 0, 0]) == nil)
    }
}
