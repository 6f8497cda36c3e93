import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon removes where and by whom a video or a song was made (`metadata: strip | location`) by copying
/// its packets into a new container, and keeps or drops an audio file's cover (`coverArt`).
@Suite(.serialized, .timeLimit(.minutes(5)))
struct MediaPrivacyEndToEndTests {

    /// Values the phone fixture carries that say where, when and on what it was filmed.
    private static let revealing = ["Apple", "iPhone", "48.85", "2.295", "2024"]

    /// Writes a phone-like clip: H.264 and AAC turned by a display matrix, with a creation time, a location in
    /// QuickTime's `©xyz`, in Apple's `com.apple.quicktime.location.ISO6709` and in XMP, and the make and model in
    /// the `mdta` keys and the user data.
    private static func makePhoneClip(at path: FilePath) throws {
        let plain = path.removingLastComponent().appending("plain-\(path.lastComponent!.string)")
        try MediaFixtures.makeClip(at: plain, seconds: 2, rate: 30, codecArguments: MediaFixtures.h264AAC)
        try CommandLineTool.run([
            "ffmpeg", "-nostdin", "-v", "error", "-y", "-i", plain.string, "-map", "0", "-c", "copy",
            "-metadata:s:v:0", "rotate=90", "-movflags", "use_metadata_tags",
            "-metadata", "creation_time=2024-05-01T10:00:00Z", "-metadata", "location=+48.8577+002.2950/",
            "-metadata", "com.apple.quicktime.location.ISO6709=+48.8577+002.2950+035.000/",
            "-metadata", "com.apple.quicktime.make=Apple", "-metadata", "com.apple.quicktime.model=iPhone 15",
            path.string,
        ])
        try CommandLineTool.run([
            "exiftool", "-q", "-overwrite_original", "-Keys:Make=Apple", "-Keys:Model=iPhone 15",
            "-UserData:Make=Apple", "-UserData:Model=iPhone 15", "-XMP-exif:GPSLatitude=48.8577",
            "-XMP-exif:GPSLongitude=2.295", path.string,
        ])
    }

    /// Every tag of the container and of its streams as `ffprobe -show_format -show_streams` reports them, as
    /// `key=value` lines, keys lowercased.
    private static func probedTags(of path: FilePath) throws -> [String] {
        let probe = try MediaFixtures.probe(path)
        var tags = probe.tags.map { "\($0.key.lowercased())=\($0.value)" }
        for stream in probe.streams {
            tags += (stream["tags"] as? [String: String] ?? [:]).map { "\($0.key.lowercased())=\($0.value)" }
        }
        return tags.sorted()
    }

    /// Every tag `exiftool -a -G1` reads, file-system dates and derived (`Composite`) tags left out, as
    /// `Group:Tag=value` lines.
    private static func exifTags(of path: FilePath) throws -> [String] {
        try MetadataFixtures.tags(of: path).filter { key, _ in
            !key.hasPrefix("System:") && !key.hasPrefix("Composite:") && !key.hasPrefix("ExifTool:")
        }.map { "\($0.key)=\($0.value)" }.sorted()
    }

