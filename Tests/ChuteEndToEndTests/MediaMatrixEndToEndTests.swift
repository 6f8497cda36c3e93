import ChuteCatalog
import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Real videos of each container the corpus holds, with their own codecs and rates, become every video and audio
/// target Chute writes, through one daemon with a rule per target.
///
/// The sources are the corpus's short ones with one of each container: MP4 and MOV with H.264 and AAC at 44.1 kHz
/// (the MOV turned by its matrix), Matroska with H.264, AC-3 and SubRip, WebM with VP9 and 5.1 Vorbis at 48 kHz,
/// MPEG-TS with H.264 alone, AVI with MPEG-4 Part 2 and MP3 at 48 kHz. To keep the run short, every rule keeps the
/// first second (`duration: 1`, cut on keyframes so that streams are still copied where they fit), and the audio
/// targets take the sound of three of them (AAC mono, 5.1 Vorbis, MP3 stereo). Each output is checked with `ffprobe`:
/// a video target keeps the picture, every target keeps the sound, and the output lasts as long as the part kept.
/// An AMV needs sound, so the sound-less MPEG-TS must be refused as such.
@Suite(.serialized, .timeLimit(.minutes(15)))
struct MediaMatrixEndToEndTests {
    /// A corpus file and what its streams are.
    private struct Source {
        var path: String
        var hasVideo: Bool
        var hasAudio: Bool
        /// Whether the audio targets take its sound too.
        var feedsAudioTargets = false
        /// The stem each copy is named after.
        var stem: String { String(self.path.split(separator: "/").last!.split(separator: ".").first!) }
        var fileExtension: String { String(self.path.split(separator: ".").last!) }
    }

    private static let sources = [
        Source(path: "video/mp4_h264_aac_short.mp4", hasVideo: true, hasAudio: true, feedsAudioTargets: true),
        Source(path: "video/mov_iphone_ios7_portrait_rot90.mov", hasVideo: true, hasAudio: true),
        Source(path: "video/mkv_h264_ac3_srt.mkv", hasVideo: true, hasAudio: true),
        Source(path: "video/webm_vp9_vorbis51.webm", hasVideo: true, hasAudio: true, feedsAudioTargets: true),
        Source(path: "video/ts_h264.ts", hasVideo: true, hasAudio: false),
        Source(path: "video/avi_mpeg4_mp3.avi", hasVideo: true, hasAudio: true, feedsAudioTargets: true),
    ]

    @Test func corpusVideosBecomeEveryVideoAndAudioTarget() async throws {
        try #require(Corpus.isPresent, "the corpus is missing at \(Corpus.folder)")
        let videoTargets = Engines.video.formats.map(\.name)
        let audioTargets = Engines.audio.formats.map(\.name)
        let rules = (videoTargets + audioTargets).map { target in
            """
              - name: to-\(target)
                match: "*.to-\(target).*"
                to: \(target)
                duration: 1
                trimExact: false
                output: ./outbox
            """
        }.joined(separator: "\n")
        let harness = try DaemonHarness(afterSentinels: rules, settings: "  concurrency: {video: 2, audio: 2}")
        defer { harness.stop() }
        try await harness.start()

        let staging = try harness.directory.makeDirectory("staging")
        var expected: [(source: Source, target: String, isVideo: Bool)] = []
        for source in Self.sources {
            let targets =
                videoTargets.map { ($0, true) } + (source.feedsAudioTargets ? audioTargets.map { ($0, false) } : [])
            for (target, isVideo) in targets {
                let name = "\(source.stem).to-\(target).\(source.fileExtension)"
                try FileManager.default.copyItem(
                    atPath: Corpus.folder.appending(source.path).string,
                    toPath: staging.appending(name).string
                )
                try harness.moveIn([name], from: staging)
                expected.append((source, target, isVideo))
            }
        }

        let sidecars = try await harness.waitForSidecars(expected.count, timeout: 600)
        var inputDurations: [String: Double] = [:]
        for source in Self.sources {
            inputDurations[source.path] = try MediaFixtures.probe(Corpus.folder.appending(source.path)).duration
        }
        var failures: [String] = []
        for (source, target, isVideo) in expected {
            let output = "\(source.stem).to-\(target).\(target)"
            guard let sidecar = sidecars["\(output).chute.json"] else {
                failures.append("\(output): no sidecar")
                continue
            }
            if target == "amv" && !source.hasAudio {
                if sidecar.error?.code != "unsupportedInput" || sidecar.error?.message.contains("no sound") != true {
                    failures.append(
                        "\(output): \(sidecar.status) \(sidecar.error?.message ?? ""), not refused for no sound"
                    )
                }
                continue
            }
            guard sidecar.status == .completed else {
                failures.append("\(output): \(sidecar.error?.code ?? "") \(sidecar.error?.message ?? "")")
                continue
            }
            let probe = try MediaFixtures.probe(harness.outbox.appending(output))
            let videos = probe.streams("video").count
            let audios = probe.streams("audio").count
            if isVideo && source.hasVideo && videos != 1 {
                failures.append("\(output): \(videos) video streams")
            }
            if source.hasAudio && audios != 1 {
                failures.append("\(output): \(audios) audio streams")
            }
            // A raw AAC stream has no duration; ffprobe's guess from its bitrate is no measure.
            let kept = min(1, inputDurations[source.path] ?? 0)
            if target != "aac", let duration = probe.duration, abs(duration - kept) > 0.3 {
                failures.append("\(output): lasts \(duration) s, the part kept \(kept) s")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(expected.count):\n\(failures.joined(separator: "\n"))")
        #expect(harness.temporaryFiles().isEmpty)
    }
}
