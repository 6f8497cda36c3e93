import ChuteApp
import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

@testable import ChuteCatalog
@testable import ChuteFFmpeg

/// Pictures from a video, written by the video engine: turned as shown, animated and looping, refused without video.
@Suite struct FrameWriterTests {
    /// Runs the video engine on `input` for a `format` target, as the video lane's worker does.
    private static func convert(
        _ input: FilePath,
        to format: String,
        output: FilePath,
        options: ConversionOptions = ConversionOptions()
    ) throws(ConversionFailure) -> ConversionReport {
        let target = Engines.registry.format(named: format)!
        let request = ConversionRequest(
            jobID: "test",
            engine: .video,
            input: input,
            output: output,
            format: target,
            options: options
        )
        return try MediaEngine(kind: .video).convert(request) { _ in }
    }

    @Test func thePosterOfAPortraitPhoneClipIsPortrait() throws {
        let directory = try TemporaryDirectory(prefix: "frames")
        defer { directory.remove() }
        let landscape = directory.appending("landscape.mp4")
        try MediaFixtures.makeClip(at: landscape, width: 320, height: 240, codecArguments: MediaFixtures.h264AAC)
        let phone = directory.appending("phone.mov")
        try MediaFixtures.remux(landscape, to: phone, arguments: ["-c", "copy", "-metadata:s:v:0", "rotate=90"])
        let output = directory.appending("poster.png")

        let report = try Self.convert(phone, to: "png", output: output, options: ["start": "1"])

        #expect(report.details["mode"] == "poster")
        #expect(report.details["verification"] == "read back and decoded entirely")
        #expect(report.details["outputWidth"] == "240" && report.details["outputHeight"] == "320")
        let size = try CommandLineTool.run(["identify", "-format", "%m %w %h", output.string]).standardOutput
        #expect(size == "PNG 240 320")
    }

    @Test func aWebPWithADurationIsAnAnimatedStickerThatLoopsForever() throws {
        let directory = try TemporaryDirectory(prefix: "frames")
        defer { directory.remove() }
        let clip = directory.appending("clip.mp4")
        try MediaFixtures.makeClip(
            at: clip,
            width: 640,
            height: 360,
            seconds: 3,
            rate: 30,
            codecArguments: MediaFixtures.h264AAC
        )
        let output = directory.appending("sticker.webp")

        let report = try Self.convert(clip, to: "webp", output: output, options: ["duration": "2"])

        #expect(report.details["mode"] == "sticker" && report.details["frames"] == "30")
        let bytes = try #require(FileManager.default.contents(atPath: output.string))
        // RIFF WebP: an ANIM chunk (4 bytes of background colour, then the loop count, 0 for ever) and a frame each.
        let anim = try #require(bytes.firstRange(of: Data("ANIM".utf8)))
        let loop = bytes[anim.upperBound + 8] | bytes[anim.upperBound + 9]
        #expect(loop == 0)
        var frames = 0
        var rest = bytes[...]
        while let frame = rest.firstRange(of: Data("ANMF".utf8)) {
            frames += 1
            rest = rest[frame.upperBound...]
        }
        #expect(frames == 30)
        #expect(report.details["outputWidth"] == "512" && report.details["outputHeight"] == "288")
    }

    @Test func anAudioFileOrAStartPastTheEndIsRefused() throws {
        let directory = try TemporaryDirectory(prefix: "frames")
        defer { directory.remove() }
        let song = directory.appending("song.wav")
        try MediaFixtures.makeClip(at: song, width: nil, codecArguments: ["-c:a", "pcm_s16le"])
        let clip = directory.appending("clip.mp4")
        try MediaFixtures.makeClip(at: clip, codecArguments: MediaFixtures.h264AAC)

        #expect {
            try Self.convert(song, to: "jpg", output: directory.appending("song.jpg"))
        } throws: { error in
            (error as? ConversionFailure)?.code == .unsupportedInput
        }
        #expect {
            try Self.convert(clip, to: "jpg", output: directory.appending("late.jpg"), options: ["start": "10"])
        } throws: { error in
            let failure = error as? ConversionFailure
            return failure?.code == .unsupportedInput && failure?.message.contains("no frame at or after 10") == true
        }
        #expect(access(directory.appending("late.jpg").string, F_OK) != 0)
    }
}
