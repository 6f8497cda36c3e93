import Foundation
import SystemPackage

/// Photos with every kind of metadata, made at test time with `convert` and `exiftool`, and what tools read back.
package enum MetadataFixtures {
    /// A colour profile that is not sRGB, so that a kept profile cannot be a default.
    package static let profile = "/usr/share/color/icc/compatibleWithAdobeRGB1998.icc"
    /// The tags every photo gets: camera, date, GPS in EXIF and in XMP, a creator and a city in XMP, IPTC location
    /// and keywords.
    package static let tags = [
        "-Make=Canon", "-Model=EOS", "-DateTimeOriginal=2024:06:01 10:00:00", "-GPSLatitude=48.8566",
        "-GPSLatitudeRef=N", "-GPSLongitude=2.3522", "-GPSLongitudeRef=E", "-XMP-dc:Creator=Alice",
        "-XMP-photoshop:City=Paris", "-XMP-exif:GPSLatitude=48.8566",
    ]

    /// Values the fixtures write, none of which may appear in a log or a sidecar.
    package static let secrets = ["48.856", "2.3522", "Paris", "France", "Alice", "Canon", "a comment", "holiday"]

    /// The groups of tags that only metadata fills, as `exiftool -G1` names them (EXIF, GPS, thumbnail, XMP, IPTC,
    /// Photoshop).
    package static let metadataGroups: Set<String> = [
        "IFD0", "ExifIFD", "GPS", "IFD1", "InteropIFD", "IPTC", "Photoshop", "XMP-x", "XMP-dc", "XMP-exif",
        "XMP-photoshop", "XMP-xmp", "XMP-tiff",
    ]

    /// The peak signal-to-noise ratio between two images of the same size in dB (`compare -metric PSNR`), infinite
    /// when they are identical: above 50 the difference is rounding, an image turned the wrong way scores about 12.
    package static func psnr(_ first: FilePath, _ second: FilePath) throws -> Double {
        let result = try CommandLineTool.run(
            ["compare", "-metric", "PSNR", first.string, second.string, "null:"],
            check: false
        )
        let text = result.standardError.split(separator: " ").first.map(String.init) ?? ""
        if result.status == 0, text == "inf" { return .infinity }
        guard result.status <= 1, let value = Double(text) else {
            throw CommandLineTool.Failure(command: ["compare", first.string, second.string], result: result)
        }
        return value
    }

    /// A JPEG with an Adobe RGB profile, EXIF (orientation, GPS, and a thumbnail that has GPS of its own), XMP, IPTC
    /// and a comment.
    ///
    /// - Parameters:
    ///   - size: `WxH`.
    ///   - sampling: the chroma subsampling (`1x1` is 4:4:4, `2x2` is 4:2:0).
    ///   - orientation: the EXIF orientation.
    package static func makeJPEG(
        at path: FilePath,
        size: String = "200x120",
        sampling: String = "1x1",
        orientation: Int = 6
    )
        throws
    {
        let thumbnail = path.removingLastComponent().appending("thumbnail-\(path.lastComponent?.string ?? "").jpg")
        try CommandLineTool.run(["convert", "-size", "64x48", "gradient:red-blue", thumbnail.string])
        try CommandLineTool.run([
            "exiftool", "-q", "-overwrite_original", "-GPSLatitude=10", "-GPSLatitudeRef=N", thumbnail.string,
        ])
        try CommandLineTool.run([
            "convert", "-size", size, "-seed", "4", "plasma:fractal", "-profile", Self.profile, "-sampling-factor",
            sampling, "-quality", "92", path.string,
        ])
        try CommandLineTool.run(
            ["exiftool", "-q", "-overwrite_original", "-n", "-Orientation=\(orientation)"] + Self.tags + [
                "-IPTC:City=Paris", "-IPTC:Country-PrimaryLocationName=France", "-IPTC:Keywords=holiday",
                "-Comment=a comment", "-ThumbnailImage<=\(thumbnail.string)", path.string,
            ]
        )
    }

    /// A 16-bit PNG with an Adobe RGB profile (`iCCP`), EXIF with GPS (`eXIf`), XMP (`iTXt`) and text chunks.
    package static func makePNG(at path: FilePath, orientation: Int = 1) throws {
        try CommandLineTool.run([
            "convert", "-size", "100x80", "-seed", "4", "plasma:fractal", "-profile", Self.profile, path.string,
        ])
        try CommandLineTool.run(
            ["exiftool", "-q", "-overwrite_original", "-n", "-Orientation=\(orientation)", "-PNG:Comment=a comment"]
                + Self.tags + [path.string]
        )
    }

    /// A lossy WebP with an Adobe RGB profile (`ICCP`), EXIF with GPS and XMP.
    package static func makeWebP(at path: FilePath, orientation: Int = 1) throws {
        try CommandLineTool.run([
            "convert", "-size", "100x80", "-seed", "4", "plasma:fractal", "-profile", Self.profile, path.string,
        ])
        try CommandLineTool.run(
            ["exiftool", "-q", "-overwrite_original", "-n", "-Orientation=\(orientation)"] + Self.tags + [path.string]
        )
    }

    /// Every tag `exiftool -a -G1` reads, as `Group:Tag` → value.
    package static func tags(of path: FilePath) throws -> [String: String] {
        let output = try CommandLineTool.run(["exiftool", "-a", "-G1", "-j", "-n", path.string]).standardOutput
        let objects = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]]
        var result: [String: String] = [:]
        for (key, value) in objects?.first ?? [:] { result[key] = "\(value)" }
        return result
    }

    /// The groups of those tags (`IFD0`, `GPS`, `XMP-dc`, …).
    package static func groups(of path: FilePath) throws -> Set<String> {
        Set(try Self.tags(of: path).keys.compactMap { $0.split(separator: ":").first.map(String.init) })
    }

    /// What `exiftool -a -G1 -gps:all` reads: empty when the file has no GPS tags anywhere.
    package static func gpsTags(of path: FilePath) throws -> String {
        try CommandLineTool.run(["exiftool", "-a", "-G1", "-s", "-gps:all", path.string]).standardOutput
    }

    /// The MD5 of the decoded RGB pixels, 16 bits a sample (`convert FILE -depth 16 rgb:- | md5sum`).
    package static func decodedMD5(of path: FilePath) throws -> String {
        let md5 = try CommandLineTool.run([
            "bash", "-c", "set -o pipefail; convert \"$1\" -depth 16 rgb:- | md5sum", "bash", path.string,
        ]).standardOutput
        guard !md5.hasPrefix("d41d8cd98f00b204e9800998ecf8427e") else { throw CocoaError(.fileReadCorruptFile) }
        return md5
    }

    /// The file's bytes.
    package static func read(_ path: FilePath) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path.string)))
    }

    /// Writes `bytes` to `path`.
    package static func write(_ bytes: [UInt8], to path: FilePath) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path.string))
    }
}

