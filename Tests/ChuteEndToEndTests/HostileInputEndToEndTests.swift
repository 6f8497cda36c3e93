import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Hostile file contents against the real daemon: playlists and scripts posing as media, vector and script formats
/// posing as images, pixel and frame bombs, and decoder messages that quote the input.
///
/// Each test is one ``HostileScenario``: every file gets a failed sidecar with a code and a message (or, where noted,
/// converts harmlessly), nothing connects to the loopback listener the payloads point at, no marker outside the
/// watched tree is opened, the log stays one escaped record per line, a normal file dropped last still converts and
/// the daemon shuts down cleanly. The file-system side (special files, links, names, depth) is in
/// `HostileFileSystemEndToEndTests`.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct HostileInputEndToEndTests {
    /// Playlists, manifests and scripts are recognised by content, whatever their name, and refused before any
    /// demuxer sees them; one hidden behind an ID3 tag passes the magic-byte check as MP3 and is refused as soon as
    /// FFmpeg's probe names it `hls`, which is not an allowed demuxer. A session description is simply not
    /// recognised.
    @Test func playlistsManifestsAndScriptsPosingAsMediaAreRefused() async throws {
        let scenario = try HostileScenario()
        defer { scenario.stop() }
        try await scenario.start()
        let url = scenario.url
        let video = scenario.marker(.video)
        // (name dropped, output name, payload, message that says why)
        let cases: [(String, String, Data, String)] = [
            ("movie.mp4", "movie.mp4", Data(HostilePayloads.hls(url: url, marker: video).utf8), "playlist"),
            (
                "bom.mkv", "bom.mp4", Data(("\u{FEFF}\n  " + HostilePayloads.hls(url: url, marker: video)).utf8),
                "playlist"
            ),
            ("clip.avi", "clip.mp4", Data(HostilePayloads.ffconcat(url: url, marker: video).utf8), "playlist"),
            ("radio.mp3", "radio.m4a", Data(HostilePayloads.pls(url: url, marker: video).utf8), "playlist"),
            ("tracks.ogg", "tracks.m4a", Data(HostilePayloads.xspf(url: url, marker: video).utf8), "refused"),
            ("dash.mp4", "dash.mp4", Data(HostilePayloads.dash(url: url, marker: video).utf8), "playlist"),
            // Plain text to the sniffer (issue 13's documents), which the media engine does not open.
            (
                "stream.mkv", "stream.mp4", Data(HostilePayloads.sdp(port: scenario.listener.port).utf8),
                "not video or audio"
            ),
            ("tagged.mp3", "tagged.m4a", HostilePayloads.id3ThenHLS(url: url, marker: video), "the content is hls"),
        ]
        for (name, _, payload, _) in cases {
            try scenario.drop(name, payload)
        }
        try await scenario.waitForSidecars(cases.count)

        for (_, output, _, reason) in cases {
            scenario.expectFailed(output, ["unsupportedInput"], message: reason)
        }
        try await scenario.finish("playlists, manifests, scripts", note: "\(cases.count) files")
    }

    /// SVG, MVG, MSL, PostScript, EPS, PDF, coder-prefixed text and ImageMagick's own MIFF named as JPEG, PNG or
    /// GIF: the image engine decides the type from the content and decodes only its allowlist, each with its one
    /// coder, so none of them reaches a coder that could fetch a URL, read a file or run a delegate.
    @Test func vectorAndScriptFormatsPosingAsImagesAreRefusedByContent() async throws {
        let scenario = try HostileScenario()
        defer { scenario.stop() }
        try await scenario.start()
        let url = scenario.url
        let image = scenario.marker(.image)
        let secret = scenario.marker(.secret)
        let copy = scenario.harness.outbox.appending("msl-copy.png")
        let miff = scenario.nextStagingPath(extension: "miff")
        try CommandLineTool.run([Fixtures.convert, "-size", "8x8", "xc:red", "MIFF:" + miff.string])
        let png = try scenario.makePNG()
        // (name dropped, output name, payload, message that says why)
        let notAnImage = "not an image Chute decodes"
        let unknown = "not in an image format Chute recognises"
        let cases: [(String, String, Data, String)] = [
            (
                "logo.png", "logo.jpg",
                Self.text(HostilePayloads.svg(url: url, marker: image, secret: secret, declaration: true)), notAnImage
            ),
            (
                "icon.jpg", "icon.jpg",
                Self.text(HostilePayloads.svg(url: url, marker: image, secret: secret, declaration: false)), notAnImage
            ),
            ("draw.jpg", "draw.jpg", Self.text(HostilePayloads.mvg(url: url, marker: image)), notAnImage),
            // This and the other text payloads below are plain text to the sniffer, which the image engine refuses.
            ("label.png", "label.jpg", Self.text(HostilePayloads.mvgReadingAFile(secret: secret)), notAnImage),
            (
                "thumb.png", "thumb.jpg", Self.text(HostilePayloads.msl(marker: image, copy: copy, declaration: true)),
                notAnImage
            ),
            (
                "plain-msl.gif", "plain-msl.jpg",
                Self.text(HostilePayloads.msl(marker: image, copy: copy, declaration: false)), notAnImage
            ),
            ("scan.jpg", "scan.jpg", Self.text(HostilePayloads.postScript(secret: secret)), notAnImage),
            ("figure.png", "figure.jpg", HostilePayloads.binaryEPS(secret: secret), notAnImage),
            // A PDF is the PDF engine's (qpdf and poppler, which run no scripts and fetch nothing): this one has no
            // pages to draw, so it fails there, never reaching ImageMagick's PDF delegate (Ghostscript).
            ("report.jpg", "report.jpg", Self.text(HostilePayloads.pdf()), "the PDF has no pages"),
            ("notes.png", "notes.jpg", Self.text("text:\(secret)\n"), notAnImage),
            ("vanish.jpg", "vanish.jpg", Self.text("ephemeral:\(image)\n"), notAnImage),
            ("miff.png", "miff.jpg", try Data(contentsOf: URL(fileURLWithPath: miff.string)), unknown),
            // Looks like a GIF to the magic-byte check, so the GIF coder (and only it) gets the SVG behind it.
            (
                "polyglot.gif", "polyglot.jpg",
                Data("GIF89a".utf8)
                    + Self.text(HostilePayloads.svg(url: url, marker: image, secret: secret, declaration: false)), ""
            ),
            // A real PNG under a JPEG name is fine: the content decides, and it converts.
            ("really-a-png.jpg", "really-a-png.jpg", png, ""),
        ]
        for (name, _, payload, _) in cases {
            try scenario.drop(name, payload)
        }
        try await scenario.waitForSidecars(cases.count)

        let corrupt = ["report.jpg", "polyglot.gif"]
        for (name, output, _, reason) in cases where name != "really-a-png.jpg" && !corrupt.contains(name) {
            scenario.expectFailed(output, ["unsupportedInput"], message: reason)
        }
        scenario.expectFailed("report.jpg", ["corruptInput"], message: "the PDF has no pages")
        scenario.expectFailed("polyglot.jpg", ["corruptInput"])
        #expect(scenario.expectCompleted("really-a-png.jpg")?.source.sniffedType == "png")
        #expect(!FileManager.default.fileExists(atPath: copy.string), "the MSL script wrote its copy")
        try await scenario.finish(
            "SVG, MVG, MSL, PS, EPS, PDF, text:, ephemeral:, MIFF as images",
            note: "\(cases.count) files, the converted one a real PNG"
        )
    }

    /// Pixel bombs (a PNG declaring 100000×100000, a valid 12000×12000 PNG squeezed into 150 KB, a JPEG declaring
    /// 65500×65500, a 1×1 GIF on a 65535×65535 screen, the corpus's 44-byte GIF and BMP bombs), frame bombs (30 000
    /// GIF frames; an APNG announcing 2³¹−1 frames, which ImageMagick 6 reads as one still image) and video whose
    /// headers declare 16000×16000 or 100000×100000 frames are refused from their headers or by the libraries'
    /// limits, quickly and without a large allocation. A video whose three frames are ten hours apart (a duration
    /// bomb for encoders that fill gaps) is stream-copied: three frames, a few kilobytes.
    @Test func pixelAndFrameBombsAreRefusedFromHeaders() async throws {
        let scenario = try HostileScenario()
        defer { scenario.stop() }
        try await scenario.start()
        let png = try scenario.makePNG()
        let jpegPath = scenario.nextStagingPath(extension: "jpg")
        try Fixtures.makeImage(at: jpegPath, width: 16, height: 16)
        let jpeg = try Data(contentsOf: URL(fileURLWithPath: jpegPath.string))
        let zlibBomb = scenario.nextStagingPath(extension: "png")
        // ffmpeg's PNG encoder compresses 144 MB of black into about 150 KB.
        try CommandLineTool.run([
            "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "color=black:size=12000x12000", "-frames:v", "1",
            "-pix_fmt", "gray", zlibBomb.string,
        ])
        var cases: [(name: String, output: String, payload: Data, codes: Set<String>)] = [
            (
                "huge.png", "huge.jpg", HostilePayloads.pngDeclaring(width: 100_000, height: 100_000, from: png),
                ["limitExceeded"]
            ),
            (
                "zlib-bomb.png", "zlib-bomb.jpg", try Data(contentsOf: URL(fileURLWithPath: zlibBomb.string)),
                ["limitExceeded"]
            ),
            (
                "sof.jpg", "sof.jpg",
                try #require(HostilePayloads.jpegDeclaring(width: 65500, height: 65500, from: jpeg)), ["limitExceeded"]
            ),
            (
                "screen.gif", "screen.jpg", HostilePayloads.gif(screenWidth: 65535, screenHeight: 65535, frames: 1),
                ["limitExceeded"]
            ),
            (
                "frames.gif", "frames.jpg", HostilePayloads.gif(screenWidth: 1, screenHeight: 1, frames: 30_000),
                ["limitExceeded"]
            ),
            ("apng.png", "apng.jpg", HostilePayloads.apngAnnouncingFrames(from: png), []),
        ]
        if Corpus.isPresent {
            for (file, name, output, codes) in [
                ("broken/gif_decompression_bomb.gif", "corpus-bomb.gif", "corpus-bomb.jpg", Set(["limitExceeded"])),
                // ImageMagick's BMP coder rejects its header outright.
                (
                    "broken/bmp_reallybig.bmp", "corpus-big.bmp", "corpus-big.jpg",
                    Set(["limitExceeded", "corruptInput"])
                ),
            ] {
                let data = try Data(contentsOf: URL(fileURLWithPath: Corpus.folder.appending(file).string))
                cases.append((name, output, data, codes))
            }
        }
        for codec in ["ffv1", "rawvideo"] {
            let avi = scenario.nextStagingPath(extension: "avi")
            let source = "color=size=16x16:rate=5:duration=1"
            try CommandLineTool.run([
                "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", source, "-c:v", codec, "-pix_fmt", "gray",
                avi.string,
            ])
            let data = try Data(contentsOf: URL(fileURLWithPath: avi.string))
            cases.append(
                (
                    "\(codec)-16k.avi", "\(codec)-16k.mp4",
                    try #require(HostilePayloads.aviDeclaring(width: 16000, height: 16000, from: data)),
                    ["limitExceeded"]
                )
            )
            if codec == "rawvideo" {
                // libavcodec itself refuses sizes beyond about 16384² ("Picture size is invalid") and leaves the
                // stream without a size or format.
                cases.append(
                    (
                        "rawvideo-100k.avi", "rawvideo-100k.mp4",
                        try #require(HostilePayloads.aviDeclaring(width: 100_000, height: 100_000, from: data)),
                        ["limitExceeded", "corruptInput"]
                    )
                )
            }
        }
        let gaps = scenario.nextStagingPath(extension: "mkv")
        try CommandLineTool.run([
            "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "color=size=16x16:rate=1:duration=3", "-vf",
            "setpts=N*36000/TB", "-c:v", "libx264", "-preset", "ultrafast", gaps.string,
        ])
        cases.append(("gaps.mkv", "gaps.mp4", try Data(contentsOf: URL(fileURLWithPath: gaps.string)), []))

        for item in cases {
            try scenario.drop(item.name, item.payload)
        }
        try await scenario.waitForSidecars(cases.count)

        var refused = 0
        for item in cases where !item.codes.isEmpty {
            let message = scenario.expectFailed(item.output, item.codes)
            refused += 1
            // Refused at once: a bomb that was decoded would take seconds and gigabytes.
            let seconds = scenario.sidecar(item.output)?.durationSeconds ?? 0
            #expect(seconds < 10, "\(item.name) took \(seconds) s: \(message)")
        }
        let apng = scenario.expectCompleted("apng.jpg")
        #expect(apng?.details["inputFrames"] == "1")
        let gapped = scenario.expectCompleted("gaps.mp4")
        #expect(gapped?.details["frames"] == "3")
        #expect((gapped?.output?.size ?? .max) < 64 * 1024)
        try await scenario.finish(
            "pixel and frame bombs",
            note: "\(cases.count) files, \(refused) refused in under 10 s each; the APNG read as 1 frame, "
                + "the 10-hour gaps copied as 3 frames"
        )
    }

    /// FFmpeg quotes an ID3 picture's MIME type when it does not know it: bytes from the file, here an ANSI colour,
    /// a CR LF and a fake log record. The warning reaches the sidecar and the log escaped, as one record; a damaged
    /// file that fails after the same warning fails cleanly.
    @Test func decoderMessagesQuotingTheInputAreEscaped() async throws {
        let scenario = try HostileScenario()
        defer { scenario.stop() }
        try await scenario.start()
        let forged = "2026-01-01T00:00:00+0000 critical chute: [ChuteRuntime] FORGED"
        let mimeType = Array("image/\u{1b}[31mRED\u{1b}[0m\r\n\(forged)".utf8)
        let mp3 = scenario.nextStagingPath(extension: "mp3")
        try MediaFixtures.makeClip(
            at: mp3,
            width: nil,
            seconds: 1,
            codecArguments: ["-c:a", "libmp3lame", "-write_id3v2", "0"]
        )
        let audio = try Data(contentsOf: URL(fileURLWithPath: mp3.string))
        let noise = scenario.nextStagingPath()
        try Fixtures.makeRandomFile(at: noise, bytes: 32 * 1024)
        try scenario.drop("tagged.mp3", HostilePayloads.id3WithPictureType(mimeType) + audio)
        try scenario.drop(
            "damaged.mp3",
            HostilePayloads.id3WithPictureType(mimeType) + Data(contentsOf: URL(fileURLWithPath: noise.string))
        )
        try await scenario.waitForSidecars(2)

        let tagged = scenario.expectCompleted("tagged.m4a")
        let warning = tagged?.warnings.first { $0.contains("Unknown attached picture mimetype") }
        #expect(
            warning?.contains("image/\\u{1b}[31mRED\\u{1b}[0m\\u{d}\\u{a}2026-01-01T00:00:00") == true,
            "\(String(describing: tagged?.warnings))"
        )
        // Logged once the worker's burst of messages has ended (up to 100 ms after its last line, perhaps after the
        // sidecar).
        let logged = try await scenario.daemon.waitForLog("Unknown attached picture mimetype", timeout: 10)
        #expect(logged.allSatisfy { $0.contains("\\u{1b}[31mRED") && $0.contains("\\u{a}2026-01-01") })
        #expect(!scenario.daemon.log.contains { $0.hasPrefix(forged) })
        let damaged = scenario.expectFailed("damaged.m4a", ["corruptInput", "unsupportedInput"])
        #expect(!damaged.contains("\u{1b}") && !damaged.contains("\n"))
        try await scenario.finish(
            "decoder messages",
            note: "the quoted MIME type escaped in the sidecar warning and the log"
        )
    }

    private static func text(_ string: String) -> Data { Data(string.utf8) }
}
