import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon makes videos that play on what people play them on: mp4, mov and m4v get 8-bit 4:2:0 H.264
/// unless the rule says otherwise, "720p" bounds the short side when the rule says `shortSide`, and HDR becomes SDR
/// in an 8-bit encode.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct MediaPlaybackEndToEndTests {
    /// Copies corpus files into the inbox under new names, through a staging folder.
    private static func drop(_ files: [String: String], into harness: DaemonHarness) throws {
        let staging = try harness.directory.makeDirectory("staging")
        for (name, path) in files {
            try FileManager.default.copyItem(
                atPath: Corpus.folder.appending(path).string,
                toPath: staging.appending(name).string
            )
        }
        try harness.moveIn(Array(files.keys), from: staging)
    }

    /// Requires a completed sidecar for `name` and returns the output's first video stream as `ffprobe` sees it.
    private static func video(
        _ name: String,
        in harness: DaemonHarness,
        sidecars: [String: Sidecar]
    ) throws
        -> [String: Any]
    {
        let sidecar = try #require(sidecars["\(name).chute.json"], "\(name): \(sidecars.keys.sorted())")
        #expect(sidecar.status == .completed, "\(name): \(String(describing: sidecar.error))")
        return try #require(MediaFixtures.probe(harness.outbox.appending(name)).streams("video").first, "\(name)")
    }

    /// VP9 in 10 bits, AV1 and HEVC fit in an MP4, but many TVs, browsers and phones do not play them there: `to: mp4`
    /// re-encodes them to 8-bit H.264, and only `videoCodec: copy` keeps them.
    @Test func mp4GetsPlayableH264UnlessTheRuleSaysCopy() async throws {
        try #require(Corpus.isPresent, "the corpus is missing at \(Corpus.folder)")
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: web
                    match: ["*.webm", "*.mkv", "hevc.mp4"]
                    to: mp4
                    output: ./outbox
                  - name: as-is
                    match: "keep-*.mp4"
                    to: mov
                    videoCodec: copy
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop(
            [
                "vp9.webm": "video/webm_vp9_10bit.webm",
                "av1.mkv": "video/mkv_av1_10bit_portrait.mkv",
                "hevc.mp4": "video/mp4_hevc_bframes.mp4",
                "keep-hevc.mp4": "video/mp4_hevc_bframes.mp4",
            ],
            into: harness
        )
        let sidecars = try await harness.waitForSidecars(4)
        for name in ["vp9.mp4", "av1.mp4", "hevc.mp4"] {
            let video = try Self.video(name, in: harness, sidecars: sidecars)
            #expect(video["codec_name"] as? String == "h264", "\(name): \(video["codec_name"] ?? "")")
            #expect(video["pix_fmt"] as? String == "yuv420p", "\(name): \(video["pix_fmt"] ?? "")")
            #expect(sidecars["\(name).chute.json"]?.details["mode"] == "transcode")
        }
        let kept = try Self.video("keep-hevc.mov", in: harness, sidecars: sidecars)
        #expect(kept["codec_name"] as? String == "hevc")
        #expect(sidecars["keep-hevc.mov.chute.json"]?.details["mode"] == "remux")
    }

    /// `shortSide: 240` makes a landscape clip 426×240 and a portrait phone clip (stored landscape, turned by its
    /// matrix) 240×426 as shown, where `height: 240` would make the portrait one 134×240; `chute check` says which
    /// side the rule bounds.
    @Test func shortSideBoundsTheShortSideWhicheverWayTheClipIsTurned() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: p240
                    match: ["*.mkv", "*.mov"]
                    to: mp4
                    shortSide: 240
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        let check = try ChuteProcess(["check", harness.configPath.string])
        _ = try await check.waitForExit()
        let summary = check.output.joined(separator: "\n")
        #expect(summary.contains("short side ≤ 240"), "\(summary)")
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        let landscape = staging.appending("landscape.mkv")
        try MediaFixtures.makeClip(
            at: landscape,
            width: 640,
            height: 360,
            seconds: 1,
            codecArguments: MediaFixtures.h264AAC
        )
        try MediaFixtures.remux(
            landscape,
            to: staging.appending("phone.mov"),
            arguments: ["-c", "copy", "-metadata:s:v:0", "rotate=90"]
        )
        try harness.moveIn(["landscape.mkv", "phone.mov"], from: staging)
        let sidecars = try await harness.waitForSidecars(2)

        let wide = try Self.video("landscape.mp4", in: harness, sidecars: sidecars)
        #expect(
            wide["width"] as? Int == 426 && wide["height"] as? Int == 240,
            "\(wide["width"] ?? "")x\(wide["height"] ?? "")"
        )
        // Stored landscape, 426×240, and shown turned: 240 wide, 426 high.
        let phone = try Self.video("phone.mp4", in: harness, sidecars: sidecars)
        #expect(
            phone["width"] as? Int == 426 && phone["height"] as? Int == 240,
            "\(phone["width"] ?? "")x\(phone["height"] ?? "")"
        )
        #expect(abs(try MediaFixtures.rotation(of: harness.outbox.appending("phone.mp4"))) == 90)
        #expect(sidecars["phone.mp4.chute.json"]?.details["outputWidth"] == "240")
        #expect(sidecars["phone.mp4.chute.json"]?.details["outputHeight"] == "426")
    }

    /// An HLG clip (HEVC, 10 bits, BT.2020) made into 8-bit H.264 is tone-mapped to SDR BT.709 and tagged so; it never
    /// keeps the HDR tags its pixels no longer match.
    @Test func hlgBecomesSDRInAnEightBitEncode() async throws {
        try #require(Corpus.isPresent, "the corpus is missing at \(Corpus.folder)")
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: web
                    match: "*.mp4"
                    to: mp4
                    videoCodec: h264
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop(["hlg.mp4": "video/mp4_hevc_hlg10.mp4"], into: harness)
        let sidecars = try await harness.waitForSidecars(1)
        let video = try Self.video("hlg.mp4", in: harness, sidecars: sidecars)
        #expect(video["pix_fmt"] as? String == "yuv420p")
        #expect(video["color_transfer"] as? String == "bt709", "\(video["color_transfer"] ?? "none")")
        #expect(video["color_primaries"] as? String == "bt709", "\(video["color_primaries"] ?? "none")")
        #expect(video["color_space"] as? String == "bt709", "\(video["color_space"] ?? "none")")
    }
}
