import ChuteCore
import ChuteRuntime
import ChuteTestSupport
import SystemPackage
import Testing

/// The headers the scheduler reads before a job starts, from files the real tools write, and the demand it makes
/// of them.
@Suite struct JobDemandTests {
    @Test(arguments: ["png", "jpg", "gif", "webp"])
    func aPicturesSizeComesFromItsHeader(format: String) throws {
        let directory = try TemporaryDirectory(prefix: "header")
        defer { directory.remove() }
        let path = directory.appending("picture.\(format)")
        try Fixtures.makeImage(at: path, width: 1234, height: 567)
        let type = try #require(SourceInspector.sniff(path))
        #expect(SourceInspector.header(of: path, type: type) == MediaHeader(width: 1234, height: 567))
    }

    @Test func aLosslessWebPsSizeComesFromItsHeader() throws {
        let directory = try TemporaryDirectory(prefix: "header")
        defer { directory.remove() }
        let path = directory.appending("picture.webp")
        try Fixtures.makeImage(at: path, width: 321, height: 123, extraArguments: ["-define", "webp:lossless=true"])
        #expect(SourceInspector.header(of: path, type: .webp) == MediaHeader(width: 321, height: 123))
    }

    @Test(arguments: ["mp4", "mov"])
    func aVideosFrameAndDurationComeFromItsIndex(format: String) throws {
        let directory = try TemporaryDirectory(prefix: "header")
        defer { directory.remove() }
        let path = directory.appending("clip.\(format)")
        try MediaFixtures.makeClip(at: path, width: 320, height: 240, seconds: 3, codecArguments: MediaFixtures.h264AAC)
        let header = SourceInspector.header(of: path, type: try #require(SourceInspector.sniff(path)))
        #expect(header.width == 320 && header.height == 240)
        let duration = try #require(header.duration)
        #expect(abs(duration - 3) < 0.1)
    }

    @Test func aWAVsDurationComesFromItsByteRate() throws {
        let directory = try TemporaryDirectory(prefix: "header")
        defer { directory.remove() }
        let path = directory.appending("tone.wav")
        try MediaFixtures.makeClip(at: path, width: nil, seconds: 4, codecArguments: ["-c:a", "pcm_s16le"])
        let duration = try #require(SourceInspector.header(of: path, type: .wav).duration)
        #expect(abs(duration - 4) < 0.1)
    }

    @Test func aFilmCostsMoreThanAPhotoAndA4KFrameMoreMemoryThanAPhoto() {
        let photo = JobDemand.estimate(
            category: .image,
            size: 500_000,
            header: MediaHeader(width: 1500, height: 1000),
            threads: 1
        )
        let film = JobDemand.estimate(
            category: .video,
            size: 800_000_000,
            header: MediaHeader(width: 1920, height: 1080, duration: 7200),
            threads: 1
        )
        let clip4K = JobDemand.estimate(
            category: .video,
            size: 40_000_000,
            header: MediaHeader(width: 3840, height: 2160, duration: 10),
            threads: 1
        )
        let poster = JobDemand.estimate(
            category: .image,
            size: 30_000_000,
            header: MediaHeader(width: 10_000, height: 10_000),
            threads: 1
        )
        #expect(photo.cost < 1 && film.cost > 1000 * photo.cost)
        #expect(clip4K.memory > 600_000_000 && poster.memory > 600_000_000 && photo.memory < 100_000_000)
        // Without headers, the size stands in for the pixels or the duration.
        let unread = JobDemand.estimate(category: .video, size: 800_000_000, header: MediaHeader(), threads: 1)
        #expect(unread.cost > 100)
    }
}
