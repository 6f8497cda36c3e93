import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Pictures in print colours (CMYK) become sRGB, through ICC profiles, unless the rule says `colorspace: keep`.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ColorspaceEndToEndTests {
    /// Ghostscript's profiles (Debian's `libgs-common`), which the reference conversion uses as the engine does.
    private static let profiles = "/usr/share/color/icc/ghostscript"

    /// The colour space `identify` reads (`sRGB`, `CMYK`, `Gray`).
    private static func colorspace(of path: FilePath) throws -> String {
        try CommandLineTool.run([Fixtures.identify, "-format", "%[colorspace]", path.string]).standardOutput
    }

    /// The 8-bit red, green and blue of the pixel at (`x`, `y`) of an RGB picture.
    private static func rgb(of path: FilePath, x: Int, y: Int) throws -> [Int] {
        let format = ["r", "g", "b"].map { "%[fx:round(255*p{\(x),\(y)}.\($0))]" }.joined(separator: " ")
        let output = try CommandLineTool.run([Fixtures.convert, path.string, "-format", format, "info:"])
        return output.standardOutput.split(separator: " ").compactMap { Int($0) }
    }

    /// What `convert SOURCE -profile default_cmyk.icc -profile srgb.icc` makes of the pixel at (`x`, `y`).
    private static func reference(
        _ source: FilePath,
        x: Int,
        y: Int,
        in directory: TemporaryDirectory
    ) throws
        -> [Int]
    {
        let reference = directory.appending("reference-\(source.lastComponent?.string ?? "").png")
        try CommandLineTool.run([
            Fixtures.convert, source.string, "-profile", "\(Self.profiles)/default_cmyk.icc", "-profile",
            "\(Self.profiles)/srgb.icc", reference.string,
        ])
        return try Self.rgb(of: reference, x: x, y: y)
    }

    /// A CMYK JPEG as Photoshop writes it (Adobe marker, inverted samples) of pure magenta and yellow ink (a red,
    /// made at test time; once re-encoded, once under `strip: true`, which otherwise keeps a JPEG's data), the
    /// corpus's Photoshop CMYK JPEG and CMYK TIFF (when the corpus is there): under the
    /// default `colorspace`, each output is sRGB and its colours are those of the ICC conversion (the red is red,
    /// not inverted, not ImageMagick's plain formula's 255,0,0); under `colorspace: keep` the JPEG stays CMYK.
    @Test func cmykBecomesSRGBThroughProfilesUnlessTheRuleKeepsIt() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: strip
                    match: ["*-strip.jpg"]
                    to: jpg
                    strip: true
                    output: ./outbox
                  - name: web
                    match: ["*.jpg", "*.tif"]
                    to: jpg
                    quality: 0.95
                    output: ./outbox
                  - name: print
                    match: ["*.jpeg"]
                    to: jpg
                    colorspace: keep
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        var names = ["ink.jpg", "ink-strip.jpg", "ink-print.jpeg"]
        for name in names {
            try CommandLineTool.run([
                Fixtures.convert, "-size", "64x64", "xc:cmyk(0%,100%,100%,0%)", staging.appending(name).string,
            ])
        }
        #expect(try Self.colorspace(of: staging.appending("ink.jpg")) == "CMYK")
        // Pixels to compare: the ink's middle; the corpus JPEG's red square and its dark background.
        var pixels: [String: [(Int, Int)]] = ["ink.jpg": [(32, 32)], "ink-strip.jpg": [(32, 32)]]
        if Corpus.isPresent {
            for (corpus, name) in [("jpeg_cmyk_adobe.jpg", "adobe.jpg"), ("tiff_cmyk_jpeg.tif", "cmyk.tif")] {
                try FileManager.default.copyItem(
                    atPath: Corpus.folder.appending("image/\(corpus)").string,
                    toPath: staging.appending(name).string
                )
                names.append(name)
                pixels[name] = [(5, 2), (50, 90), (40, 50)]
            }
        }
        var references: [String: [[Int]]] = [:]
        for (name, points) in pixels {
            references[name] = try points.map { point in
                try Self.reference(staging.appending(name), x: point.0, y: point.1, in: harness.directory)
            }
        }
        try harness.moveIn(names, from: staging)

        let sidecars = try await harness.waitForSidecars(names.count)

        for name in names {
            let stem = name.split(separator: ".").first.map(String.init) ?? name
            let sidecar = try #require(sidecars["\(stem).jpg\(Sidecar.fileSuffix)"], "no sidecar for \(name)")
            #expect(sidecar.status == .completed, "\(name): \(sidecar.status)")
        }
        for (name, points) in pixels {
            let stem = name.split(separator: ".").first.map(String.init) ?? name
            let output = harness.outbox.appending("\(stem).jpg")
            #expect(try Self.colorspace(of: output) == "sRGB", "\(name)")
            for (index, point) in points.enumerated() {
                let found = try Self.rgb(of: output, x: point.0, y: point.1)
                let expected = references[name]?[index] ?? []
                let off = zip(found, expected).map { abs($0 - $1) }.max() ?? .max
                #expect(
                    found.count == 3 && off <= 12,
                    "\(name) at \(point): \(found), the ICC conversion gives \(expected)"
                )
            }
        }
        // Magenta and yellow ink print red: through the profiles about 238,51,56; inverted it would be dark cyan.
        let ink = try Self.rgb(of: harness.outbox.appending("ink.jpg"), x: 32, y: 32)
        #expect(ink.count == 3 && ink[0] > 200 && ink[1] < 90 && ink[2] < 90, "ink: \(ink)")
        #expect(try Self.colorspace(of: harness.outbox.appending("ink-print.jpg")) == "CMYK")
    }
}
