import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Inputs that must be refused: each gives a ``ConversionFailure`` with a reason, and no output is left behind.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct BadInputTests {
    /// A way to spoil an input, and the failure codes it may give.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var codes: Set<ConversionFailure.Code>
        /// Writes the bad input at `path`, using `whole`, a complete MP4 (moov at the end), and `fastStart`, one with
        /// its moov first.
        var make: @Sendable (_ path: FilePath, _ whole: FilePath, _ fastStart: FilePath) throws -> Void

        var testDescription: String { self.name }
    }

    static let cases: [Case] = [
        Case(name: "zero bytes", codes: [.corruptInput]) { path, _, _ in
            try Data().write(to: URL(fileURLWithPath: path.string))
        },
        Case(name: "random bytes", codes: [.unsupportedInput, .corruptInput]) { path, _, _ in
            try Fixtures.makeRandomFile(at: path, bytes: 64 * 1024)
        },
        Case(name: "moov atom cut off", codes: [.corruptInput]) { path, whole, _ in
            // A plain MP4 keeps its index (moov) at the end: losing the last 30 % loses it.
            try Fixtures.truncatedCopy(of: whole, to: path, keeping: 0.7)
        },
        Case(name: "media cut off after the index", codes: [.corruptInput]) { path, _, fastStart in
            try Fixtures.truncatedCopy(of: fastStart, to: path, keeping: 0.6)
        },
    ]

    @Test(arguments: cases)
    func brokenMP4FailsCleanly(_ spoiled: Case) throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let whole = directory.appending("whole.mp4")
        let fastStart = directory.appending("fast.mp4")
        try MediaFixtures.makeClip(at: whole, seconds: 3, codecArguments: ["-c:v", "libx264", "-c:a", "aac"])
        try MediaFixtures.remux(whole, to: fastStart, arguments: ["-c", "copy", "-movflags", "+faststart"])
        let input = directory.appending("movie.mp4")
        try spoiled.make(input, whole, fastStart)
        let output = directory.appending("out.mp4")

        let failure = try #require(throws: ConversionFailure.self) {
            try Conversion.run(input, to: "mp4", output: output)
        }

        #expect(spoiled.codes.contains(failure.code), "\(failure)")
        #expect(!failure.message.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: output.string))
    }

    @Test func truncatedMP4SaysWhatFFmpegSaid() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let whole = directory.appending("whole.mp4")
        let input = directory.appending("movie.mp4")
        try MediaFixtures.makeClip(at: whole, seconds: 3, codecArguments: ["-c:v", "libx264", "-c:a", "aac"])
        try Fixtures.truncatedCopy(of: whole, to: input, keeping: 0.7)

        let failure = try #require(throws: ConversionFailure.self) {
            try Conversion.run(input, to: "mp3", output: directory.appending("out.mp3"))
        }

        #expect(failure.code == .corruptInput)
        #expect(failure.message.contains("Invalid data found when processing input"))
        #expect(failure.message.contains("moov atom not found"))
    }

    @Test func truncatedMatroskaIsNotPassedOffAsComplete() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let whole = directory.appending("whole.mkv")
        let input = directory.appending("movie.mkv")
        try MediaFixtures.makeClip(at: whole, seconds: 4, codecArguments: ["-c:v", "libx264", "-c:a", "aac"])
        try Fixtures.truncatedCopy(of: whole, to: input, keeping: 0.5)

        let failure = try #require(throws: ConversionFailure.self) {
            try Conversion.run(input, to: "mp4", output: directory.appending("out.mp4"))
        }

        #expect(failure.code == .corruptInput)
        #expect(failure.message.contains("truncated"))
        #expect(!FileManager.default.fileExists(atPath: directory.appending("out.mp4").string))
    }

    @Test(arguments: [
        "#EXTM3U\n#EXTINF:1,\nfile:///etc/passwd\n",
        "ffconcat version 1.0\nfile /etc/passwd\n",
        "<?xml version=\"1.0\"?><MPD><BaseURL>file:///etc/passwd</BaseURL></MPD>",
    ])
    func playlistNamedMovieIsRefusedUnopened(content: String) throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let input = directory.appending("movie.mp4")
        let output = directory.appending("out.mp4")
        try content.write(toFile: input.string, atomically: true, encoding: .utf8)

        let failure = try #require(throws: ConversionFailure.self) {
            try Conversion.run(input, to: "mp4", output: output)
        }

        #expect(failure.code == .unsupportedInput)
        #expect(failure.message.contains("was not opened"), "\(failure)")
        #expect(!FileManager.default.fileExists(atPath: output.string))
    }

    @Test func playlistBehindAnID3TagIsRefusedAsAPlaylist() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        // An ID3v2.3 tag with one TIT2 frame passes the magic-byte check as MP3; FFmpeg's probe skips the tag and
        // finds the playlist behind it.
        let frame = Array("TIT2".utf8) + [0, 0, 0, 5, 0, 0, 3] + Array("song".utf8)
        let tag = Array("ID3".utf8) + [3, 0, 0, 0, 0, 0, UInt8(frame.count)] + frame
        let input = directory.appending("song.mp3")
        let playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n"
        try Data(tag + Array(playlist.utf8)).write(to: URL(fileURLWithPath: input.string))
        let output = directory.appending("out.m4a")

        let failure = try #require(throws: ConversionFailure.self) {
            try Conversion.run(input, to: "m4a", output: output)
        }

        #expect(failure.code == .unsupportedInput, "\(failure)")
        #expect(failure.message.contains("the content is hls"), "\(failure)")
        #expect(!FileManager.default.fileExists(atPath: output.string))
    }

    @Test func imageIsNotMedia() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let input = directory.appending("photo.mp4")
        try Fixtures.makeImage(at: directory.appending("photo.png"), width: 32, height: 32)
        try FileManager.default.moveItem(atPath: directory.appending("photo.png").string, toPath: input.string)

        let failure = try #require(throws: ConversionFailure.self) {
            try Conversion.run(input, to: "mp4", output: directory.appending("out.mp4"))
        }

        #expect(failure.code == .unsupportedInput)
        #expect(failure.message.contains("png"))
    }

    @Test func percentInANameIsJustAName() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        // image2 would read seq000.png, seq001.png for this name; Chute never hands FFmpeg a name at all.
        let input = directory.appending("seq%03d.wav")
        try MediaFixtures.makeClip(
            at: directory.appending("plain.wav"),
            width: nil,
            seconds: 1,
            codecArguments: ["-c:a", "pcm_s16le"]
        )
        try FileManager.default.moveItem(atPath: directory.appending("plain.wav").string, toPath: input.string)

        _ = try Conversion.run(input, to: "mp3", output: directory.appending("out.mp3"))

        #expect(try MediaFixtures.probe(directory.appending("out.mp3")).streams("audio").count == 1)
    }

    @Test func symbolicLinkIsRefused() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let target = directory.appending("real.wav")
        let input = directory.appending("link.wav")
        try MediaFixtures.makeClip(at: target, width: nil, seconds: 1, codecArguments: ["-c:a", "pcm_s16le"])
        try FileManager.default.createSymbolicLink(atPath: input.string, withDestinationPath: target.string)

        #expect(
            throws: ConversionFailure(.unsupportedInput, "the input's path has a symbolic link, which is not followed")
        ) {
            try Conversion.run(input, to: "mp3", output: directory.appending("out.mp3"))
        }
    }
}