    /// The MD5 of each audio and video packet's data, per stream, as `ffprobe -show_data_hash` reports them.
    private static func packetHashes(of path: FilePath) throws -> [String: [String]] {
        let output = try CommandLineTool.run([
            "ffprobe", "-v", "error", "-show_data_hash", "MD5", "-show_entries", "packet=codec_type,data_hash", "-of",
            "csv=p=0", path.string,
        ]).standardOutput
        var hashes: [String: [String]] = [:]
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: ",").map(String.init)
            guard fields.count == 2 else { continue }
            hashes[fields[0], default: []].append(fields[1])
        }
        return hashes
    }

    @Test func stripLeavesNoLocationDeviceOrDateInAMovAndAnMP4AndCopiesThePackets() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: private-mov
                    match: "*.mov"
                    to: mov
                    metadata: strip
                    output: ./outbox
                  - name: private-mp4
                    match: "*.mp4"
                    to: mp4
                    metadata: strip
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        var sourceHashes: [String: [String: [String]]] = [:]
        var sourceRotations: [String: Int] = [:]
        for name in ["IMG_0042.mov", "VID_0043.mp4"] {
            try Self.makePhoneClip(at: staging.appending(name))
            sourceHashes[name] = try Self.packetHashes(of: staging.appending(name))
            sourceRotations[name] = try MediaFixtures.rotation(of: staging.appending(name))
            let source = try Self.probedTags(of: staging.appending(name)) + Self.exifTags(of: staging.appending(name))
            for value in Self.revealing {
                #expect(source.contains { $0.contains(value) }, "the fixture \(name) should carry \(value)")
            }
            #expect(source.contains { $0.hasPrefix("com.apple.quicktime.location.iso6709=") })
            #expect(source.contains { $0.hasPrefix("XMP-exif:GPSLatitude=") })
        }
        try harness.moveIn(["IMG_0042.mov", "VID_0043.mp4"], from: staging)

        let sidecars = try await harness.waitForSidecars(2)

        for name in ["IMG_0042.mov", "VID_0043.mp4"] {
            let sidecar = try #require(sidecars["\(name).chute.json"])
            #expect(sidecar.status == .completed)
            #expect(sidecar.details["mode"] == "remux")
            let output = harness.outbox.appending(name)
            let probed = try Self.probedTags(of: output)
            let exif = try Self.exifTags(of: output)
            for value in Self.revealing {
                #expect(!probed.contains { $0.contains(value) }, "ffprobe still reads \(value) in \(name): \(probed)")
                #expect(!exif.contains { $0.contains(value) }, "exiftool still reads \(value) in \(name): \(exif)")
            }
            for key in ["location", "iso6709", "make", "model", "creation_time", "encoder", "com.apple"] {
                #expect(!probed.contains { $0.hasPrefix(key) || $0.contains(".\(key)") }, "\(name) has \(key)")
            }
            #expect(!exif.contains { $0.hasPrefix("XMP") || $0.hasPrefix("Keys:") || $0.hasPrefix("UserData:") })
            let hashes = try Self.packetHashes(of: output)
            #expect(hashes["video"]?.isEmpty == false && hashes["audio"]?.isEmpty == false)
            #expect(hashes == sourceHashes[name])
            #expect(sourceRotations[name].map { $0 != 0 } == true)
            let rotation = try MediaFixtures.rotation(of: output)
            #expect(rotation == sourceRotations[name])
            let revealing = Self.revealing.filter { value in (probed + exif).contains { $0.contains(value) } }
            print(
                "strip \(name): \(probed.count) ffprobe tags and \(exif.count) exiftool tags left, \(revealing.count) "
                    + "of \(Self.revealing.count) revealing values among them; packets identical: "
                    + "\(hashes == sourceHashes[name]) (\(hashes["video"]?.count ?? 0) video, \(hashes["audio"]?.count ?? 0) "
                    + "audio); rotation \(rotation)"
            )
        }
    }

    @Test func locationKeepsTheMakeAndModel() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: no-place
                    match: "*.mov"
                    to: mov
                    metadata: location
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Self.makePhoneClip(at: staging.appending("IMG_0044.mov"))
        try harness.moveIn(["IMG_0044.mov"], from: staging)

        let sidecars = try await harness.waitForSidecars(1)

        #expect(sidecars["IMG_0044.mov.chute.json"]?.status == .completed)
        #expect(sidecars["IMG_0044.mov.chute.json"]?.details["mode"] == "remux")
        let output = harness.outbox.appending("IMG_0044.mov")
        let probed = try Self.probedTags(of: output)
        let exif = try Self.exifTags(of: output)
        #expect(probed.contains("make=Apple"))
        #expect(probed.contains("model=iPhone 15"))
        #expect(!probed.contains { $0.contains("48.85") }, "ffprobe still reads a location: \(probed)")
        #expect(!exif.contains { $0.contains("48.85") || $0.contains("GPS") }, "exiftool reads a location: \(exif)")
        #expect(try MetadataFixtures.gpsTags(of: output).isEmpty)
    }

    @Test func coverArtIsKeptUnlessTheRuleDropsIt() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: keep-cover
                    match: "keep-*.mp3"
                    to: mp3
                    metadata: strip
                    output: ./outbox
                  - name: drop-cover
                    match: "drop-*.mp3"
                    to: mp3
                    coverArt: drop
                    output: ./outbox
                  - name: keep-cover-m4a
                    match: "keep-*.m4a"
                    to: m4a
                    metadata: strip
                    output: ./outbox
                  - name: drop-cover-m4a
                    match: "drop-*.m4a"
                    to: m4a
                    coverArt: drop
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        let cover = staging.appending("cover.jpg")
        try CommandLineTool.run([
            "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=300x300:rate=1", "-frames:v", "1",
            cover.string,
        ])
        let names = ["keep-song.mp3", "drop-song.mp3", "keep-song.m4a", "drop-song.m4a"]
        for name in names {
            let codec =
                name.hasSuffix(".mp3") ? ["-c:a", "libmp3lame", "-c:v", "copy"] : ["-c:a", "aac", "-c:v", "copy"]
            try CommandLineTool.run(
                [
                    "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-i",
                    cover.string, "-map", "0", "-map", "1",
                ] + codec + [
                    "-disposition:v", "attached_pic", "-metadata:s:v", "comment=Cover (front)", "-metadata",
                    "artist=Ada", staging.appending(name).string,
                ]
            )
            #expect(try MediaFixtures.probe(staging.appending(name)).streams.count == 2)
        }
        try harness.moveIn(names, from: staging)

        let sidecars = try await harness.waitForSidecars(4)

        for name in names {
            #expect(sidecars["\(name).chute.json"]?.status == .completed)
            let probe = try MediaFixtures.probe(harness.outbox.appending(name))
            let covers = probe.streams.filter { stream in
                (stream["disposition"] as? [String: Any])?["attached_pic"] as? Int == 1
            }
            #expect(covers.count == (name.hasPrefix("keep-") ? 1 : 0), "\(name): \(covers.count) covers")
            // `strip` takes the artist too; `coverArt` alone keeps the tags.
            #expect((probe.tags["artist"] == "Ada") == name.hasPrefix("drop-"), "\(name): \(probe.tags)")
        }
    }
}
