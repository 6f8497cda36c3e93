import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Motion photos (a JPEG still with a video appended, as Pixel and Samsung phones write them) are taken as soon as
/// they are whole, not after `incompleteTimeout`, and the sidecar says that their video was left out.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct MotionPhotoEndToEndTests {
    /// A Google and a Samsung motion photo made at test time (and the corpus's Pixel 4 XL one, when the corpus is
    /// there) are converted well before `incompleteTimeout` (10 minutes), re-encoded under `metadata: location` and
    /// cut losslessly under `strip: true`; each sidecar lists `motionPhotoVideo`.
    @Test func aMotionPhotoIsTakenAtOnceAndItsVideoIsListedAsRemoved() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: reencode
                    match: ["*.jpg"]
                    to: jpg
                    quality: 0.85
                    metadata: location
                    output: ./outbox
                  - name: lossless
                    match: ["*.jpeg"]
                    to: jpg
                    strip: true
                    output: ./outbox
                """,
            settings: "  incompleteTimeout: 10m"
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try MetadataFixtures.makeMotionPhoto(at: staging.appending("PXL_google.jpg"), layout: .google)
        try MetadataFixtures.makeMotionPhoto(at: staging.appending("PXL_google-strip.jpeg"), layout: .google)
        try MetadataFixtures.makeMotionPhoto(at: staging.appending("SAMSUNG.jpg"), layout: .samsung)
        try MetadataFixtures.makeMotionPhoto(at: staging.appending("SAMSUNG-strip.jpeg"), layout: .samsung)
        var names = ["PXL_google.jpg", "PXL_google-strip.jpeg", "SAMSUNG.jpg", "SAMSUNG-strip.jpeg"]
        if Corpus.isPresent {
            try FileManager.default.copyItem(
                atPath: Corpus.folder.appending("image/jpeg_motionphoto_pixel4xl_orient6.jpg").string,
                toPath: staging.appending("pixel4xl.jpg").string
            )
            names.append("pixel4xl.jpg")
        }
        try harness.moveIn(names, from: staging)

        // Far less than the 10 minutes the daemon would wait for a file it took for one still being written.
        let sidecars = try await harness.waitForSidecars(names.count, timeout: 60)

        // The corpus's file was taken at once too (it has a sidecar), but androidx cut its scan data short, which
        // the decoder refuses (`corruptInput`): only the files made here are converted.
        #expect(sidecars.count == names.count)
        for name in names where name != "pixel4xl.jpg" {
            let stem = name.split(separator: ".").first.map(String.init) ?? name
            let sidecar = try #require(sidecars["\(stem).jpg\(Sidecar.fileSuffix)"], "no sidecar for \(name)")
            #expect(sidecar.status == .completed, "\(name): \(sidecar.status)")
            let removed = (sidecar.details["metadataRemoved"] ?? "").split(separator: ",")
            #expect(
                removed.contains("motionPhotoVideo") && removed.contains("gps"),
                "\(name): metadataRemoved \(removed)"
            )
        }
    }

    /// Issue 27: an Android motion-photo HEIC (the corpus's, whose video is a top-level `mpvd` box after the image's
    /// boxes) becomes a JPEG without the video, and the sidecar lists `motionPhotoVideo` under `metadataRemoved`; a
    /// HEIC without such a box lists nothing.
    @Test(.enabled(if: Corpus.isPresent, "the shared corpus (../shared/corpus) is absent"))
    func aHEICMotionPhotosVideoIsListedAsRemoved() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: photos
                    match: ["*.heic"]
                    to: jpg
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        let sources = ["motion.heic": "image/heic_android_motionphoto.heic", "still.heic": "image/heic_xiaomi.heic"]
        for (name, path) in sources {
            try FileManager.default.copyItem(
                atPath: Corpus.folder.appending(path).string,
                toPath: staging.appending(name).string
            )
        }
        try harness.moveIn(Array(sources.keys), from: staging)

        let sidecars = try await harness.waitForSidecars(sources.count, timeout: 120)
        let motion = try #require(sidecars["motion.jpg\(Sidecar.fileSuffix)"])
        let still = try #require(sidecars["still.jpg\(Sidecar.fileSuffix)"])
        print("motion.heic: \(motion.status) metadataRemoved=\(motion.details["metadataRemoved"] ?? "none")")
        print("still.heic: \(still.status) metadataRemoved=\(still.details["metadataRemoved"] ?? "none")")
        #expect(motion.status == .completed, "\(String(describing: motion.error))")
        #expect(motion.details["metadataRemoved"] == "motionPhotoVideo", "\(motion.details)")
        #expect(still.status == .completed, "\(String(describing: still.error))")
        #expect(still.details["metadataRemoved"] == nil, "\(still.details)")
    }
}
