import ChuteCore
import ChuteMetadata
import ChuteTestSupport
import SystemPackage
import Testing

/// Metadata comes out of JPEG, PNG and WebP files without the image data changing, as `exiftool` and ImageMagick
/// read the results.
@Suite(.timeLimit(.minutes(2)))
struct MetadataRemovalTests {
    private static let metadataGroups = MetadataFixtures.metadataGroups

    /// Removes metadata from the file at `input` into `output`.
    private static func remove(
        _ policy: MetadataPolicy,
        _ input: FilePath,
        _ output: FilePath,
        _ container: MetadataRemoval.Container
    ) throws -> MetadataRemoval {
        let result = try MetadataRemoval.removing(policy, from: MetadataFixtures.read(input), container: container)
        try MetadataFixtures.write(result.bytes, to: output)
        return result
    }

    @Test func stripLeavesAJPEGsImageDataAndProfile() throws {
        let directory = try TemporaryDirectory(prefix: "metadata")
        defer { directory.remove() }
        let input = directory.appending("photo.jpg")
        let output = directory.appending("stripped.jpg")
        try MetadataFixtures.makeJPEG(at: input)
        #expect(try MetadataFixtures.groups(of: input).isSuperset(of: ["IFD0", "GPS", "IFD1", "IPTC", "XMP-dc"]))

        let result = try Self.remove(.strip, input, output, .jpeg)

        #expect(result.removedList == "exif,gps,thumbnail,xmp,iptc,comment")
        #expect(result.orientation == 6)
        let tags = try MetadataFixtures.tags(of: output)
        let groups = try MetadataFixtures.groups(of: output)
        #expect(groups.isDisjoint(with: Self.metadataGroups), "\(groups.sorted())")
        #expect(tags["File:Comment"] == nil)
        #expect(try MetadataFixtures.gpsTags(of: output) == "")
        #expect(tags["ICC_Profile:ProfileDescription"] == "Compatible with Adobe RGB (1998)")
        #expect(tags["JFIF:JFIFVersion"] != nil)
        #expect(try MetadataFixtures.decodedMD5(of: output) == MetadataFixtures.decodedMD5(of: input))
    }

    @Test func locationLeavesEverythingButTheLocationInAJPEG() throws {
        let directory = try TemporaryDirectory(prefix: "metadata")
        defer { directory.remove() }
        let input = directory.appending("photo.jpg")
        let output = directory.appending("located.jpg")
        try MetadataFixtures.makeJPEG(at: input)

        let result = try Self.remove(.location, input, output, .jpeg)

        #expect(result.removedList == "gps,xmp,iptcLocation")
        #expect(try MetadataFixtures.gpsTags(of: output) == "")
        let tags = try MetadataFixtures.tags(of: output)
        #expect(tags["IFD0:Make"] == "Canon")
        #expect(tags["IFD0:Orientation"] == "6")
        #expect(tags["ExifIFD:DateTimeOriginal"] == "2024:06:01 10:00:00")
        #expect(tags["IPTC:Keywords"] == "holiday")
        #expect(tags["IPTC:City"] == nil && tags["IPTC:Country-PrimaryLocationName"] == nil)
        #expect(tags["XMP-photoshop:City"] == nil && tags["XMP-exif:GPSLatitude"] == nil)
        #expect(tags["File:Comment"] == "a comment")
        #expect(tags["ICC_Profile:ProfileDescription"] == "Compatible with Adobe RGB (1998)")
        #expect(tags["IFD1:ThumbnailLength"] != nil)
        let warnings = tags.filter { $0.key.hasSuffix(":Warning") }
        #expect(warnings.isEmpty, "\(warnings)")
        // The thumbnail is still a JPEG, now without the GPS of its own.
        let thumbnail = directory.appending("thumbnail.jpg")
        try CommandLineTool.run([
            "sh", "-c", "exiftool -b -ThumbnailImage \"$1\" > \"$2\"", "sh", output.string,
            thumbnail.string,
        ])
        #expect(try MetadataFixtures.gpsTags(of: thumbnail) == "")
        #expect(try Fixtures.identify(thumbnail).width == 64)
        #expect(try MetadataFixtures.decodedMD5(of: output) == MetadataFixtures.decodedMD5(of: input))
    }

    @Test func keepChangesNothing() throws {
        let directory = try TemporaryDirectory(prefix: "metadata")
        defer { directory.remove() }
        let input = directory.appending("photo.jpg")
        try MetadataFixtures.makeJPEG(at: input, orientation: 3)
        let bytes = try MetadataFixtures.read(input)

        let result = try MetadataRemoval.removing(.keep, from: bytes, container: .jpeg)

        // The fixture's camera wrote DateTimeOriginal without a zone.
        let taken = CaptureTime(exif: "2024:06:01 10:00:00", offset: nil, origin: "EXIF DateTimeOriginal")
        #expect(result == MetadataRemoval(bytes: bytes, removed: [], orientation: 3, captureTime: taken))
    }

    @Test func stripLeavesAPNGsImageDataAndProfile() throws {
        let directory = try TemporaryDirectory(prefix: "metadata")
        defer { directory.remove() }
        let input = directory.appending("picture.png")
        let output = directory.appending("stripped.png")
        try MetadataFixtures.makePNG(at: input)
        #expect(try MetadataFixtures.groups(of: input).isSuperset(of: ["IFD0", "GPS", "XMP-dc"]))

        let result = try Self.remove(.strip, input, output, .png)

        #expect(result.removedList == "exif,gps,xmp,text")
        let tags = try MetadataFixtures.tags(of: output)
        #expect(try MetadataFixtures.groups(of: output).isDisjoint(with: Self.metadataGroups))
        #expect(tags["PNG:Comment"] == nil)
        #expect(tags["ICC_Profile:ProfileDescription"] == "Compatible with Adobe RGB (1998)")
        #expect(try MetadataFixtures.decodedMD5(of: output) == MetadataFixtures.decodedMD5(of: input))
    }

