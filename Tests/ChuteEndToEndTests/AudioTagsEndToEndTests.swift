import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon carries a recording's own tags (title, artist, album) into the converted file, and none of the
/// container's bookkeeping (brands, the writing library, handler and vendor names).
@Suite(.serialized, .timeLimit(.minutes(5)))
struct AudioTagsEndToEndTests {
    /// Keys that describe the source container or the program that wrote it, not the recording.
    private static let junk: Set<String> = [
        "major_brand", "minor_version", "compatible_brands", "encoder", "vendor_id", "handler_name", "creation_time",
    ]

    /// Every tag of the container and of its streams, keys lowercased, as `ffprobe -show_format -show_streams`
    /// reports them.
    private static func allTags(of path: FilePath) throws -> [String: String] {
        let probe = try MediaFixtures.probe(path)
        var tags: [String: String] = [:]
        for (key, value) in probe.tags {
            tags[key.lowercased()] = value
        }
        for stream in probe.streams {
            for (key, value) in stream["tags"] as? [String: String] ?? [:] {
                tags[key.lowercased()] = value
            }
        }
        return tags
    }

    @Test func m4aTagsBecomeID3TagsWithoutContainerJunk() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: sound
                    match: "*.m4a"
                    to: mp3
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try CommandLineTool.run([
            "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-c:a", "aac",
            "-metadata", "title=Morning Memo", "-metadata", "artist=Ada", "-metadata", "album=Voice Memos",
            "-metadata", "creation_time=2024-06-01T10:00:00Z", staging.appending("memo.m4a").string,
        ])
        let source = try Self.allTags(of: staging.appending("memo.m4a"))
        #expect(source["major_brand"] != nil && source["handler_name"] != nil && source["encoder"] != nil)
        try harness.moveIn(["memo.m4a"], from: staging)

        let sidecars = try await harness.waitForSidecars(1)

        #expect(sidecars["memo.mp3.chute.json"]?.status == .completed)
        let tags = try Self.allTags(of: harness.outbox.appending("memo.mp3"))
        #expect(tags["title"] == "Morning Memo")
        #expect(tags["artist"] == "Ada")
        #expect(tags["album"] == "Voice Memos")
        #expect(Set(tags.keys).intersection(Self.junk) == [])
    }

    @Test(arguments: ["m4a", "ogg"])
    func videoSoundtrackKeepsTheTitleWithoutContainerJunk(target: String) async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: soundtrack
                    match: "*.mp4"
                    to: \(target)
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try CommandLineTool.run([
            "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=15:duration=2", "-f",
            "lavfi", "-i", "sine=frequency=440:duration=2", "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac",
            "-metadata", "title=Birthday", "-metadata", "artist=Ada", staging.appending("clip.mp4").string,
        ])
        try harness.moveIn(["clip.mp4"], from: staging)

        let sidecars = try await harness.waitForSidecars(1)

        #expect(sidecars["clip.\(target).chute.json"]?.status == .completed)
        let tags = try Self.allTags(of: harness.outbox.appending("clip.\(target)"))
        #expect(tags["title"] == "Birthday")
        #expect(tags["artist"] == "Ada")
        // An MP4-family output has brands and a handler of its own, which ffprobe reports as tags too.
        let own: Set<String> =
            target == "m4a" ? ["major_brand", "minor_version", "compatible_brands", "handler_name", "vendor_id"] : []
        #expect(Set(tags.keys).intersection(Self.junk.subtracting(own)) == [])
    }
}
