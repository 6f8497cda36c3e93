import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon develops camera RAW files with LibRaw: a `*.dng → jpg` rule turns DNG files made at test time
/// (``DNGFixture``) and the corpus's lossy DNG into upright JPEGs of the right size.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct RawEndToEndTests {
    /// The red and blue levels (0…1) of the pixel at `x`, `y`, as `identify` reads them.
    private static func redAndBlue(_ path: FilePath, x: Int, y: Int) throws -> (red: Double, blue: Double) {
        let output = try CommandLineTool.run([
            Fixtures.identify, "-format", "%[fx:p{\(x),\(y)}.r] %[fx:p{\(x),\(y)}.b]", path.string,
        ]).standardOutput
        let values = output.split(separator: " ").compactMap { Double($0) }
        try #require(values.count == 2, "identify printed '\(output)'")
        return (values[0], values[1])
    }

    /// The EXIF tags compared between source and output (numeric, so that GPS and exposure compare exactly).
    private static let tags = [
        "Make", "Model", "DateTimeOriginal", "ExposureTime", "FNumber", "ISO", "FocalLength", "LensModel",
        "GPSLatitude", "GPSLongitude",
    ]

    /// What `exiftool -j -n` reads of `tags` (and the orientation) from a file.
    private static func metadata(of path: FilePath) throws -> [String: String] {
        let output = try CommandLineTool.run(
            ["exiftool", "-j", "-n", "-Orientation"] + Self.tags.map { "-\($0)" } + [path.string]
        ).standardOutput
        let objects = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [[String: Any]]
        var result: [String: String] = [:]
        for (key, value) in objects?.first ?? [:] where key != "SourceFile" {
            result[key] = "\(value)"
        }
        return result
    }

    /// A DNG carries its camera, capture time, exposure, lens and GPS position into the JPEG, as a camera's JPEG
    /// would have them, and the JPEG stands upright with no orientation left to apply; `strip` removes them.
    @Test func dngKeepsItsEXIFInTheJPEG() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: raw
                    match: ["keep-*.dng", "*.png"]
                    to: jpg
                    output: ./outbox
                  - name: stripped
                    match: ["strip-*.dng"]
                    to: jpg
                    output: ./outbox
                    strip: true
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        for name in ["keep-photo.dng", "strip-photo.dng"] {
            let path = staging.appending(name)
            try DNGFixture.write(
                to: path,
                width: 64,
                height: 48,
                orientation: 6,
                colour: DNGFixture.redOverBlue(height: 48)
            )
            try CommandLineTool.run([
                "exiftool", "-q", "-overwrite_original", "-n", "-DateTimeOriginal=2024:06:01 10:00:00",
                "-ExposureTime=0.004", "-FNumber=2.8", "-ISO=200", "-FocalLength=35", "-LensModel=Test Lens 35mm",
                "-GPSLatitude=48.8566", "-GPSLatitudeRef=N", "-GPSLongitude=2.3522", "-GPSLongitudeRef=E", path.string,
            ])
        }
        let source = try Self.metadata(of: staging.appending("keep-photo.dng"))
        #expect(source["Make"] == DNGFixture.make && source["ISO"] == "200" && source["GPSLatitude"] != nil)
        try harness.moveIn(["keep-photo.dng", "strip-photo.dng"], from: staging)

        let sidecars = try await harness.waitForSidecars(2)

        #expect(sidecars["keep-photo.jpg.chute.json"]?.status == .completed)
        #expect(sidecars["keep-photo.jpg.chute.json"]?.warnings == [])
        let kept = try Self.metadata(of: harness.outbox.appending("keep-photo.jpg"))
        for tag in Self.tags {
            #expect(kept[tag] == source[tag], "\(tag)")
        }
        #expect(kept["Orientation"] == nil || kept["Orientation"] == "1")
        let warnings = try CommandLineTool.run([
            "exiftool", "-a", "-validate", "-Warning", "-s3", harness.outbox.appending("keep-photo.jpg").string,
        ]).standardOutput
        #expect(!warnings.contains("APP1") && !warnings.contains("EXIF"), "\(warnings)")
        let info = try Fixtures.identify(harness.outbox.appending("keep-photo.jpg"))
        #expect(info.width == 48 && info.height == 64)

        #expect(sidecars["strip-photo.jpg.chute.json"]?.status == .completed)
        let stripped = try Self.metadata(of: harness.outbox.appending("strip-photo.jpg"))
        for tag in Self.tags {
            #expect(stripped[tag] == nil, "\(tag)")
        }
    }

    @Test func dngFilesBecomeUprightJPEGs() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: raw
                    match: ["*.dng", "*.png"]
                    to: jpg
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        let redOverBlue = DNGFixture.redOverBlue(height: 48)
        try DNGFixture.write(to: staging.appending("landscape.dng"), width: 64, height: 48, colour: redOverBlue)
        // Orientation 6: the camera was turned a quarter clockwise, so the top of the sensor image is on the right.
        try DNGFixture.write(
            to: staging.appending("portrait.dng"),
            width: 64,
            height: 48,
            orientation: 6,
            colour: redOverBlue
        )
        var names = ["landscape.dng", "portrait.dng"]
        if Corpus.isPresent {
            try FileManager.default.copyItem(
                atPath: Corpus.folder.appending("raw/dng_lg_g4_lossy.dng").string,
                toPath: staging.appending("lg_g4.dng").string
            )
            names.append("lg_g4.dng")
        }
        try harness.moveIn(names, from: staging)

        let sidecars = try await harness.waitForSidecars(names.count)

        for name in names {
            let stem = String(name.dropLast(".dng".count))
            let sidecar = sidecars["\(stem).jpg.chute.json"]
            #expect(sidecar?.status == .completed, "\(name): \(String(describing: sidecar?.error))")
            #expect(sidecar?.source.sniffedType == "dng", "\(name)")
            #expect(sidecar?.details["inputFormat"] == "DNG", "\(name)")
            #expect(sidecar?.libraries["LibRaw"]?.isEmpty == false, "\(name)")
        }
        let landscape = try Fixtures.identify(harness.outbox.appending("landscape.jpg"))
        #expect(landscape.format == "JPEG" && landscape.width == 64 && landscape.height == 48)
        let top = try Self.redAndBlue(harness.outbox.appending("landscape.jpg"), x: 32, y: 4)
        #expect(top.red > 0.5 && top.blue < 0.3, "landscape top \(top)")
        let portrait = try Fixtures.identify(harness.outbox.appending("portrait.jpg"))
        #expect(portrait.width == 48 && portrait.height == 64)
        let right = try Self.redAndBlue(harness.outbox.appending("portrait.jpg"), x: 43, y: 32)
        #expect(right.red > 0.5 && right.blue < 0.3, "portrait right \(right)")
        if names.contains("lg_g4.dng") {
            let photo = try Fixtures.identify(harness.outbox.appending("lg_g4.jpg"))
            #expect(photo.width == 600 && photo.height == 338)
            let source = try Self.metadata(of: Corpus.folder.appending("raw/dng_lg_g4_lossy.dng"))
            let kept = try Self.metadata(of: harness.outbox.appending("lg_g4.jpg"))
            #expect(source["Model"] == "LG-H815")
            for tag in Self.tags {
                #expect(kept[tag] == source[tag], "lg_g4: \(tag)")
            }
        }
    }
}
