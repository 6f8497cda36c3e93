import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon, on rules with `strip: true`, takes everything that says where and who out of photos, keeps
/// their colour profile, stands them upright, and leaves a JPEG's image data as it was whenever it can.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct PrivacyEndToEndTests {
    /// `*.jpg` (and the harness's PNG sentinels) to JPEG, and `*.jpeg` to PNG, both with `strip: true`.
    private static func harness() throws -> DaemonHarness {
        try DaemonHarness(
            rules: """
                  - name: private-jpg
                    match: ["*.jpg", "*.png"]
                    to: jpg
                    strip: true
                    output: ./outbox
                  - name: private-png
                    match: ["*.jpeg"]
                    to: png
                    strip: true
                    output: ./outbox
                """
        )
    }

    /// Checks that `output` has no metadata but its ICC profile, and that no value of the fixtures' metadata is in
    /// its sidecar or the daemon's log.
    private static func expectOnlyTheProfile(
        _ output: FilePath,
        harness: DaemonHarness,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let tags = try MetadataFixtures.tags(of: output)
        let groups = Set(tags.keys.compactMap { $0.split(separator: ":").first.map(String.init) })
        #expect(
            groups.isDisjoint(with: MetadataFixtures.metadataGroups),
            "\(groups.sorted())",
            sourceLocation: sourceLocation
        )
        #expect(try MetadataFixtures.gpsTags(of: output) == "", sourceLocation: sourceLocation)
        #expect(tags["File:Comment"] == nil && tags["PNG:Comment"] == nil, sourceLocation: sourceLocation)
        #expect(
            tags["ICC_Profile:ProfileDescription"] == "Compatible with Adobe RGB (1998)",
            sourceLocation: sourceLocation
        )
        let everything = try CommandLineTool.run(["exiftool", "-a", "-G1", "-b", "-j", output.string]).standardOutput
        let sidecar = try String(contentsOfFile: output.string + Sidecar.fileSuffix, encoding: .utf8)
        let log = harness.daemon?.log.joined(separator: "\n") ?? ""
        for secret in MetadataFixtures.secrets {
            #expect(!sidecar.contains(secret), "the sidecar holds \(secret)", sourceLocation: sourceLocation)
            #expect(!log.contains(secret), "the log holds \(secret)", sourceLocation: sourceLocation)
            #expect(!everything.contains(secret), "the output holds \(secret)", sourceLocation: sourceLocation)
        }
    }

    @Test func stripLeavesAJPEGsImageDataByteForByte() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try MetadataFixtures.makeJPEG(at: staging.appending("IMG_0001.jpg"), orientation: 1)
        let sourceMD5 = try MetadataFixtures.decodedMD5(of: staging.appending("IMG_0001.jpg"))
        try harness.moveIn(["IMG_0001.jpg"], from: staging)

        let sidecars = try await harness.waitForSidecars(1)

        let sidecar = try #require(sidecars["IMG_0001.jpg.chute.json"])
        #expect(sidecar.status == .completed)
        #expect(sidecar.details["pixels"] == "unchanged")
        #expect(sidecar.details["metadataRemoved"] == "exif,gps,thumbnail,xmp,iptc,comment")
        let output = harness.outbox.appending("IMG_0001.jpg")
        try Self.expectOnlyTheProfile(output, harness: harness)
        #expect(try MetadataFixtures.decodedMD5(of: output) == sourceMD5)
    }

    @Test func stripTurnsARotatedJPEGUprightInItsDCTBlocks() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        let source = staging.appending("IMG_0002.jpg")
        try MetadataFixtures.makeJPEG(at: source, size: "200x120", sampling: "1x1", orientation: 6)
        let upright = harness.directory.appending("upright.png")
        try CommandLineTool.run(["convert", source.string, "-auto-orient", upright.string])
        let quality = try Fixtures.identify(source).quality
        try harness.moveIn(["IMG_0002.jpg"], from: staging)

        let sidecars = try await harness.waitForSidecars(1)

        let sidecar = try #require(sidecars["IMG_0002.jpg.chute.json"])
        #expect(sidecar.status == .completed)
        #expect(sidecar.details["pixels"] == "rotated losslessly (orientation 6)")
        let output = harness.outbox.appending("IMG_0002.jpg")
        try Self.expectOnlyTheProfile(output, harness: harness)
        let info = try Fixtures.identify(output)
        #expect(info.width == 120 && info.height == 200)
        // Not re-encoded: the same quantisation tables, and the pixels of the source turned upright (within the
        // rounding of an inverse DCT run the other way round).
        #expect(info.quality == quality)
        #expect(try MetadataFixtures.psnr(output, upright) > 50)
    }

    @Test func stripReencodesARotatedJPEGWhoseMovedEdgeHasPartialBlocks() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        // 4:2:0 has 16x16 blocks; rotating by 90° moves the bottom edge, where 121 leaves a partial row.
        try MetadataFixtures.makeJPEG(at: staging.appending("IMG_0003.jpg"), size: "203x121", sampling: "2x2")
        try harness.moveIn(["IMG_0003.jpg"], from: staging)

        let sidecars = try await harness.waitForSidecars(1)

        let sidecar = try #require(sidecars["IMG_0003.jpg.chute.json"])
        #expect(sidecar.status == .completed)
        #expect(sidecar.details["pixels"]?.hasPrefix("reencoded (orientation 6: a 203x121 image") == true)
        let output = harness.outbox.appending("IMG_0003.jpg")
        try Self.expectOnlyTheProfile(output, harness: harness)
        let info = try Fixtures.identify(output)
        #expect(info.width == 121 && info.height == 203)
    }

    @Test func stripKeepsTheColourProfileInAPNGMadeFromAJPEG() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try MetadataFixtures.makeJPEG(at: staging.appending("IMG_0004.jpeg"), orientation: 6)
        try harness.moveIn(["IMG_0004.jpeg"], from: staging)

        let sidecars = try await harness.waitForSidecars(1)

        let sidecar = try #require(sidecars["IMG_0004.png.chute.json"])
        #expect(sidecar.status == .completed)
        #expect(sidecar.details["metadataRemoved"] == "exif,gps,thumbnail,xmp,iptc,comment")
        let output = harness.outbox.appending("IMG_0004.png")
        try Self.expectOnlyTheProfile(output, harness: harness)
        let tags = try MetadataFixtures.tags(of: output)
        #expect(tags.keys.filter { $0.hasPrefix("PNG:") && $0.lowercased().contains("date") }.isEmpty)
        let info = try Fixtures.identify(output)
        #expect(info.width == 120 && info.height == 200)
    }

    /// `metadata: location` on the daemon: the GPS directory goes and everything else stays (camera, date, ICC
    /// profile), with the image data untouched; `metadata: strip` is `strip: true` by its new name.
    @Test func metadataLocationRemovesOnlyWhere() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: no-location
                    match: ["*.jpg", "*.png"]
                    to: jpg
                    metadata: location
                    output: ./outbox
                  - name: no-metadata
                    match: ["*.jpeg"]
                    to: jpg
                    metadata: strip
                    rename: "{stem}-stripped.{ext}"
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try MetadataFixtures.makeJPEG(at: staging.appending("IMG_0010.jpg"), orientation: 1)
        try MetadataFixtures.makeJPEG(at: staging.appending("IMG_0011.jpeg"), orientation: 1)
        let sourceMD5 = try MetadataFixtures.decodedMD5(of: staging.appending("IMG_0010.jpg"))
        let before = try MetadataFixtures.tags(of: staging.appending("IMG_0010.jpg"))
        #expect(try MetadataFixtures.gpsTags(of: staging.appending("IMG_0010.jpg")) != "")
        try harness.moveIn(["IMG_0010.jpg", "IMG_0011.jpeg"], from: staging)

        let sidecars = try await harness.waitForSidecars(2)

        let located = try #require(sidecars["IMG_0010.jpg.chute.json"])
        #expect(located.status == .completed)
        #expect(located.parameters.options["metadata"] == "location")
        #expect(located.details["pixels"] == "unchanged")
        let output = harness.outbox.appending("IMG_0010.jpg")
        #expect(try MetadataFixtures.gpsTags(of: output) == "")
        let after = try MetadataFixtures.tags(of: output)
        for kept in ["IFD0:Make", "IFD0:Model", "ExifIFD:DateTimeOriginal", "ICC_Profile:ProfileDescription"] {
            #expect(after[kept] != nil && after[kept] == before[kept], "\(kept): \(after[kept] ?? "gone")")
        }
        #expect(try MetadataFixtures.decodedMD5(of: output) == sourceMD5)
        let stripped = try #require(sidecars["IMG_0011-stripped.jpg.chute.json"])
        #expect(stripped.status == .completed)
        try Self.expectOnlyTheProfile(harness.outbox.appending("IMG_0011-stripped.jpg"), harness: harness)
    }
}
