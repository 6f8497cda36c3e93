import ChuteCore
import ChuteMetadata
import ChuteTestSupport
import SystemPackage
import Testing

/// The EXIF structure edits: GPS pointers in IFD0 and IFD1, in place.
@Suite(.timeLimit(.minutes(1)))
struct EXIFTests {
    /// A big-endian EXIF block: IFD0 (orientation 6, a GPS pointer, `Make`), IFD1 with a GPS pointer of its own, and
    /// two GPS IFDs each with a latitude (three rationals stored after the IFD).
    private static func exif() -> [UInt8] {
        var tiff: [UInt8] = Array("MM".utf8) + [0x00, 0x2A] + Self.long(8)
        // IFD0 at 8: 3 entries, next IFD at 8 + 2 + 36 + 4 = 50.
        tiff += [0, 3]
        tiff += [0x01, 0x0F, 0, 2] + Self.long(4) + Array("Leo\0".utf8)  // Make, inline
        tiff += [0x01, 0x12, 0, 3] + Self.long(1) + [0, 6, 0, 0]  // Orientation
        tiff += [0x88, 0x25, 0, 4] + Self.long(1) + Self.long(68)  // GPSInfo → 68
        tiff += Self.long(50)
        // IFD1 at 50: 1 entry, no next IFD.
        tiff += [0, 1] + [0x88, 0x25, 0, 4] + Self.long(1) + Self.long(110) + Self.long(0)
        // GPS IFDs at 68 and 110: GPSLatitude (tag 2), 3 rationals at 86 and 128.
        for values in [86, 128] {
            tiff += [0, 1] + [0x00, 0x02, 0, 5] + Self.long(3) + Self.long(values) + Self.long(0)
            tiff += Self.long(48) + Self.long(1) + Self.long(51) + Self.long(1) + Self.long(23) + Self.long(1)
        }
        return Array("Exif".utf8) + [0, 0] + tiff
    }

    private static func long(_ value: Int) -> [UInt8] {
        [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    @Test func bothGPSPointersAndTheirValuesGo() throws {
        var exif = try EXIF(Self.exif())
        #expect(exif.hasGPS && exif.hasThumbnail && exif.orientation == 6)

        let removed = try exif.removeLocation()

        #expect(removed == [.gps])
        #expect(!exif.hasGPS)
        #expect(exif.hasThumbnail && exif.orientation == 6)
        #expect(exif.bytes.count == Self.exif().count)
        // Neither the latitude values (48, 51, 23) nor the GPS IFDs are left; the Make is.
        let tiff = Array(exif.bytes.dropFirst(6))
        #expect(tiff[68..<152].allSatisfy { $0 == 0 })
        #expect(tiff.starts(with: Array("MM".utf8)) && tiff[18..<22].elementsEqual(Array("Leo\0".utf8)))
    }

    @Test func exiftoolFindsNoGPSAfterwards() throws {
        let directory = try TemporaryDirectory(prefix: "metadata")
        defer { directory.remove() }
        let plain = directory.appending("plain.jpg")
        let input = directory.appending("in.jpg")
        let output = directory.appending("out.jpg")
        try CommandLineTool.run(["convert", "-size", "32x32", "xc:gray", plain.string])
        let jpeg = try MetadataFixtures.read(plain)
        let payload = Self.exif()
        let segment: [UInt8] =
            [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
        try MetadataFixtures.write(Array(jpeg.prefix(2)) + segment + jpeg.dropFirst(2), to: input)
        #expect(try MetadataFixtures.gpsTags(of: input).contains("GPSLatitude"))

        let result = try MetadataRemoval.removing(.location, from: MetadataFixtures.read(input), container: .jpeg)
        try MetadataFixtures.write(result.bytes, to: output)

        #expect(result.removedList == "gps")
        #expect(try MetadataFixtures.gpsTags(of: output) == "")
        let tags = try MetadataFixtures.tags(of: output)
        #expect(tags["IFD0:Make"] == "Leo" && tags["IFD0:Orientation"] == "6")
    }
}
