import ChuteCore
import Testing

@testable import ChuteFFmpeg

/// The bitrate a two-pass encode aims at for `maxFileSize`.
@Suite struct EncodingPassTests {
    @Test func theVideoGetsTheAimLessTheAudioAndTheContainer() throws {
        // 5 MB over 60 s at 30 fps, with 128k AAC at 48 kHz (46.875 packets a second).
        let rate = try EncodingPass.videoBitRate(
            maxFileSize: 5_000_000,
            duration: 60,
            frameRate: 30,
            audio: [(bitRate: 128_000, packetsPerSecond: 46.875)]
        )
        let overhead = 8192 + (30 + 46.875) * 60 * 16
        let expected = (5_000_000 * 0.975 - 128_000 * 60 / 8 - overhead) * 8 / 60
        #expect(rate == Int(expected))
        // Without audio, the video has more.
        let alone = try EncodingPass.videoBitRate(maxFileSize: 5_000_000, duration: 60, frameRate: 30, audio: [])
        #expect(alone > rate + 120_000)
    }

    @Test func aSizeTheAudioAloneFillsIsRefused() {
        #expect(throws: FFmpegError.self) {
            try EncodingPass.videoBitRate(
                maxFileSize: 1_000_000,
                duration: 60,
                frameRate: 30,
                audio: [(bitRate: 128_000, packetsPerSecond: 46.875)]
            )
        }
    }
}
