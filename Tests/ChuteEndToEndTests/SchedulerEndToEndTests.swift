import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The scheduler on the real daemon: cheap jobs before dear ones under one CPU budget, and jobs too large for the
/// memory budget kept apart. Order and overlap come from the sidecars' start and end times and from the log, never
/// from how long anything took.
@Suite(.serialized, .timeLimit(.minutes(8)))
struct SchedulerEndToEndTests {
    /// A sidecar's start and end.
    private static func interval(_ sidecar: Sidecar) throws -> ClosedRange<Date> {
        let format = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        return try format.parse(sidecar.startedAt)...format.parse(sidecar.endedAt)
    }

    /// Fifty photos and a two-minute 1080p film dropped together, the film right behind the photos: the photos,
    /// cheaper, all come out before the film's transcode ends. Without a shared budget and a cost order, the film
    /// starts at once and its transcode's threads take most of the cores from the photos, which come out after it.
    @Test func photosDroppedWithAFilmAreAllDoneBeforeItsTranscodeEnds() async throws {
        // The ageing limit is raised so that the film, queued behind fifty photos on a loaded machine, is not started
        // beside them by it: the ageing is the unit tests' (JobScheduleTests); here the order of costs is tested.
        let harness = try DaemonHarness(
            rules: """
                  - name: sentinels
                    match: "zz-sentinel-*.png"
                    to: jpg
                    output: ./outbox
                  - name: photos
                    match: "*.jpg"
                    to: webp
                    onDuplicate: convert
                    output: ./outbox
                  - name: films
                    match: "*.avi"
                    to: mp4
                    preset: ultrafast
                    output: ./outbox
                """,
            settings: "  agingLimit: 10m"
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        // Two minutes of 1080p at 4 frames a second, in MPEG-4 Part 2, which the mp4 rule re-encodes with x264.
        try CommandLineTool.run([
            "ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
            "testsrc2=size=1920x1080:rate=4:duration=120", "-c:v", "mpeg4", "-q:v", "8",
            staging.appending("film.avi").string,
        ])
        try Fixtures.makeImage(at: staging.appending("photo.jpg"), width: 2000, height: 1500)
        let photos = (1...50).map { String(format: "photo-%02d.jpg", $0) }
        for name in photos {
            try FileManager.default.copyItem(
                atPath: staging.appending("photo.jpg").string,
                toPath: staging.appending(name).string
            )
        }
        try harness.moveIn(photos, from: staging)
        // The film comes once every photo is queued (some may be done already), as behind an upload of photos: the
        // photos still queued then are cheaper, and go first.
        let daemon = try #require(harness.daemon)
        try await daemon.waitForLog("Job queued", "rule.name=photos", count: photos.count, timeout: 120)
        try harness.moveIn(["film.avi"], from: staging)

        let sidecars = try await harness.waitForSidecars(51, timeout: 420)
        let film = try #require(sidecars["film.mp4.chute.json"])
        #expect(film.status == .completed)
        #expect(film.details["mode"] == "transcode")
        let filmEnd = try Self.interval(film).upperBound
        var late: [String] = []
        for name in photos {
            let sidecar = try #require(sidecars[name.replacingOccurrences(of: ".jpg", with: ".webp.chute.json")])
            #expect(sidecar.status == .completed)
            if try Self.interval(sidecar).upperBound >= filmEnd { late.append(name) }
        }
        #expect(late.isEmpty, "\(late.count) of 50 photos were done after the film's transcode ended: \(late)")
        let probe = try MediaFixtures.probe(harness.outbox.appending("film.mp4"))
        #expect(abs((probe.duration ?? 0) - 120) < 1)
        #expect(try Fixtures.identify(harness.outbox.appending("photo-50.webp")).format == "WEBP")
    }

    /// With a 600 MB memory budget, a 100-megapixel PNG and a 4K clip, each estimated above the budget, run one after
    /// the other, never at once, and both complete; the log says which waited for memory.
    @Test func jobsTooLargeForTheMemoryBudgetNeverRunAtOnce() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: posters
                    match: "*.png"
                    to: jpg
                    width: 2000
                    output: ./outbox
                  - name: clips
                    match: "*.mp4"
                    to: mp4
                    height: 1080
                    preset: ultrafast
                    output: ./outbox
                """,
            settings: "  memoryBudget: 600MB"
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try CommandLineTool.run([
            "ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=0x336699:size=10000x10000",
            "-frames:v", "1", staging.appending("poster.png").string,
        ])
        try MediaFixtures.makeClip(
            at: staging.appending("clip.mp4"),
            width: 3840,
            height: 2160,
            seconds: 2,
            rate: 10,
            codecArguments: MediaFixtures.h264AAC
        )
        try harness.moveIn(["poster.png", "clip.mp4"], from: staging)

        let sidecars = try await harness.waitForSidecars(2, timeout: 300)
        let poster = try #require(sidecars["poster.jpg.chute.json"])
        let clip = try #require(sidecars["clip.mp4.chute.json"])
        #expect(poster.status == .completed, "\(String(describing: poster.error))")
        #expect(clip.status == .completed, "\(String(describing: clip.error))")
        let (posterTime, clipTime) = (try Self.interval(poster), try Self.interval(clip))
        #expect(
            !posterTime.overlaps(clipTime),
            "the poster ran \(poster.startedAt) to \(poster.endedAt), the clip \(clip.startedAt) to \(clip.endedAt)"
        )
        let daemon = try #require(harness.daemon)
        let second = posterTime.lowerBound < clipTime.lowerBound ? clip : poster
        let waits = daemon.logLines(containing: "Job waits for the memory budget", "job.id=\(second.jobID)")
        #expect(waits.count == 1, "\(daemon.log.suffix(30).joined(separator: "\n"))")
        // Alone on the machine, the clip's codecs get every core of the budget, though it holds only its share; the
        // budget being the machine's cores, FFmpeg chooses their threads, as the CLI does.
        #expect(clip.details["codecThreads"] == "auto")
        #expect(try Fixtures.identify(harness.outbox.appending("poster.jpg")).width == 2000)
        let video = try MediaFixtures.probe(harness.outbox.appending("clip.mp4")).streams("video").first
        #expect(video?["height"] as? Int == 1080)
    }

    /// A phone's HEIC is a grid of tiles, which libheif decodes on 4 threads of its own by default (ImageMagick's
    /// coder, or `heif-dec`, run 10 threads for it); Chute gives libheif the threads the budget gave the job. With
    /// `cpuBudget: 1` the worker decodes on its own thread, the one thread libde265 starts for itself aside.
    @Test func aHEICsTilesAreDecodedOnTheThreadsOfTheJob() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: photos
                    match: "*.heic"
                    to: jpg
                    output: ./outbox
                  - name: first
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                """,
            settings: "  cpuBudget: 1"
        )
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let staging = try harness.directory.makeDirectory("staging")
        let tiles = try harness.directory.makeDirectory("tiles")
        try CommandLineTool.run([
            "convert", "-seed", "3", "-size", "2048x1536", "plasma:red-blue", "-depth", "8", "-crop", "512x512", "-set",
            "filename:tile", "%[fx:page.y/512]-%[fx:page.x/512]", "+repage",
            tiles.appending("tile-%[filename:tile].png").string,
        ])
        try CommandLineTool.run([
            "heif-enc", "-T", "-o", staging.appending("grid.heic").string, tiles.appending("tile-0-0.png").string,
        ])
        let info = try CommandLineTool.run(["heif-info", staging.appending("grid.heic").string]).standardOutput
        try #require(info.contains("tiles: 4x3"), "\(info)")