extension MetadataFixtures {
    /// How a phone appends the video of a motion photo.
    package enum MotionPhotoLayout: Sendable {
        /// Google's (Pixel): the XMP's `Container:Directory` gives the video's length, counted from the end.
        case google
        /// Samsung's: the video follows a `MotionPhoto_Data` field, and a SEF trailer (`SEFH` … `SEFT`) ends the file.
        case samsung
    }

    /// A motion photo: ``makeJPEG(at:size:sampling:orientation:)`` (upright, with GPS) with a one-second H.264 clip
    /// appended as `layout` says.
    ///
    /// - Returns: the size of the appended clip in bytes.
    @discardableResult
    package static func makeMotionPhoto(at path: FilePath, layout: MotionPhotoLayout) throws -> Int {
        try Self.makeJPEG(at: path, size: "320x240", orientation: 1)
        let clipPath = path.removingLastComponent().appending("clip-\(path.lastComponent?.string ?? "").mp4")
        try MediaFixtures.makeClip(
            at: clipPath,
            width: 160,
            height: 120,
            seconds: 1,
            codecArguments: MediaFixtures.h264AAC
        )
        let clip = try Self.read(clipPath)
        var still = try Self.read(path)
        switch layout {
        case .google:
            let xmp = """
                <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\
                <rdf:Description rdf:about="" xmlns:GCamera="http://ns.google.com/photos/1.0/camera/" \
                xmlns:Container="http://ns.google.com/photos/1.0/container/" \
                xmlns:Item="http://ns.google.com/photos/1.0/container/item/" \
                GCamera:MotionPhoto="1" GCamera:MotionPhotoVersion="1"><Container:Directory><rdf:Seq>\
                <rdf:li rdf:parseType="Resource"><Container:Item Item:Mime="image/jpeg" Item:Semantic="Primary" \
                Item:Length="0" Item:Padding="0"/></rdf:li><rdf:li rdf:parseType="Resource"><Container:Item \
                Item:Mime="video/mp4" Item:Semantic="MotionPhoto" Item:Length="\(clip.count)" Item:Padding="0"/>\
                </rdf:li></rdf:Seq></Container:Directory></rdf:Description></rdf:RDF></x:xmpmeta>
                """
            let payload = Array("http://ns.adobe.com/xap/1.0/\0".utf8) + Array(xmp.utf8)
            let segment = [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
            // The XMP goes first, right after the start-of-image marker, as a camera writes it.
            still.insert(contentsOf: segment, at: 2)
            try Self.write(still + clip, to: path)
        case .samsung:
            let name = Array("MotionPhoto_Data".utf8)
            let field = [0x00, 0x00, 0x30, 0x0A] + Self.littleEndian(name.count) + name + clip
            // The directory: "SEFH", version, one entry (padding, type, distance back to the field, its length).
            let directory =
                Array("SEFH".utf8) + Self.littleEndian(106) + Self.littleEndian(1) + [0x00, 0x00, 0x30, 0x0A]
                + Self.littleEndian(field.count) + Self.littleEndian(field.count)
            try Self.write(
                still + field + directory + Self.littleEndian(directory.count) + Array("SEFT".utf8),
                to: path
            )
        }
        return clip.count
    }

    /// `value` as four little-endian bytes.
    private static func littleEndian(_ value: Int) -> [UInt8] {
        (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) }
    }
}
