import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon writes and reads the image formats of issue 11 beyond the first seven (JPEG 2000, OpenEXR, SGI,
/// Sun raster, TGA, PAM, AVIF, XWD), and says in the sidecar which frames of an animation it kept.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ImageFormatsEndToEndTests {
    /// The rule that takes the harness's PNG sentinels (see ``DaemonHarness/waitForSidecars(_:timeout:)``), followed

    /// Makes each file with `make` in a staging folder, then moves them all into the inbox.
    private static func drop(
        _ names: [String],
        into harness: DaemonHarness,
        make: (String, FilePath) throws -> Void
    ) throws {
        let staging = try harness.directory.makeDirectory("staging")
        for name in names {
            try make(name, staging.appending(name))
        }
        try harness.moveIn(names, from: staging)
    }

    /// What `identify` says of every frame: `FORMAT WxH` lines.
    private static func frames(of path: FilePath) throws -> [String] {
        let result = try CommandLineTool.run([Fixtures.identify, "-format", "%m %wx%h\n", path.string])
        return result.standardOutput.split(separator: "\n").map(String.init)
    }

    /// The normalised root-mean-square difference between `reference` and `candidate`, as `compare -metric RMSE`
    /// prints it. `candidate` is first decoded to PNG by `convert`: `compare` takes the YCbCr samples of a HEIF
    /// file as they are.
    private static func rmse(_ reference: FilePath, _ candidate: FilePath) throws -> Double {
        let decoded = FilePath(candidate.string + ".decoded.png")
        try CommandLineTool.run([Fixtures.convert, candidate.string, decoded.string])
        defer { try? FileManager.default.removeItem(atPath: decoded.string) }
        // compare exits 1 when the images differ at all, which is not a failure here.
        let result = try CommandLineTool.run(
            ["compare-im6.q16", "-metric", "RMSE", reference.string, decoded.string, "null:"],
            check: false
        )
        let text = result.standardError
        guard result.status <= 1, let open = text.firstIndex(of: "("), let close = text.firstIndex(of: ")"),
            let value = Double(text[text.index(after: open)..<close])
        else {
            throw UnreadableComparison(output: text)
        }
        return value
    }

    /// `compare` printed no metric.
    private struct UnreadableComparison: Error {
        var output: String
    }

    @Test func aDroppedPNGBecomesEachNewFormat() async throws {
        // Target, ImageMagick's name for what it reads back, and the largest RMSE allowed against the source.
        let targets: [(name: String, format: String, bound: Double)] = [
            ("jp2", "JP2", 0.01), ("exr", "EXR", 0.002), ("sgi", "SGI", 0.002), ("ras", "SUN", 0.002),
            ("tga", "TGA", 0.002), ("pam", "PAM", 0.002), ("avif", "AVIF", 0.02), ("xwd", "XWD", 0.002),
        ]
        let rules = targets.map { target in
            """
              - name: to-\(target.name)
                match: "*-\(target.name).png"
                to: \(target.name)
                output: ./outbox
            """
        }
        let harness = try DaemonHarness(afterSentinels: rules.joined(separator: "\n"))
        defer { harness.stop() }
        try await harness.start()
        let names = targets.map { "photo-\($0.name).png" }
        let originals = try harness.directory.makeDirectory("originals")
        try Self.drop(names, into: harness) { name, path in
            try Fixtures.makeImage(at: path, width: 97, height: 61)
            try FileManager.default.copyItem(atPath: path.string, toPath: originals.appending(name).string)
        }

        let sidecars = try await harness.waitForSidecars(targets.count)

        for target in targets {
            let name = "photo-\(target.name).\(target.name)"
            let sidecar = sidecars["\(name).chute.json"]
            #expect(sidecar?.status == .completed, "\(name): \(sidecar?.error?.message ?? "no sidecar")")
            guard sidecar?.status == .completed else { continue }
            let output = harness.outbox.appending(name)
            // ImageMagick 6 reads an AVIF file with its HEIC coder, and names it so.
            let expected = target.format == "AVIF" ? "HEIC" : target.format
            #expect(try Self.frames(of: output) == ["\(expected) 97x61"], "\(name)")
            let difference = try Self.rmse(originals.appending("photo-\(target.name).png"), output)
            #expect(difference <= target.bound, "\(name) differs from its source by RMSE \(difference)")
        }
    }

    @Test func filesInTheNewFormatsAreRecognisedAndRead() async throws {
        // Input extension, ImageMagick's coder name to write it, the sniffed type, and the largest RMSE allowed.
        let inputs: [(name: String, coder: String, type: String, bound: Double)] = [
            ("sgi", "SGI", "sgi", 0.002), ("ras", "SUN", "sunraster", 0.002), ("xwd", "XWD", "xwd", 0.002),
            ("tga", "TGA", "tga", 0.002), ("pam", "PAM", "netpbm", 0.002), ("pfm", "PFM", "netpbm", 0.002),
            ("exr", "EXR", "openexr", 0.002), ("jp2", "JP2", "jpeg2000", 0.002),
        ]
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: to-png
                    match: [\(inputs.map { "\"*.\($0.name)\"" }.joined(separator: ", "))]
                    to: png
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let source = harness.directory.appending("source.png")
        try Fixtures.makeImage(at: source, width: 97, height: 61)
        try Self.drop(inputs.map { "scan-\($0.name).\($0.name)" }, into: harness) { name, path in
            let coder = inputs.first { name.hasSuffix(".\($0.name)") }?.coder ?? ""
            try CommandLineTool.run([Fixtures.convert, source.string, "\(coder):\(path.string)"])
        }

        let sidecars = try await harness.waitForSidecars(inputs.count)

        for input in inputs {
            let name = "scan-\(input.name).png"
            let sidecar = sidecars["\(name).chute.json"]
            #expect(sidecar?.status == .completed, "\(name): \(sidecar?.error?.message ?? "no sidecar")")
            #expect(sidecar?.source.sniffedType == input.type, "\(name)")
            guard sidecar?.status == .completed else { continue }
            let output = harness.outbox.appending(name)
            #expect(try Self.frames(of: output) == ["PNG 97x61"], "\(name)")
            let difference = try Self.rmse(source, output)
            #expect(difference <= input.bound, "\(name) differs from its source by RMSE \(difference)")
        }
    }

    @Test func anAnimationKeepsItsFramesOnlyWhereTheTargetHoldsThem() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: stills
                    match: "*-still.gif"
                    to: jpg
                    output: ./outbox
                  - name: animations
                    match: "*-moving.gif"
                    to: webp
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop(["spin-still.gif", "spin-moving.gif"], into: harness) { _, path in
            let colours = [
                "red", "lime", "blue", "yellow", "cyan", "magenta", "white", "black", "gray", "orange",
                "purple", "brown",
            ]
            try CommandLineTool.run(
                [Fixtures.convert, "-delay", "10", "-size", "40x30"] + colours.map { "xc:\($0)" } + [path.string]
            )
        }

        let sidecars = try await harness.waitForSidecars(2)

        let still = sidecars["spin-still.jpg.chute.json"]
        #expect(still?.status == .completed)
        #expect(still?.details["inputFrames"] == "12")
        #expect(still?.details["frames"] == "first of 12")
        #expect(try Self.frames(of: harness.outbox.appending("spin-still.jpg")) == ["JPEG 40x30"])
        let moving = sidecars["spin-moving.webp.chute.json"]
        #expect(moving?.status == .completed)
        #expect(moving?.details["frames"] == "all 12")
        #expect(try Self.frames(of: harness.outbox.appending("spin-moving.webp")).count == 12)
    }

    /// Headerless raw pixels are read only by a rule that declares their layout: a 16-bit RGB capture of the
    /// declared size converts; a file of another size fails as damaged, naming both sizes.
    @Test func rawPixelsAreReadInTheLayoutTheRuleDeclares() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: raw-camera
                    match: "*.rgb"
                    to: png
                    output: ./outbox
                    rawFormat: rgb
                    rawSize: 40x30
                    rawDepth: 16
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let source = harness.directory.appending("source.png")
        try Fixtures.makeImage(at: source, width: 40, height: 30)
        let short = harness.directory.appending("short.png")
        try Fixtures.makeImage(at: short, width: 40, height: 29)
        try Self.drop(["frame.rgb", "short.rgb"], into: harness) { name, path in
            let from = name == "frame.rgb" ? source : short
            try CommandLineTool.run([Fixtures.convert, from.string, "-depth", "16", "RGB:\(path.string)"])
        }

        let sidecars = try await harness.waitForSidecars(2)

        let frame = sidecars["frame.png.chute.json"]
        #expect(frame?.status == .completed, "\(frame?.error?.message ?? "no sidecar")")
        #expect(frame?.parameters.options["rawSize"] == "40x30")
        #expect(try Self.frames(of: harness.outbox.appending("frame.png")) == ["PNG 40x30"])
        #expect(try Self.rmse(source, harness.outbox.appending("frame.png")) == 0)
        let cut = sidecars["short.png.chute.json"]
        #expect(cut?.status == .failed)
        #expect(cut?.error?.code == "corruptInput")
        #expect(cut?.error?.message.contains("has 6960 bytes, and raw RGB 40x30 at 16 bits takes 7200") == true)
    }
}
