import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon names outputs after when their photos and clips were taken (`{taken}` in `rename`), in its own
/// time zone, and falls back to the modification time, with a warning, for a file that does not say.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct TakenNameEndToEndTests {
    @Test func outputsAreNamedAfterTheCaptureTimeInTheLocalZone() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: photos
                    match: ["*.jpg", "*.png", "*.tif", "*.heic"]
                    to: jpg
                    rename: "{taken:yyyy-MM-dd_HHmmss}-{stem}.{ext}"
                    keepStructure: false
                    output: ./outbox
                  - name: clips
                    match: "*.mp4"
                    to: mkv
                    rename: "{taken:yyyy-MM-dd_HHmmss}-{stem}.{ext}"
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        // Paris is two hours ahead of UTC in summer and one in winter.
        try await harness.start(environment: ["TZ": "Europe/Paris"])
        let staging = try harness.directory.makeDirectory("staging")
        func photo(_ name: String, width: Int = 320, tags: [String] = []) throws {
            let path = staging.appending(name)
            try Fixtures.makeImage(at: path, width: width, height: 200)
            if !tags.isEmpty {
                try CommandLineTool.run(["exiftool", "-q", "-overwrite_original"] + tags + [path.string])
            }
        }
        // Taken in New York: 09:30:15 at -04:00 is 15:30:15 in Paris.
        try photo("nyc.jpg", tags: ["-DateTimeOriginal=2023:07:14 09:30:15", "-OffsetTimeOriginal=-04:00"])
        // Another picture taken at the same time, in a sub-folder: the flattened name is taken, so `-1` is added.
        try FileManager.default.createDirectory(
            atPath: staging.appending("trip").string,
            withIntermediateDirectories: true
        )
        try photo(
            "trip/nyc.jpg",
            width: 300,
            tags: ["-DateTimeOriginal=2023:07:14 09:30:15", "-OffsetTimeOriginal=-04:00"]
        )
        // Only a CreateDate (in the PNG's eXIf chunk), without a zone: the camera's clock is taken as local time.
        try photo("scan.png", tags: ["-EXIF:CreateDate=2022:12:31 23:59:58"])
        try photo("page.tif", tags: ["-DateTimeOriginal=2021:01:02 03:04:05"])
        let camera = staging.appending("camera.jpg")
        try photo("camera.jpg", tags: ["-DateTimeOriginal=2024:06:01 10:00:00"])
        try CommandLineTool.run(["heif-enc", "-q", "60", camera.string, "-o", staging.appending("phone.heic").string])
        try FileManager.default.removeItem(atPath: camera.string)
        // No capture time at all: its modification time, 2020-02-03 04:05:06 UTC, is 05:05:06 in Paris.
        try photo("plain.jpg")
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: 1_580_702_706)],
            ofItemAtPath: staging.appending("plain.jpg").string
        )
        // A clip's creation_time is in UTC: 10:11:12 UTC is 12:11:12 in Paris.
        let clip = staging.appending("clip.mp4")
        try MediaFixtures.makeClip(
            at: clip,
            seconds: 1,
            codecArguments: MediaFixtures.h264AAC + ["-metadata", "creation_time=2019-08-09T10:11:12Z"]
        )
        let names = ["nyc.jpg", "trip", "scan.png", "page.tif", "phone.heic", "plain.jpg", "clip.mp4"]
        try harness.moveIn(names, from: staging)

        let sidecars = try await harness.waitForSidecars(7)
        print("sidecars: \(sidecars.keys.sorted())")
        for (key, sidecar) in sidecars.sorted(by: { $0.key < $1.key }) {
            print("\(key): \(sidecar.status) taken=\(sidecar.details["taken"] ?? "-") warnings=\(sidecar.warnings)")
        }
        let expected = [
            "2023-07-14_153015-nyc.jpg", "2023-07-14_153015-nyc-1.jpg", "2022-12-31_235958-scan.jpg",
            "2021-01-02_030405-page.jpg", "2024-06-01_100000-phone.jpg", "2020-02-03_050506-plain.jpg",
            "2019-08-09_121112-clip.mkv",
        ]
        #expect(Set(sidecars.keys) == Set(expected.map { $0 + Sidecar.fileSuffix }))
        for name in expected {
            let sidecar = sidecars[name + Sidecar.fileSuffix]
            #expect(sidecar?.status == .completed, "\(name): \(String(describing: sidecar?.error))")
            #expect(sidecar?.output?.path == harness.outbox.appending(name).string, "\(name)")
            #expect(FileManager.default.fileExists(atPath: harness.outbox.appending(name).string), "\(name)")
        }
        let nyc = sidecars["2023-07-14_153015-nyc.jpg" + Sidecar.fileSuffix]
        #expect(nyc?.details["taken"] == "2023-07-14 09:30:15 -04:00 (EXIF DateTimeOriginal)")
        #expect(
            sidecars["2022-12-31_235958-scan.jpg" + Sidecar.fileSuffix]?.details["taken"]?.hasSuffix(
                "(EXIF CreateDate)"
            ) == true
        )
        let plain = sidecars["2020-02-03_050506-plain.jpg" + Sidecar.fileSuffix]
        #expect(plain?.details["taken"] == nil)
        #expect(
            plain?.warnings.contains { $0.contains("has no capture time") && $0.contains("modification time") } == true
        )
        #expect(sidecars.filter { $0.value.warnings.contains { $0.contains("no capture time") } }.count == 1)
        // Each output is the one the journal recorded: a restart converts nothing again.
        harness.daemon?.terminate()
        try await harness.start(environment: ["TZ": "Europe/Paris"])
        #expect(try await harness.waitForSidecars(7).count == 7)
    }

    /// A group's `{taken}` is its first file's (in natural order): a folder of photos becomes an animation or a PDF
    /// album, a folder of clips one joined clip, each named after when its first file was taken.
    @Test func aGroupIsNamedAfterItsFirstFile() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: albums
                    match: "*.jpg"
                    to: gif
                    rename: "{taken:yyyy-MM-dd_HHmm}-{stem}.{ext}"
                    output: ./outbox
                    groupBy: folder
                  - name: books
                    match: "*.png"
                    to: pdf
                    rename: "{taken:yyyy-MM-dd_HHmm}-{stem}.{ext}"
                    output: ./outbox
                    groupBy: folder
                  - name: reels
                    match: "*.mp4"
                    to: mkv
                    rename: "{taken:yyyy-MM-dd_HHmm}-{stem}.{ext}"
                    output: ./outbox
                    groupBy: folder
                """
        )
        defer { harness.stop() }
        try await harness.start(environment: ["TZ": "Europe/Paris"])
        let album = try harness.directory.makeDirectory("staging/holiday")
        // Natural order puts 2.jpg first although 10.jpg was taken earlier.
        for (name, taken) in [("2.jpg", "2022:08:01 12:00:00"), ("10.jpg", "2021:01:01 08:00:00")] {
            let path = album.appending(name)
            try Fixtures.makeImage(at: path, width: 64, height: 48)
            try CommandLineTool.run([
                "exiftool", "-q", "-overwrite_original", "-DateTimeOriginal=\(taken)", path.string,
            ])
        }
        let book = try harness.directory.makeDirectory("staging/book")
        for (name, taken) in [("a.png", "2019:03:04 05:06:07"), ("b.png", "2018:01:01 00:00:00")] {
            let path = book.appending(name)
            try Fixtures.makeImage(at: path, width: 64, height: 48)
            try CommandLineTool.run([
                "exiftool", "-q", "-overwrite_original", "-EXIF:DateTimeOriginal=\(taken)", path.string,
            ])
        }
        let reel = try harness.directory.makeDirectory("staging/party")
        for (name, created) in [("1.mp4", "2020-05-06T18:30:00Z"), ("2.mp4", "2020-05-06T19:00:00Z")] {
            try MediaFixtures.makeClip(
                at: reel.appending(name),
                seconds: 1,
                codecArguments: MediaFixtures.h264AAC + ["-metadata", "creation_time=\(created)"]
            )
        }
        try CommandLineTool.run(["cp", "-r", album.string, book.string, reel.string, harness.inbox.string])

        let sidecars = try await harness.waitForSidecars(3)
        print("group sidecars: \(sidecars.mapValues { "\($0.status) taken=\($0.details["taken"] ?? "-")" })")
        let gif = sidecars["2022-08-01_1200-holiday.gif" + Sidecar.fileSuffix]
        #expect(gif?.status == .completed, "\(sidecars.keys)")
        #expect(gif?.details["taken"] == "2022-08-01 12:00:00 (EXIF DateTimeOriginal)")
        // 18:30 UTC is 20:30 in Paris.
        let joined = sidecars["2020-05-06_2030-party.mkv" + Sidecar.fileSuffix]
        #expect(joined?.status == .completed, "\(sidecars.keys) \(String(describing: joined?.error))")
        let pdf = sidecars["2019-03-04_0506-book.pdf" + Sidecar.fileSuffix]
        #expect(pdf?.status == .completed, "\(sidecars.keys) \(String(describing: pdf?.error))")
        for name in ["2022-08-01_1200-holiday.gif", "2019-03-04_0506-book.pdf", "2020-05-06_2030-party.mkv"] {
            #expect(FileManager.default.fileExists(atPath: harness.outbox.appending(name).string), "\(name)")
        }
    }
}
