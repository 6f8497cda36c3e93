import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon crops, rotates, mirrors and pads images as rules ask; each output is compared, pixel by pixel, with
/// what the ImageMagick command line makes of the same source.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ImageOperationsEndToEndTests {
    /// One rule per operation under test: files named `<prefix>-….png` go through the rule with those options
    /// (rule keys, one per line) to `format`, PNG by default so that outputs compare exactly.
    private static func harness(
        _ rules: [(prefix: String, options: [String])],
        to format: String = "png"
    ) throws
        -> DaemonHarness
    {
        let text = rules.map { rule in
            ([
                "  - name: \(rule.prefix)", "    match: [\"\(rule.prefix)-*.png\"]", "    to: \(format)",
                "    output: ./outbox",
            ]
                + rule.options.map { "    \($0)" }).joined(separator: "\n")
        }.joined(separator: "\n")
        // The harness proves that no more outputs are coming with a sentinel file, which needs a rule too.
        let sentinel = "  - name: sentinel\n    match: [\"zz-sentinel-*\"]\n    to: png\n    output: ./outbox"
        return try DaemonHarness(rules: text + "\n" + sentinel)
    }

    /// Makes the same source under each name in the staging folder: `width` × `height`, a gradient with noise.
    private static func makeSources(
        _ names: [String],
        in staging: FilePath,
        width: Int = 400,
        height: Int = 300
    ) throws {
        let first = staging.appending(names[0])
        try Fixtures.makeImage(at: first, width: width, height: height)
        for name in names.dropFirst() {
            try FileManager.default.copyItem(atPath: first.string, toPath: staging.appending(name).string)
        }
    }

    /// How many pixels differ between two images (`compare -metric AE`); both must have the same size.
    private static func differingPixels(_ first: FilePath, _ second: FilePath, fuzz: String = "0%") throws -> Int {
        let result = try CommandLineTool.run(
            ["compare-im6.q16", "-metric", "AE", "-fuzz", fuzz, first.string, second.string, "null:"],
            check: false
        )
        // compare exits 1 when the images differ, 2 on trouble (such as different sizes); it prints the count on
        // standard error.
        guard result.status != 2, let count = Int(result.standardError.split(separator: " ").first ?? "") else {
            throw CompareFailure(message: result.standardError)
        }
        return count
    }

    /// `compare` could not compare two images.
    private struct CompareFailure: Error {
        var message: String
    }

    /// Runs `convert` on `source` with `arguments`, writing `expected`.
    private static func reference(_ source: FilePath, _ arguments: [String], _ expected: FilePath) throws {
        try CommandLineTool.run([Fixtures.convert, source.string] + arguments + [expected.string])
    }

    @Test func cropTakesABoxAPercentageBoxOrARatioAndRefusesABoxOutsideTheImage() async throws {
        let harness = try Self.harness([
            ("box", ["crop: 200x100+50+40"]),
            ("percent", ["crop: 50%x50%"]),
            ("percentoffset", ["crop: \"25%x50%+75%+10%\""]),
            ("ratio", ["crop: \"16:9\"", "gravity: north"]),
            ("square", ["crop: 1:1", "gravity: east"]),
            ("outside", ["crop: 300x200+200+0"]),
        ])
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        let names = [
            "box-a.png", "percent-a.png", "percentoffset-a.png", "ratio-a.png", "square-a.png", "outside-a.png",
        ]
        try Self.makeSources(names, in: staging)
        let source = harness.directory.appending("source.png")
        try FileManager.default.copyItem(atPath: staging.appending(names[0]).string, toPath: source.string)
        try harness.moveIn(names, from: staging)

        let sidecars = try await harness.waitForSidecars(names.count)

        // What ImageMagick's own -crop makes of the source, box by box, for a 400x300 image.
        let expected: [(name: String, box: String, width: Int, height: Int)] = [
            ("box-a", "200x100+50+40", 200, 100),
            ("percent-a", "200x150+100+75", 200, 150),
            ("percentoffset-a", "100x150+300+30", 100, 150),
            ("ratio-a", "400x225+0+0", 400, 225),
            ("square-a", "300x300+100+0", 300, 300),
        ]
        for (name, box, width, height) in expected {
            #expect(sidecars["\(name).png.chute.json"]?.status == .completed, "\(name)")
            let output = harness.outbox.appending("\(name).png")
            let info = try Fixtures.identify(output)
            #expect(info.width == width && info.height == height, "\(name): \(info)")
            let reference = harness.directory.appending("\(name)-expected.png")
            try Self.reference(source, ["-crop", box, "+repage"], reference)
            #expect(try Self.differingPixels(output, reference) == 0, "\(name)")
        }
        let outside = try #require(sidecars["outside-a.png.chute.json"])
        #expect(outside.status == .failed)
        #expect(outside.error?.code == "unsupportedInput")
        #expect(outside.error?.message.contains("300x200+200+0 does not lie inside the 400x300 image") == true)
        #expect(!FileManager.default.fileExists(atPath: harness.outbox.appending("outside-a.png").string))
    }

    /// The colour of one pixel, as ImageMagick names it (`srgba(255,0,0,1)`, `none`).
    private static func pixel(_ path: FilePath, x: Int, y: Int) throws -> String {
        try CommandLineTool.run([Fixtures.convert, path.string, "-format", "%[pixel:p{\(x),\(y)}]", "info:"])
            .standardOutput
    }

    @Test func rotateTurnsExactlyByRightAnglesAndFillsTheCornersOfOtherAngles() async throws {
        let harness = try Self.harness([
            ("quarter", ["rotate: 90"]),
            ("back", ["rotate: -90", "flip: true"]),
            ("angle", ["rotate: 33"]),
            ("red", ["rotate: 33", "background: \"#ff0000\""]),
            ("mirror", ["flop: true"]),
            ("both", ["rotate: 180", "flip: true", "flop: true"]),
        ])
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        let names = ["quarter-a.png", "back-a.png", "angle-a.png", "red-a.png", "mirror-a.png", "both-a.png"]
        try Self.makeSources(names, in: staging)
        let source = harness.directory.appending("source.png")
        try FileManager.default.copyItem(atPath: staging.appending(names[0]).string, toPath: source.string)
        try harness.moveIn(names, from: staging)

        let sidecars = try await harness.waitForSidecars(names.count)

        let expected: [(name: String, arguments: [String])] = [
            ("quarter-a", ["-rotate", "90"]),
            ("back-a", ["-rotate", "-90", "-flip"]),
            ("angle-a", ["-background", "none", "-rotate", "33", "+repage"]),
            ("red-a", ["-background", "#ff0000", "-rotate", "33", "+repage"]),
            ("mirror-a", ["-flop"]),
            ("both-a", ["-rotate", "180", "-flip", "-flop"]),
        ]
        for (name, arguments) in expected {
            #expect(sidecars["\(name).png.chute.json"]?.status == .completed, "\(name)")
            let output = harness.outbox.appending("\(name).png")
            let reference = harness.directory.appending("\(name)-expected.png")
            try Self.reference(source, arguments, reference)
            let (made, wanted) = (try Fixtures.identify(output), try Fixtures.identify(reference))
            #expect(made.width == wanted.width && made.height == wanted.height, "\(name): \(made) vs \(wanted)")
            #expect(try Self.differingPixels(output, reference) == 0, "\(name)")
        }
        // Right angles swap the sides; 180° turned and mirrored both ways is the source again.
        let quarter = try Fixtures.identify(harness.outbox.appending("quarter-a.png"))
        #expect(quarter.width == 300 && quarter.height == 400)
        #expect(try Self.differingPixels(harness.outbox.appending("both-a.png"), source) == 0)
        #expect(try Self.differingPixels(harness.outbox.appending("mirror-a.png"), source) > 0)
        // 33°: a larger canvas whose corners are transparent by default on PNG, or the rule's colour.
        let angle = try Fixtures.identify(harness.outbox.appending("angle-a.png"))
        #expect(angle.width > 400 && angle.height > 300)
        #expect(try Self.pixel(harness.outbox.appending("angle-a.png"), x: 0, y: 0).hasSuffix(",0)"))
        #expect(try Self.pixel(harness.outbox.appending("red-a.png"), x: 0, y: 0) == "srgb(255,0,0)")
    }

    /// `grayscale: true` writes grey pixels, the same as ImageMagick's `-colorspace Gray`, in a one-channel JPEG.
    @Test func grayscaleWritesShadesOfGrey() async throws {
        let harness = try Self.harness([("grey", ["grayscale: true"]), ("colour", [])], to: "jpg")
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Self.makeSources(["grey-a.png", "colour-a.png"], in: staging)
        let source = harness.directory.appending("source.png")
        try FileManager.default.copyItem(atPath: staging.appending("grey-a.png").string, toPath: source.string)
        try harness.moveIn(["grey-a.png", "colour-a.png"], from: staging)

        let sidecars = try await harness.waitForSidecars(2)

        #expect(sidecars["grey-a.jpg.chute.json"]?.status == .completed)
        #expect(sidecars["grey-a.jpg.chute.json"]?.parameters.options["grayscale"] == true)
        let grey = harness.outbox.appending("grey-a.jpg")
        let colour = harness.outbox.appending("colour-a.jpg")
        let space = { (path: FilePath) in
            try CommandLineTool.run([Fixtures.identify, "-format", "%[colorspace] %[channels]", path.string])
                .standardOutput
        }
        let greySpace = try space(grey)
        let colourSpace = try space(colour)
        #expect(greySpace == "Gray gray", "\(greySpace)")
        #expect(colourSpace.hasPrefix("sRGB"), "\(colourSpace)")
        let reference = harness.directory.appending("grey-expected.jpg")
        try Self.reference(source, ["-colorspace", "Gray", "-quality", "85"], reference)
        #expect(try Self.differingPixels(grey, reference, fuzz: "1%") == 0)
    }

    @Test func aJPEGTurnedByAnAngleGetsWhiteCorners() async throws {
        let harness = try Self.harness([("angle", ["rotate: 33"])], to: "jpg")
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Self.makeSources(["angle-a.png"], in: staging)
        try harness.moveIn(["angle-a.png"], from: staging)

        let sidecars = try await harness.waitForSidecars(1)

        #expect(sidecars["angle-a.jpg.chute.json"]?.status == .completed)
        let output = harness.outbox.appending("angle-a.jpg")
        let info = try Fixtures.identify(output)
        #expect(info.width > 400 && info.height > 300)
        // JPEG rounds a flat corner to within a step or two of white.
        let corner = try CommandLineTool.run([
            Fixtures.convert, output.string, "-crop", "8x8+0+0", "-format", "%[fx:minima.r*255]", "info:",
        ]).standardOutput
        #expect((Double(corner) ?? 0) >= 250, "corner minimum \(corner)")
    }

    @Test func aspectPadsWithBandsOrCropsToTheRatioAfterResizing() async throws {
        let harness = try Self.harness([
            ("pad", ["aspect: 4:5"]),
            ("padblack", ["aspect: \"1:1\"", "background: black", "width: 200"]),
            ("cut", ["aspect: 4:5", "aspectMode: crop"]),
            ("cutwest", ["aspect: 4:5", "aspectMode: crop", "gravity: west"]),
        ])
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        let names = ["pad-a.png", "padblack-a.png", "cut-a.png", "cutwest-a.png"]
        try Self.makeSources(names, in: staging)
        let source = harness.directory.appending("source.png")
        try FileManager.default.copyItem(atPath: staging.appending(names[0]).string, toPath: source.string)
        try harness.moveIn(names, from: staging)

        let sidecars = try await harness.waitForSidecars(names.count)

        // 400x300 padded to 4:5 is 400x500 with 100-pixel bands above and below, transparent by default on PNG;
        // resized to 200x150 first, then padded to 200x200 in black; cut to 4:5 is 240x300.
        let expected: [(name: String, arguments: [String], width: Int, height: Int)] = [
            ("pad-a", ["-background", "none", "-gravity", "center", "-extent", "400x500"], 400, 500),
            (
                "padblack-a",
                [
                    "-filter", "Lanczos", "-resize", "200x150", "-background", "black", "-gravity", "center", "-extent",
                    "200x200",
                ],
                200, 200
            ),
            ("cut-a", ["-crop", "240x300+80+0", "+repage"], 240, 300),
            ("cutwest-a", ["-crop", "240x300+0+0", "+repage"], 240, 300),
        ]
        for (name, arguments, width, height) in expected {
            #expect(sidecars["\(name).png.chute.json"]?.status == .completed, "\(name)")
            let output = harness.outbox.appending("\(name).png")
            let info = try Fixtures.identify(output)
            #expect(info.width == width && info.height == height, "\(name): \(info)")
            let reference = harness.directory.appending("\(name)-expected.png")
            try Self.reference(source, arguments, reference)
            // Both resize with a Lanczos filter; allow for rounding in the resampled pixels.
            let fuzz = name == "padblack-a" ? "1%" : "0%"
            #expect(try Self.differingPixels(output, reference, fuzz: fuzz) == 0, "\(name)")
        }
        #expect(try Self.pixel(harness.outbox.appending("pad-a.png"), x: 200, y: 50).hasSuffix(",0)"))
        #expect(try Self.pixel(harness.outbox.appending("pad-a.png"), x: 200, y: 250).hasSuffix(",0)") == false)
        #expect(try Self.pixel(harness.outbox.appending("padblack-a.png"), x: 100, y: 10) == "srgb(0,0,0)")
    }

    /// How many pixels differ between the same `geometry` (`WxH+X+Y`) of two images of one size.
    private static func differingPixels(_ first: FilePath, _ second: FilePath, in geometry: String) throws -> Int {
        let folder = first.removingLastComponent()
        let (left, right) = (folder.appending("left-part.png"), folder.appending("right-part.png"))
        try Self.reference(first, ["-crop", geometry, "+repage"], left)
        try Self.reference(second, ["-crop", geometry, "+repage"], right)
        return try Self.differingPixels(left, right)
    }

    @Test func watermarkLaysTextOrAnImageWhereAndAsStronglyAsTheRuleSays() async throws {
        let logo = try TemporaryDirectory(prefix: "logo")
        defer { logo.remove() }
        let logoPath = logo.appending("logo.png")
        try CommandLineTool.run([Fixtures.convert, "-size", "60x40", "xc:#ff0000", logoPath.string])
        let harness = try Self.harness([
            (
                "text",
                [
                    "watermark: \"© 2026 Me\"", "watermarkPosition: southwest", "watermarkOpacity: 1",
                    "watermarkSize: 0.5",
                ]
            ),
            ("logo", ["watermarkImage: \(logoPath.string)", "watermarkOpacity: 0.5", "watermarkSize: 0.5"]),
        ])
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        let names = ["text-a.png", "logo-a.png"]
        try Self.makeSources(names, in: staging)
        let source = harness.directory.appending("source.png")
        try FileManager.default.copyItem(atPath: staging.appending(names[0]).string, toPath: source.string)
        try harness.moveIn(names, from: staging)

        let sidecars = try await harness.waitForSidecars(names.count)

        #expect(sidecars["text-a.png.chute.json"]?.status == .completed)
        #expect(sidecars["logo-a.png.chute.json"]?.status == .completed)
        // The text, half the width of the 400x300 image, sits 6 pixels (2 % of 300) in from the bottom left corner:
        // the top and the bottom right are the source's, the bottom left is not.
        let text = harness.outbox.appending("text-a.png")
        #expect(try Self.differingPixels(text, source, in: "400x200+0+0") == 0)
        #expect(try Self.differingPixels(text, source, in: "180x100+220+200") == 0)
        #expect(try Self.differingPixels(text, source, in: "200x100+0+200") > 1000)
        // The logo, 200x133 at half opacity in the bottom right corner, is what the command line makes of it.
        let reference = harness.directory.appending("logo-expected.png")
        try Self.reference(
            source,
            [
                "(", logoPath.string, "-filter", "Lanczos", "-resize", "200x133!", "-alpha", "set", "-channel", "A",
                "-evaluate", "multiply", "0.5", "+channel", ")", "-geometry", "+194+161", "-composite",
            ],
            reference
        )
        let marked = harness.outbox.appending("logo-a.png")
        #expect(try Self.differingPixels(marked, reference, fuzz: "1%") == 0)
        #expect(try Self.differingPixels(marked, source, in: "400x150+0+0") == 0)
        #expect(try Self.differingPixels(marked, source, in: "200x133+194+161") == 200 * 133)
    }

    @Test func aMissingWatermarkImageIsAnErrorOfTheRulesFile() async throws {
        let harness = try Self.harness([("logo", ["watermarkImage: /nonexistent/logo.png"])])
        defer { harness.stop() }
        let check = try ChuteProcess(["check", harness.configPath.string])
        let exit = try await check.waitForExit()
        #expect(exit.status != 0)
        #expect(
            check.log.contains {
                $0.contains(":9:21: no readable file at '/nonexistent/logo.png' for 'watermarkImage'")
            },
            "\(check.log)"
        )
    }

    @Test(.timeLimit(.minutes(5)))
    func maxFileSizeLandsTenDifferentPhotosUnderTheTarget() async throws {
        let harness = try Self.harness([("fit", ["maxFileSize: 300KB"])], to: "jpg")
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        // Smooth and noisy, small and large, wide and tall: some fit at the default quality, some need a lower
        // one, and pure noise needs scaling down as well.
        let photos: [(size: String, arguments: [String])] = [
            ("1800x1200", ["plasma:fractal", "-attenuate", "0.5", "+noise", "Gaussian"]),
            ("1200x900", ["plasma:fractal"]),
            ("1400x1400", ["xc:gray", "+noise", "Random"]),
            ("2100x1400", ["gradient:#204080-#f0c020", "-attenuate", "0.3", "+noise", "Uniform"]),
            ("2400x1800", ["plasma:fractal"]),
            ("640x480", ["gradient:#000000-#ffffff"]),
            ("1200x1200", ["pattern:checkerboard", "-attenuate", "0.4", "+noise", "Laplacian"]),
            ("2100x700", ["plasma:fractal", "+noise", "Poisson"]),
            ("1600x1200", ["xc:gray", "+noise", "Random", "-blur", "0x1"]),
            ("400x2400", ["plasma:fractal", "-attenuate", "0.2", "+noise", "Impulse"]),
        ]
        var names: [String] = []
        for (index, photo) in photos.enumerated() {
            let name = "fit-\(index + 1).png"
            try CommandLineTool.run(
                [Fixtures.convert, "-size", photo.size] + photo.arguments + [staging.appending(name).string]
            )
            names.append(name)
        }
        try harness.moveIn(names, from: staging)

        let sidecars = try await harness.waitForSidecars(names.count, timeout: 240)

        var qualities: [Int] = []
        var scaled = 0
        for (index, photo) in photos.enumerated() {
            let sidecar = try #require(sidecars["fit-\(index + 1).jpg.chute.json"], "\(photo)")
            #expect(sidecar.status == .completed, "\(photo)")
            let output = harness.outbox.appending("fit-\(index + 1).jpg")
            let bytes = try #require(try FileManager.default.attributesOfItem(atPath: output.string)[.size] as? Int)
            #expect(bytes <= 300_000, "\(photo): \(bytes) bytes")
            let quality = try #require(sidecar.details["quality"].flatMap { Int($0) }, "\(photo)")
            #expect((40...85).contains(quality), "\(photo): quality \(quality)")
            // What the encoder wrote is what the sidecar says it chose.
            #expect(try Fixtures.identify(output).quality == quality, "\(photo)")
            let encodes = try #require(sidecar.details["encodes"].flatMap { Int($0) }, "\(photo)")
            #expect(encodes <= 10, "\(photo): \(encodes) encodes")
            qualities.append(quality)
            if sidecar.details["scale"] != nil {
                scaled += 1
                #expect(quality == 40, "\(photo): scaled down at quality \(quality)")
            } else {
                let info = try Fixtures.identify(output)
                #expect("\(info.width)x\(info.height)" == photo.size, "\(photo)")
            }
        }
        #expect(qualities.contains(85), "\(qualities)")
        #expect(qualities.contains { $0 > 40 && $0 < 85 }, "\(qualities)")
        #expect(scaled >= 1)
    }

    @Test func toSameKeepsEachFilesOwnFormatByItsContent() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: smaller
                    match: ["same-*", "zz-sentinel-*"]
                    to: same
                    output: ./outbox
                    width: 100
                    rename: "{stem}-small.{ext}"
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        // The last one is a JPEG named .png: its content decides.
        let sources = ["same-a.png", "same-b.jpg", "same-c.webp", "same-d.gif", "same-e.tif", "same-f.png"]
        for name in sources.dropLast() {
            try Fixtures.makeImage(at: staging.appending(name), width: 400, height: 300)
        }
        try Fixtures.makeImage(at: staging.appending("f.jpg"), width: 400, height: 300)
        try FileManager.default.moveItem(
            atPath: staging.appending("f.jpg").string,
            toPath: staging.appending("same-f.png").string
        )
        try harness.moveIn(sources, from: staging)

        let sidecars = try await harness.waitForSidecars(sources.count)

        let expected = [
            ("same-a-small.png", "PNG", "png"), ("same-b-small.jpg", "JPEG", "jpg"),
            ("same-c-small.webp", "WEBP", "webp"), ("same-d-small.gif", "GIF", "gif"),
            ("same-e-small.tiff", "TIFF", "tiff"), ("same-f-small.jpg", "JPEG", "jpg"),
        ]
        for (name, coder, format) in expected {
            let sidecar = try #require(sidecars["\(name).chute.json"], "\(name): \(sidecars.keys.sorted())")
            #expect(sidecar.status == .completed, "\(name)")
            #expect(sidecar.parameters.format == format, "\(name)")
            let info = try Fixtures.identify(harness.outbox.appending(name))
            #expect(info.format == coder && info.width == 100 && info.height == 75, "\(name): \(info)")
        }
    }

    /// Issue 27: `shortSide` and `longSide` bound a photo's short or long side as it is shown, after its EXIF
    /// orientation: a landscape photo, a portrait one and one stored landscape but turned upright by its orientation
    /// (6); `chute check` says which side each rule bounds.
    @Test func shortSideAndLongSideBoundAPhotoWhicheverWayItIsTurned() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: short
                    match: ["short-*.jpg"]
                    to: jpg
                    shortSide: 120
                    output: ./outbox
                  - name: long
                    match: ["long-*.jpg"]
                    to: jpg
                    longSide: 200
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        let check = try ChuteProcess(["check", harness.configPath.string])
        let exit = try await check.waitForExit()
        let summary = check.output.joined(separator: "\n")
        print("chute check (\(exit.status)):\n\(summary)\n\(check.log.joined(separator: "\n"))")
        #expect(exit.status == 0)
        #expect(summary.contains("short side ≤ 120") && summary.contains("long side ≤ 200"), "\(summary)")
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        for side in ["short", "long"] {
            try Fixtures.makeImage(at: staging.appending("\(side)-landscape.jpg"), width: 400, height: 300)
            try Fixtures.makeImage(at: staging.appending("\(side)-portrait.jpg"), width: 300, height: 400)
            try MetadataFixtures.makeJPEG(at: staging.appending("\(side)-turned.jpg"), size: "400x300", orientation: 6)
        }
        let expected = [
            "short-landscape": (160, 120), "short-portrait": (120, 160), "short-turned": (120, 160),
            "long-landscape": (200, 150), "long-portrait": (150, 200), "long-turned": (150, 200),
        ]
        try harness.moveIn(expected.keys.map { "\($0).jpg" }, from: staging)

        let sidecars = try await harness.waitForSidecars(expected.count)
        for (stem, size) in expected.sorted(by: { $0.key < $1.key }) {
            let sidecar = try #require(sidecars["\(stem).jpg\(Sidecar.fileSuffix)"], "no sidecar for \(stem)")
            #expect(sidecar.status == .completed, "\(stem): \(String(describing: sidecar.error))")
            let output = try Fixtures.identify(harness.outbox.appending("\(stem).jpg"))
            print("\(stem): \(output.width)x\(output.height), orientation \(output.orientation)")
            #expect(output.width == size.0 && output.height == size.1, "\(stem): \(output.width)x\(output.height)")
        }
    }
}