    @Test func locationLeavesEverythingButTheLocationInAPNG() throws {
        let directory = try TemporaryDirectory(prefix: "metadata")
        defer { directory.remove() }
        let input = directory.appending("picture.png")
        let output = directory.appending("located.png")
        try MetadataFixtures.makePNG(at: input)

        let result = try Self.remove(.location, input, output, .png)

        #expect(result.removedList == "gps,xmp")
        #expect(try MetadataFixtures.gpsTags(of: output) == "")
        let tags = try MetadataFixtures.tags(of: output)
        #expect(tags["IFD0:Make"] == "Canon")
        #expect(tags["PNG:Comment"] == "a comment")
        #expect(tags["ICC_Profile:ProfileDescription"] == "Compatible with Adobe RGB (1998)")
        #expect(tags.filter { $0.key.hasSuffix(":Warning") }.isEmpty)
        #expect(try MetadataFixtures.decodedMD5(of: output) == MetadataFixtures.decodedMD5(of: input))
        #expect(try Self.badPNGChunks(output) == "", "the rewritten eXIf chunk has a wrong CRC")
    }

    /// The PNG's chunks whose CRC-32 does not match, as Python's zlib computes it.
    private static func badPNGChunks(_ path: FilePath) throws -> String {
        let script = """
            import struct, sys, zlib
            data = open(sys.argv[1], 'rb').read()
            offset = 8
            while offset < len(data):
                length, = struct.unpack('>I', data[offset:offset + 4])
                chunk = data[offset + 4:offset + 8 + length]
                crc, = struct.unpack('>I', data[offset + 8 + length:offset + 12 + length])
                if zlib.crc32(chunk) != crc: print(chunk[:4].decode())
                offset += 12 + length
            """
        return try CommandLineTool.run(["python3", "-c", script, path.string]).standardOutput
    }

    @Test(arguments: [MetadataPolicy.strip, .location])
    func webPLosesItsMetadataButKeepsItsImageDataAndProfile(policy: MetadataPolicy) throws {
        let directory = try TemporaryDirectory(prefix: "metadata")
        defer { directory.remove() }
        let input = directory.appending("picture.webp")
        let output = directory.appending("edited.webp")
        try MetadataFixtures.makeWebP(at: input)

        let result = try Self.remove(policy, input, output, .webp)

        #expect(result.removedList == (policy == .strip ? "exif,gps,xmp" : "gps,xmp"))
        #expect(try MetadataFixtures.gpsTags(of: output) == "")
        let tags = try MetadataFixtures.tags(of: output)
        #expect(tags["IFD0:Make"] == (policy == .strip ? nil : "Canon"))
        #expect(tags["XMP-dc:Creator"] == nil)
        #expect(tags["ICC_Profile:ProfileDescription"] == "Compatible with Adobe RGB (1998)")
        #expect(tags.filter { $0.key.hasSuffix(":Warning") }.isEmpty, "\(tags)")
        #expect(try MetadataFixtures.decodedMD5(of: output) == MetadataFixtures.decodedMD5(of: input))
        if policy == .strip {
            // The VP8X flags no longer announce EXIF (0x08) or XMP (0x04); the profile's (0x20) stays.
            #expect(result.bytes[20] & 0x0C == 0 && result.bytes[20] & 0x20 != 0)
        }
    }

    @Test func theIPTCLocationDatasetsAreTheOnlyOnesRemoved() throws {
        // 2:25 keyword, 2:90 city, 2:101 country, then an extended-length 2:120 caption (length of length 2).
        let records: [UInt8] =
            [0x1C, 2, 25, 0, 3] + ascii("sea") + [0x1C, 2, 90, 0, 5] + ascii("Paris") + [0x1C, 2, 101, 0, 2]
            + ascii("FR") + [0x1C, 2, 120, 0x80, 0x02, 0x00, 0x02] + ascii("hi")

        let (edited, removed) = try PhotoshopResources.removingLocation(fromRecords: records)

        #expect(removed)
        #expect(edited == [0x1C, 2, 25, 0, 3] + ascii("sea") + [0x1C, 2, 120, 0x80, 0x02, 0x00, 0x02] + ascii("hi"))
        #expect(throws: MetadataError.self) {
            try PhotoshopResources.removingLocation(fromRecords: [0x1C, 2, 90, 0, 9])
        }
    }

    @Test func xmpLocationIsFoundWhateverThePrefix() {
        #expect(XMPLocation.mentionsLocation(ascii("<rdf:Description e:GPSLatitude='1'/>")))
        #expect(XMPLocation.mentionsLocation(ascii("<p:City>Paris</p:City>")))
        #expect(XMPLocation.mentionsLocation(ascii("<x:LocationShown><rdf:Bag/></x:LocationShown>")))
        #expect(
            !XMPLocation.mentionsLocation(ascii("<dc:creator><rdf:Seq><rdf:li>Alice</rdf:li></rdf:Seq></dc:creator>"))
        )
        #expect(!XMPLocation.mentionsLocation(ascii("<x:Cityscape>no</x:Cityscape>")))
    }

    private func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }
}