        // A first job starts the image worker, whose threads are counted idle.
        try Fixtures.makeImage(at: harness.inbox.appending("first.png"), width: 64, height: 48)
        let started = try await daemon.waitForLog("Job started", "first.png")
        let worker = try #require(Logfmt.parse(started[0])?["worker.pid"].flatMap { Int32($0) })
        _ = try await harness.waitForSidecars(1)
        let idle = try #require(Self.threads(of: worker))

        try harness.moveIn(["grid.heic"], from: staging)
        var peak = idle
        var busySamples = 0
        var lastTicks = Self.cpuTicks(of: worker)
        let deadline = ContinuousClock.now + .seconds(60)
        let sidecar = harness.outbox.appending("grid.jpg.chute.json").string
        while !FileManager.default.fileExists(atPath: sidecar), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(2))
            guard let threads = Self.threads(of: worker), let ticks = Self.cpuTicks(of: worker) else { break }
            peak = max(peak, threads)
            if let last = lastTicks, ticks > last { busySamples += 1 }
            lastTicks = ticks
        }
        let sidecars = try await harness.waitForSidecars(2)
        let photo = try #require(sidecars["grid.jpg.chute.json"])
        #expect(photo.status == .completed, "\(String(describing: photo.error))")
        #expect(photo.details["inputWidth"] == "2048")
        #expect(busySamples >= 5, "the worker was seen converting in \(busySamples) samples")
        #expect(peak <= idle + 1, "the worker ran \(peak) threads, \(idle) when idle")
    }

    /// The threads of a process, from `/proc`; `nil` once it has exited.
    private static func threads(of process: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8) else { return nil }
        let line = status.split(separator: "\n").first { $0.hasPrefix("Threads:") }
        return line.flatMap { Int($0.dropFirst("Threads:".count).trimmingCharacters(in: .whitespaces)) }
    }

    /// A process's user and system CPU time in clock ticks, from `/proc`; `nil` once it has exited.
    private static func cpuTicks(of process: Int32) -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/\(process)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // The fields after the command's closing parenthesis, from the state (field 3): utime and stime are 14, 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    /// A worker that has had no job for `workerIdle` exits, giving its memory back, and the next job starts a new one.
    @Test func anIdleWorkerExitsAndTheNextJobStartsANewOne() async throws {
        let harness = try DaemonHarness(settings: "  workerIdle: 1s")
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        try Fixtures.makeImage(at: harness.inbox.appending("first.png"), width: 64, height: 48)
        let started = try await daemon.waitForLog("Job started", "first.png")
        let first = try #require(Logfmt.parse(started[0])?["worker.pid"].flatMap { Int32($0) })
        let stopped = try await daemon.waitForLog("Idle worker stopped", "worker.pid=\(first)")
        #expect(Logfmt.parse(stopped[0])?["engine"] == "image")
        try await waitUntil("worker \(first) has exited") { kill(first, 0) != 0 ? true : nil }
        try Fixtures.makeImage(at: harness.inbox.appending("second.png"), width: 64, height: 48)
        let again = try await daemon.waitForLog("Job started", "second.png")
        let second = try #require(Logfmt.parse(again[0])?["worker.pid"].flatMap { Int32($0) })
        #expect(second != first)
        let sidecars = try await harness.waitForSidecars(2)
        #expect(sidecars.values.allSatisfy { $0.status == .completed })
    }

    /// Each conversion's CPU time is measured (in its sidecar) and kept in the journal beside the model's estimate;
    /// a restarted daemon refines its first estimates by what its rule's jobs took before.
    @Test func aRestartedDaemonEstimatesFromWhatItsRulesJobsTook() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        let first = ["a.png", "b.png", "c.png"]
        for (index, name) in (first + ["d.png"]).enumerated() {
            try Fixtures.makeImage(at: staging.appending(name), width: 1200 + 100 * index, height: 900)
        }
        try harness.moveIn(first, from: staging)
        let sidecars = try await harness.waitForSidecars(first.count)
        let daemon = try #require(harness.daemon)
        // What each photo took against its estimate. The history has the sentinel's too, but the median of the four
        // lies among the photos' three whatever the sentinel's is.
        var ratios: [Double] = []
        for sidecar in sidecars.values where sidecar.rule == "to-jpg" {
            let cpu = try #require(sidecar.cpuSeconds, "\(sidecar.source.path) has no CPU time")
            #expect(cpu > 0)
            let estimated = try #require(
                daemon.logLines(containing: "Job cost estimated", "job.id=\(sidecar.jobID)").first.flatMap {
                    Logfmt.parse($0)?["cost"].flatMap(Double.init)
                }
            )
            ratios.append(cpu / estimated)
        }
        try #require(ratios.count >= 3, "the history needs three jobs of a rule (CostHistory.minimumSamples)")
        daemon.send(SIGTERM)
        #expect(try await daemon.waitForExit().status == 0)

        try await harness.start()
        try harness.moveIn(["d.png"], from: staging)
        let restarted = try #require(harness.daemon)
        let queued = try await restarted.waitForLog("Job queued", "d.png")
        let jobID = try #require(queued.first.flatMap { Logfmt.parse($0)?["job.id"] })
        let estimate = try #require(
            restarted.logLines(containing: "Job cost estimated", "job.id=\(jobID)").first.flatMap(Logfmt.parse)
        )
        let factor = try #require(estimate["cost.factor"].flatMap(Double.init), "\(estimate)")
        let model = try #require(estimate["cost.model"].flatMap(Double.init))
        let cost = try #require(estimate["cost"].flatMap(Double.init))
        #expect(abs(cost - model * factor) <= 0.002 + 0.01 * cost)
        // Rounded to thousandths in the log; the median lies among the ratios.
        #expect(
            (ratios.min()! * 0.95 - 0.001)...(ratios.max()! * 1.05 + 0.001) ~= factor,
            "factor \(factor) against the first run's ratios \(ratios.sorted())"
        )
        #expect(try await harness.waitForSidecars(first.count + 1)["d.jpg.chute.json"]?.status == .completed)
    }
}
