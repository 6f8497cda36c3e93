import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon turns HEIC photos into JPEGs that keep the photo's colour profile and its EXIF (capture date,
/// camera, GPS) in a form every tool reads, or drop the EXIF when the rule says `strip`.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct HEICMetadataEndToEndTests {
    /// The ICC profile that the generated HEIC carries: not sRGB, so that a kept profile cannot be a default.
    private static let profile = "/usr/share/color/icc/compatibleWithAdobeRGB1998.icc"
    /// The EXIF tags compared between source and output (numeric, so that GPS compares exactly).
    private static let tags = ["DateTimeOriginal", "Make", "Model", "GPSLatitude", "GPSLongitude"]

    /// A rule taking `*.heic` to JPEG in the outbox, with `options` (rule keys indented by four spaces).
    private static func harness(options: String = "") throws -> DaemonHarness {
        try DaemonHarness(
            rules: """
                  - name: photos
                    match: ["*.heic", "*.png"]
                    to: jpg
                    output: ./outbox
                \(options)
                """
        )
    }

    /// Makes a HEIC as a phone would: an Adobe RGB profile, and EXIF with a capture date, camera, GPS position and
    /// an orientation, written into a JPEG by `exiftool` and carried into the HEIC by `heif-enc`.
    private static func makePhoto(at path: FilePath) throws {
        let folder = path.removingLastComponent()
        let jpeg = folder.appending("camera.jpg")
        try CommandLineTool.run([
            "convert", "rose:", "-resize", "200x", "-profile", Self.profile, "-quality", "95", jpeg.string,
        ])
        try CommandLineTool.run([
            "exiftool", "-q", "-overwrite_original", "-n", "-DateTimeOriginal=2024:06:01 10:00:00", "-Make=Apple",
            "-Model=iPhone 12", "-GPSLatitude=48.8566", "-GPSLatitudeRef=N", "-GPSLongitude=2.3522",
            "-GPSLongitudeRef=E", "-Orientation=6", jpeg.string,
        ])
        try CommandLineTool.run(["heif-enc", "-q", "90", jpeg.string, "-o", path.string])
        let info = try CommandLineTool.run(["heif-info", path.string]).standardOutput
        #expect(info.contains("color profile: prof"), "heif-enc kept no ICC profile: \(info)")
        #expect(info.contains("Exif:"), "heif-enc kept no EXIF: \(info)")
    }

    /// What `exiftool -j -n` reads of `tags` (and the ICC profile's description, and the orientation) from a file.
    private static func metadata(of path: FilePath) throws -> [String: String] {
        let output = try CommandLineTool.run(
            ["exiftool", "-j", "-n", "-ProfileDescription", "-Orientation"] + Self.tags.map { "-\($0)" } + [path.string]
        ).standardOutput
        let objects = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]]
        var result: [String: String] = [:]
        for (key, value) in objects?.first ?? [:] where key != "SourceFile" {
            result[key] = "\(value)"
        }
        return result
    }

    /// Every warning `exiftool` gives on the file, validation included (such as `Unknown APP1 'MM' segment` or
    /// `Ignored APP1 segment … (unknown header)` for EXIF written without its `Exif\0\0` header).
    private static func exifWarnings(of path: FilePath) throws -> [String] {
        let output = try CommandLineTool.run(["exiftool", "-a", "-validate", "-Warning", "-s3", path.string])
            .standardOutput
        return output.split(separator: "\n").map(String.init).filter { $0.contains("APP1") || $0.contains("EXIF") }
    }

    @Test func heicKeepsItsColourProfileAndEXIFInTheJPEG() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Self.makePhoto(at: staging.appending("IMG_0001.heic"))
        let source = try Self.metadata(of: staging.appending("IMG_0001.heic"))
        #expect(source["ProfileDescription"] == "Compatible with Adobe RGB (1998)")
        #expect(source["Make"] == "Apple")
        try harness.moveIn(["IMG_0001.heic"], from: staging)

        let sidecars = try await harness.waitForSidecars(1)

        #expect(sidecars["IMG_0001.jpg.chute.json"]?.status == .completed)
        let output = harness.outbox.appending("IMG_0001.jpg")
        #expect(try Self.exifWarnings(of: output) == [])
        let kept = try Self.metadata(of: output)
        #expect(kept["ProfileDescription"] == source["ProfileDescription"])
        for tag in Self.tags {
            #expect(kept[tag] == source[tag], "\(tag)")
        }
        // heif-enc (libheif 1.16 and later) turns the JPEG's EXIF orientation 6 into the HEIF's own rotation, so the
        // 200x131 photo shows as 131x200. libheif shows a HEIF upright by its own transforms and ignores the EXIF
        // orientation (as the HEIF specification asks), so the JPEG, written as decoded, says "no rotation" rather
        // than repeat the 6.
        #expect(kept["Orientation"] == nil || kept["Orientation"] == "1")
        let info = try Fixtures.identify(output)
        #expect(info.width == 131 && info.height == 200)
    }

    @Test func stripDropsTheEXIFButKeepsTheColourProfile() async throws {
        let harness = try Self.harness(options: "    strip: true")
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Self.makePhoto(at: staging.appending("IMG_0002.heic"))
        try harness.moveIn(["IMG_0002.heic"], from: staging)

        let sidecars = try await harness.waitForSidecars(1)

        #expect(sidecars["IMG_0002.jpg.chute.json"]?.status == .completed)
        let output = harness.outbox.appending("IMG_0002.jpg")
        let kept = try Self.metadata(of: output)
        #expect(kept["ProfileDescription"] == "Compatible with Adobe RGB (1998)")
        for tag in Self.tags {
            #expect(kept[tag] == nil, "\(tag)")
        }
        #expect(kept["Orientation"] == nil || kept["Orientation"] == "1")
    }

    /// Phone photos from the shared corpus: each JPEG has its source's profile, date, camera and GPS, and stands
    /// upright (portrait iPhone photos carry `irot` and EXIF orientation 6; the output is portrait with none).
    @Test(.enabled(if: Corpus.isPresent, "the shared corpus (../shared/corpus) is absent"))
    func iPhonePhotosKeepTheirMetadata() async throws {
        try await Self.convertKeepingMetadata([
            ("heic_iphone_img5195.heic", (width: 2566, height: 3313)),
            ("heic_iphone13promax.heic", (width: 3024, height: 4032)),
            ("heic_iphonexs_orient6.heic", (width: 3024, height: 4032)),
            ("heic_iphone13pro_depth.heic", (width: 4032, height: 3024)),
        ])
    }

    /// An iPhone 16 photo, with an HDR gain map (ISO 21496-1 `tmap`) and more auxiliary images than libheif 1.15
    /// accepts: the libheif from bookworm-backports reads it, and the JPEG is its SDR primary image, upright
    /// (portrait; the file's primary image is stored landscape with `irot`), with its profile, date and camera.
    @Test(.enabled(if: Corpus.isPresent, "the shared corpus (../shared/corpus) is absent"))
    func iPhone16PhotoWithAGainMapConverts() async throws {
        // exiftool's ProfileDescription of the source is the last of its four profiles, the gain map's (`Display P3
        // Primaries; PQ …`); the primary image's, which the JPEG carries, is the first.
        try await Self.convertKeepingMetadata(
            [("heic_iphone16_gainmap.heic", (width: 4284, height: 5712))],
            profile: "Display P3"
        )
    }

    /// Runs corpus photos through the daemon and checks each JPEG against its source: the same profile, date,
    /// camera and GPS, no EXIF warnings, no orientation left to apply, and the upright size. `profile` is the
    /// expected profile's description when it is not the one exiftool reports for the source.
    private static func convertKeepingMetadata(
        _ photos: [(String, (width: Int, height: Int))],
        profile: String? = nil
    ) async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        for (name, _) in photos {
            try FileManager.default.copyItem(
                atPath: Corpus.folder.appending("image").appending(name).string,
                toPath: staging.appending(name).string
            )
        }
        try harness.moveIn(photos.map(\.0), from: staging)

        let sidecars = try await harness.waitForSidecars(photos.count, timeout: 240)

        for (name, size) in photos {
            let stem = String(name.dropLast(".heic".count))
            #expect(sidecars["\(stem).jpg.chute.json"]?.status == .completed, "\(name)")
            let output = harness.outbox.appending("\(stem).jpg")
            let source = try Self.metadata(of: Corpus.folder.appending("image").appending(name))
            let kept = try Self.metadata(of: output)
            #expect(try Self.exifWarnings(of: output) == [], "\(name)")
            #expect(source["ProfileDescription"] != nil, "\(name)")
            #expect(kept["ProfileDescription"] == profile ?? source["ProfileDescription"], "\(name)")
            for tag in Self.tags where source[tag] != nil {
                #expect(kept[tag] == source[tag], "\(name): \(tag)")
            }
            #expect(kept["Orientation"] == nil || kept["Orientation"] == "1", "\(name)")
            let info = try Fixtures.identify(output)
            #expect(info.width == size.width && info.height == size.height, "\(name)")
        }
    }
}
