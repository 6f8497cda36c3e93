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
        }
    }
}
