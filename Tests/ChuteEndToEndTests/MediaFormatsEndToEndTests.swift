import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon writes the formats Debian's FFmpeg cannot do alone or without help: AMR-NB (through
/// opencore-amrnb), GSM (8 kHz mono, a raw format nothing recognises by content) and a DVD VOB (MPEG-2 video at a
/// standard frame rate, AC-3 at 48 kHz).
@Suite(.serialized, .timeLimit(.minutes(5)))
struct MediaFormatsEndToEndTests {
    @Test func voiceBecomesAMRAndGSMAndAClipBecomesAVOB() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: sentinels
                    match: "zz-sentinel-*.png"
                    to: jpg
                    output: ./outbox
                  - name: voice
                    match: "*.wav"
                    to: amr
                    output: ./outbox
                  - name: phone
                    match: "*.flac"
                    to: gsm
                    output: ./outbox
                  - name: dvd
                    match: "*.mkv"
                    to: vob
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try MediaFixtures.makeClip(
            at: staging.appending("memo.wav"),
            width: nil,
            seconds: 3,
            sampleRate: 44100,
            codecArguments: ["-c:a", "pcm_s16le"]
        )
        try MediaFixtures.makeClip(
            at: staging.appending("call.flac"),
            width: nil,
            seconds: 3,
            sampleRate: 48000,
            codecArguments: ["-c:a", "flac"]
        )
        // 15 frames a second is no MPEG frame rate: Chute takes the nearest, 24000/1001.
        try MediaFixtures.makeClip(
            at: staging.appending("party.mkv"),
            width: 320,
            height: 240,
            seconds: 3,
            rate: 15,
            codecArguments: MediaFixtures.h264AAC
        )
        try harness.moveIn(["memo.wav", "call.flac", "party.mkv"], from: staging)

        let sidecars = try await harness.waitForSidecars(3)

        for name in ["memo.amr", "call.gsm", "party.vob"] {
            let sidecar = try #require(sidecars["\(name).chute.json"], "\(name): \(sidecars.keys.sorted())")
            #expect(sidecar.status == .completed, "\(name): \(sidecar.error?.message ?? "")")
        }
        let amr = harness.outbox.appending("memo.amr")
        #expect(try MediaFixtures.entries("stream=codec_name,sample_rate,channels", of: amr) == "amr_nb|8000|1")
        #expect(try Data(contentsOf: URL(fileURLWithPath: amr.string)).prefix(6) == Data("#!AMR\n".utf8))
        let gsm = harness.outbox.appending("call.gsm")
        #expect(try MediaFixtures.entries("stream=codec_name,sample_rate,channels", of: gsm) == "gsm|8000|1")
        let vob = harness.outbox.appending("party.vob")
        let probe = try MediaFixtures.probe(vob)
        let video = try #require(probe.streams("video").first)
        #expect(video["codec_name"] as? String == "mpeg2video")
        #expect(video["width"] as? Int == 320 && video["height"] as? Int == 240)
        #expect(video["r_frame_rate"] as? String == "24000/1001")
        let audio = try #require(probe.streams("audio").first)
        #expect(audio["codec_name"] as? String == "ac3")
        #expect(audio["sample_rate"] as? String == "48000")
        for output in [amr, gsm, vob] {
            let decoding = try CommandLineTool.run([
                "ffmpeg", "-nostdin", "-v", "error", "-i", output.string, "-f", "null", "-",
            ])
            #expect(decoding.standardError.isEmpty, "\(output): \(decoding.standardError)")
            let duration = try #require(Double(try MediaFixtures.entries("format=duration", of: output)))
            #expect(abs(duration - 3) < 0.1, "\(output) lasts \(duration) s")
        }
        #expect(harness.temporaryFiles().isEmpty)
    }
}
