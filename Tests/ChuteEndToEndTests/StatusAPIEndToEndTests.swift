import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The status API of the real daemon on its Unix socket, spoken to with curl, and the CLI commands that use it.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct StatusAPIEndToEndTests {
    /// The default socket: `.chute/api.sock` beside the journal, itself beside the rules file.
    private static func socket(of harness: DaemonHarness) -> FilePath {
        harness.directory.appending(".chute/api.sock")
    }

    /// One request with curl on the daemon's socket: the status and the body parsed as JSON (`nil` when it is not).
    private static func api(
        _ harness: DaemonHarness,
        _ method: String,
        _ path: String,
        body: String? = nil
    ) throws -> (status: Int, json: Any?, text: String) {
        var arguments = [
            "curl", "-sS", "--max-time", "60", "--unix-socket", Self.socket(of: harness).string, "-X", method,
            "-w", "\n%{http_code}",
        ]
        if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body] }
        let result = try CommandLineTool.run(arguments + ["http://chute\(path)"])
        var lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
        let status = Int(lines.removeLast()) ?? 0
        let text = lines.joined(separator: "\n")
        return (status, try? JSONSerialization.jsonObject(with: Data(text.utf8)), text)
    }

    /// A daemon with a sentinel rule, an image rule and a video rule slow enough to be seen running and cancelled.
    private static func makeHarness() throws -> DaemonHarness {
        try DaemonHarness(
            afterSentinels: """
                  - name: photos
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                  - name: videos
                    match: "*.mkv"
                    to: mp4
                    preset: veryslow
                    output: ./outbox
                """
        )
    }

    private static func startDaemon(_ harness: DaemonHarness) async throws {
        try await harness.start()
        try await harness.daemon?.waitForLog("Status API listening")
    }

    /// A clip long enough that a slow preset is still converting it when the test cancels it.
    private static func makeLongClip(_ harness: DaemonHarness, named name: String) throws {
        let staging = try harness.directory.makeDirectory("staging-\(name)")
        try MediaFixtures.makeClip(
            at: staging.appending(name),
            width: 640,
            height: 360,
            seconds: 60,
            codecArguments: ["-c:v", "mpeg4", "-q:v", "5", "-c:a", "aac"]
        )
        try harness.moveIn([name], from: staging)
    }

    /// Waits until the API lists a running job of `source` with some progress, and returns its id.
    private static func waitForRunningJob(_ harness: DaemonHarness, source: String) async throws -> String {
        try await waitUntil("a running job of \(source) with progress", timeout: 120) {
            let (_, json, _) = try Self.api(harness, "GET", "/api/status")
            let running = (json as? [String: Any])?["running"] as? [[String: Any]] ?? []
            let job = running.first { ($0["source"] as? String)?.hasSuffix(source) == true && $0["progress"] != nil }
            return job?["id"] as? String
        }
    }

    private static func jobs(_ harness: DaemonHarness, _ query: String) throws -> [[String: Any]] {
        let (status, json, text) = try Self.api(harness, "GET", "/api/jobs?\(query)")
        #expect(status == 200, "\(text)")
        return (json as? [String: Any])?["jobs"] as? [[String: Any]] ?? []
    }

    @Test func everyEndpointAnswersAndRefusesWhatItMust() async throws {
        let harness = try Self.makeHarness()
        defer { harness.stop() }
        try await Self.startDaemon(harness)

        let (healthStatus, health, _) = try Self.api(harness, "GET", "/api/health")
        #expect(healthStatus == 200)
        #expect((health as? [String: Any])?["status"] as? String == "ok")
        let mode = try FileManager.default.attributesOfItem(atPath: Self.socket(of: harness).string)[.posixPermissions]
        #expect(mode as? Int == 0o660)

        let (_, rules, _) = try Self.api(harness, "GET", "/api/rules")
        #expect((rules as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["sentinels", "photos", "videos"])

        // A converted photo, in the history with its sidecar and output.
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("beach.png"), width: 64, height: 48)
        try harness.moveIn(["beach.png"], from: staging)
        try await harness.waitForSidecars(1)
        let completed = try Self.jobs(harness, "state=completed&rule=photos&text=beach")
        #expect(completed.count == 1)
        let id = try #require(completed.first?["id"] as? String)
        #expect(try Self.jobs(harness, "state=completed&rule=videos").isEmpty)
        #expect(try Self.jobs(harness, "state=completed&text=nothing-like-this").isEmpty)
        #expect(try Self.jobs(harness, "state=completed&limit=1&offset=5").isEmpty)
        #expect(try Self.jobs(harness, "state=completed&rule=photos&since=2001-01-01T00:00:00Z").count == 1)
        let later = Int(Date().timeIntervalSince1970) + 3600
        #expect(try Self.jobs(harness, "state=completed&since=\(later)").isEmpty)
        let (detailStatus, detail, _) = try Self.api(harness, "GET", "/api/jobs/\(id)")
        #expect(detailStatus == 200)
        let document = try #require(detail as? [String: Any])
        #expect((document["sidecar"] as? [String: Any])?["jobID"] as? String == id)
        let outputs = document["outputs"] as? [[String: Any]] ?? []
        #expect(outputs.first?["path"] as? String == harness.outbox.appending("beach.jpg").string)
        #expect((outputs.first?["size"] as? Int ?? 0) > 0)
        let (_, status, _) = try Self.api(harness, "GET", "/api/status")
        #expect(((status as? [String: Any])?["counts"] as? [String: Int])?["completed"] ?? 0 >= 2)

        // Refusals.
        #expect(try Self.api(harness, "GET", "/api/jobs/no-such-job").status == 404)
        #expect(try Self.api(harness, "POST", "/api/jobs/no-such-job/cancel").status == 404)
        #expect(try Self.api(harness, "POST", "/api/jobs/no-such-job/retry").status == 404)
        #expect(try Self.api(harness, "POST", "/api/jobs/\(id)/retry").status == 409)
        #expect(try Self.api(harness, "POST", "/api/jobs/\(id)/cancel").status == 409)
        #expect(try Self.api(harness, "POST", "/api/retry?rule=no-such-rule").status == 404)
        #expect(try Self.api(harness, "GET", "/api/jobs?state=sleeping").status == 400)
        #expect(try Self.api(harness, "GET", "/api/jobs?limit=-3").status == 400)
        let outside = try Self.api(harness, "POST", "/api/queue", body: #"{"path": "/etc/passwd"}"#)
        #expect(outside.status == 403, "\(outside.text)")
        let escape = harness.inbox.string + "/../rules.yaml"
        #expect(try Self.api(harness, "POST", "/api/queue", body: "{\"path\": \"\(escape)\"}").status == 403)
        #expect(try Self.api(harness, "POST", "/api/queue", body: "not json").status == 400)
        // An address no route has gets the same JSON error body as every refusal.
        let unknown = try Self.api(harness, "GET", "/api/no-such-thing")
        print("api: unknown route: \(unknown.status) \(unknown.text)")
        #expect(unknown.status == 404)
        #expect((unknown.json as? [String: Any])?["error"] as? String == "no such address: GET /api/no-such-thing")
        let big = "{\"path\": \"" + String(repeating: "a", count: 64 * 1024) + "\"}"
        #expect(try Self.api(harness, "POST", "/api/queue", body: big).status == 413)

        // Pause holds a new file; resume queues it; queueing a path beneath the watched folder is accepted.
        #expect(try Self.api(harness, "POST", "/api/pause").status == 200)
        #expect(((try Self.api(harness, "GET", "/api/health").json as? [String: Any])?["paused"] as? Bool) == true)
        try Fixtures.makeImage(at: staging.appending("held.png"), width: 32, height: 32)
        try harness.moveIn(["held.png"], from: staging)
        try await harness.daemon?.waitForLog("Intake paused; the file is held", "held.png")
        #expect(harness.sidecars()["held.jpg.chute.json"] == nil)
        #expect(try Self.api(harness, "POST", "/api/resume").status == 200)
        let sidecars = try await harness.waitForSidecars(2)
        #expect(sidecars["held.jpg.chute.json"]?.status == .completed)
        let queued = try Self.api(
            harness,
            "POST",
            "/api/queue",
            body: "{\"path\": \"\(harness.inbox.appending("held.png").string)\"}"
        )
        #expect(queued.status == 202, "\(queued.text)")
    }

    /// Links made in place (`ln`, `ln -s`) and a symbolic link there at start are each logged as skipped at the info
    /// level, once per version; `chute explain` says a hard link is skipped (not converted), and `POST /api/queue`
    /// refuses it with the reason instead of answering `202 taken`.
    @Test func linksAreSkippedSaidSoOnceAndRefusedOnRequest() async throws {
        let harness = try Self.makeHarness()
        defer { harness.stop() }
        let outside = try harness.directory.makeDirectory("outside")
        let target = outside.appending("photo.png")
        try Fixtures.makeImage(at: target, width: 16, height: 16)
        let (hard, soft, early) = (
            harness.inbox.appending("hard.png"), harness.inbox.appending("soft.png"),
            harness.inbox.appending("early.png")
        )
        #expect(symlink(target.string, early.string) == 0)
        try await Self.startDaemon(harness)
        let daemon = try #require(harness.daemon)
        #expect(link(target.string, hard.string) == 0)
        #expect(symlink(target.string, soft.string) == 0)

        let hardSkip = "level=info msg=\"Skipped: a hard link; the watch's allowHardLinks takes such files\""
        let linkSkip = "level=info msg=\"Skipped: a symbolic link, which is not followed\""
        _ = try await daemon.waitForLog(hardSkip, "hard.png")
        _ = try await daemon.waitForLog(linkSkip, "soft.png")
        _ = try await daemon.waitForLog(linkSkip, "early.png")
        // Closed again unchanged: looked at again, said so again only at the debug level.
        try FileHandle(forWritingAtPath: hard.string).map { try $0.close() }
        _ = try await daemon.waitForLog("level=debug msg=\"Skipped: a hard link, as before\"", "hard.png")
        #expect(daemon.logLines(containing: hardSkip, "hard.png").count == 1)

        let queued = try Self.api(harness, "POST", "/api/queue", body: "{\"path\": \"\(hard.string)\"}")
        print("links: POST /api/queue for a hard link: \(queued.status) \(queued.text)")
        #expect(queued.status == 422, "\(queued.text)")
        #expect(queued.text.contains("hard link"), "\(queued.text)")
        let explained = try await Self.chute(["explain", "--config", harness.configPath.string, hard.string])
        print("links: chute explain: \(explained.output.split(separator: "\n").last ?? "")")
        #expect(explained.status == 1)
        #expect(explained.output.contains("skipped: a hard link (2 names)"), "\(explained.output)")
        #expect(!explained.output.contains("output:"), "\(explained.output)")
        #expect(harness.sidecars().isEmpty)
    }

    /// A file that is not ready waits its watched folder's own `incompleteTimeout`, and says until when: in the log,
    /// in the API's and `chute jobs`' waiting entry, and in `chute explain`.
    @Test func aFileNotReadySaysWhyAndUntilWhenItWaits() async throws {
        let harness = try DaemonHarness(watchOptions: "    incompleteTimeout: 30s")
        defer { harness.stop() }
        try await Self.startDaemon(harness)
        let daemon = try #require(harness.daemon)
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("whole.jpg"), width: 64, height: 48)
        try Fixtures.truncatedCopy(of: staging.appending("whole.jpg"), to: staging.appending("cut.jpg"), keeping: 0.5)
        try harness.moveIn(["cut.jpg"], from: staging)

        let waiting = try await daemon.waitForLog("Waiting until the file is ready", "cut.jpg")
        print("waiting: log: \(waiting[0])")
        let fields = try #require(Logfmt.parse(waiting[0]))
        #expect(fields["incompleteTimeout"] == "30s")
        #expect(fields["until"]?.isEmpty == false, "\(waiting[0])")
        let entry = try await waitUntil("the waiting entry") {
            try Self.jobs(harness, "state=waiting").first { ($0["source"] as? String)?.hasSuffix("cut.jpg") == true }
        }
        #expect(entry["until"] as? String != nil, "\(entry)")
        let listed = try await Self.chute(["jobs", "--config", harness.configPath.string])
        print("waiting: chute jobs: \(listed.output)")
        #expect(listed.output.contains("unless it changes"), "\(listed.output)")
        let explained = try await Self.chute([
            "explain", "--config", harness.configPath.string, harness.inbox.appending("cut.jpg").string,
        ])
        let waits = explained.output.split(separator: "\n").first { $0.hasPrefix("waits:") }
        print("waiting: chute explain: \(waits ?? "")")
        #expect(waits?.contains("incompleteTimeout (30s)") == true, "\(explained.output)")
    }

    @Test func cancelStopsARunningTranscodeAndWritesNothing() async throws {
        let harness = try Self.makeHarness()
        defer { harness.stop() }
        try await Self.startDaemon(harness)
        let daemon = try #require(harness.daemon)
        try Self.makeLongClip(harness, named: "long.mkv")
        let id = try await Self.waitForRunningJob(harness, source: "long.mkv")
        let started = try await daemon.waitForLog("Job started", id)
        let pid = try #require(Logfmt.parse(started[0])?["worker.pid"].flatMap { Int32($0) })

        let (status, json, text) = try Self.api(harness, "POST", "/api/jobs/\(id)/cancel")
        #expect(status == 200, "\(text)")
        #expect((json as? [String: Any])?["state"] as? String == "cancelled")

        // The worker is gone, nothing was written but the sidecar, which says cancelled, as the journal does.
        try await waitUntil("worker \(pid) to be gone") { kill(pid, 0) != 0 ? true : nil }
        #expect(harness.temporaryFiles().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: harness.outbox.appending("long.mp4").string))
        let sidecar = try await waitUntil("the cancelled job's sidecar") { harness.sidecars()["long.mp4.chute.json"] }
        #expect(sidecar.status.rawValue == "cancelled")
        #expect(sidecar.jobID == id)
        let detail = try Self.api(harness, "GET", "/api/jobs/\(id)").json as? [String: Any]
        #expect((detail?["job"] as? [String: Any])?["state"] as? String == "cancelled")
        #expect(try Self.jobs(harness, "state=cancelled").compactMap { $0["id"] as? String } == [id])

        // A cancelled job can be retried: its file runs again (cancelled again here, to end the test).
        let retried = try Self.api(harness, "POST", "/api/jobs/\(id)/retry")
        print("cancel: retry of the cancelled job: \(retried.status) \(retried.text)")
        #expect(retried.status == 200, "\(retried.text)")
        let again = try await Self.waitForRunningJob(harness, source: "long.mkv")
        #expect(again != id)
        #expect(try Self.api(harness, "POST", "/api/jobs/\(again)/cancel").status == 200)
    }

    /// A quarantined job's source is shown where it is now, in quarantine; Retry refuses it with what to do instead
    /// (move it back); moved back, it is taken again, and its stale reason file goes.
    @Test func aQuarantinedJobSaysWhereItsSourceIsAndItsReasonGoesWhenItComesBack() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: photos
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                    quarantine: ./quarantine
                """,
            settings: "  incompleteTimeout: 1s"
        )
        defer { harness.stop() }
        try await Self.startDaemon(harness)
        let daemon = try #require(harness.daemon)
        let staging = try harness.directory.makeDirectory("staging")
        try Data("not a picture\n".utf8).write(to: URL(fileURLWithPath: staging.appending("scan.png").string))
        try harness.moveIn(["scan.png"], from: staging)
        _ = try await daemon.waitForLog("Source quarantined", "scan.png")
        let quarantined = harness.directory.appending("quarantine/scan.png")
        let reason = harness.directory.appending("quarantine/scan.png.reason.txt")
        #expect(FileManager.default.fileExists(atPath: reason.string))

        let failed = try await waitUntil("the failed job to show its quarantine") {
            try Self.jobs(harness, "state=failed").first { $0["quarantined"] != nil }
        }
        print("quarantine: failed job: \(failed["source"] ?? "") quarantined at \(failed["quarantined"] ?? "")")
        #expect(failed["quarantined"] as? String == quarantined.string)
        let id = try #require(failed["id"] as? String)
        let retry = try Self.api(harness, "POST", "/api/jobs/\(id)/retry")
        #expect(retry.status == 409)
        #expect(retry.text.contains("moved to quarantine, \(quarantined)"), "\(retry.text)")

        // Fixed in quarantine (same file, now a picture) and moved back: converted, and its reason file is gone.
        try Fixtures.makeImage(at: staging.appending("fixed.png"), width: 16, height: 16)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: quarantined.string))
        try handle.truncate(atOffset: 0)
        try handle.write(contentsOf: Data(contentsOf: URL(fileURLWithPath: staging.appending("fixed.png").string)))
        try handle.close()
        try FileManager.default.moveItem(atPath: quarantined.string, toPath: harness.inbox.appending("scan.png").string)
        _ = try await waitUntil("the file moved back to be converted") {
            harness.sidecars()["scan.jpg.chute.json"]?.status == .completed ? true : nil
        }
        try await waitUntil("the stale reason file to go") {
            FileManager.default.fileExists(atPath: reason.string) ? nil : true
        }
    }

    @Test func retryQueuesAFailedJobAgain() async throws {
        let harness = try Self.makeHarness()
        defer { harness.stop() }
        try await Self.startDaemon(harness)
        // Text under a picture's name fails; the retry runs a second job on the same file.
        let staging = try harness.directory.makeDirectory("staging")
        try "not a picture".write(toFile: staging.appending("broken.png").string, atomically: true, encoding: .utf8)
        try harness.moveIn(["broken.png"], from: staging)
        try await harness.waitForSidecars(1)
        let failed = try Self.jobs(harness, "state=failed")
        let id = try #require(failed.first?["id"] as? String)

        let (status, _, text) = try Self.api(harness, "POST", "/api/jobs/\(id)/retry")
        #expect(status == 200, "\(text)")
        let again = try await waitUntil("a second failed job") {
            try Self.jobs(harness, "state=failed").first { $0["id"] as? String != id }
        }
        #expect(again["source"] as? String == harness.inbox.appending("broken.png").string)
        #expect(try Self.jobs(harness, "state=retried").compactMap { $0["id"] as? String } == [id])
        // All failed jobs of the rule, the same way.
        let (allStatus, all, _) = try Self.api(harness, "POST", "/api/retry?rule=photos")
        #expect(allStatus == 200)
        #expect((all as? [String: Any])?["retried"] as? [String] == [again["id"] as? String ?? ""])
    }

    @Test func eventsStreamShowsAJobFromQueuedToCompleted() async throws {
        let harness = try Self.makeHarness()
        defer { harness.stop() }
        try await Self.startDaemon(harness)
        // Two clients: each event is encoded once for both, and both read the same records.
        let streams = [harness.directory.appending("events.txt"), harness.directory.appending("events-2.txt")]
        var curls: [Process] = []
        defer { for curl in curls { curl.terminate() } }
        for stream in streams {
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            curl.arguments = [
                "curl", "-sSN", "--unix-socket", Self.socket(of: harness).string, "-o", stream.string,
                "http://chute/api/events",
            ]
            try curl.run()
            curls.append(curl)
            try await waitUntil("the event stream to open") {
                (try? String(contentsOfFile: stream.string, encoding: .utf8))?.contains(": chute job events") == true
                    ? true : nil
            }
        }
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("sunset.png"), width: 64, height: 64)
        try harness.moveIn(["sunset.png"], from: staging)

        // sunset.png's records up to its completed event, as (kind, JSON, the record's text).
        func records(_ stream: FilePath) async throws -> [(String, [String: Any], String)] {
            try await waitUntil("sunset.png's completed event") { () -> [(String, [String: Any], String)]? in
                let text = (try? String(contentsOfFile: stream.string, encoding: .utf8)) ?? ""
                let events = text.components(separatedBy: "\n\n").compactMap {
                    record -> (String, [String: Any], String)? in
                    let lines = record.split(separator: "\n")
                    guard let kind = lines.first(where: { $0.hasPrefix("event: ") })?.dropFirst(7),
                        let data = lines.first(where: { $0.hasPrefix("data: ") })?.dropFirst(6),
                        let json = try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any],
                        (json["source"] as? String)?.hasSuffix("sunset.png") == true
                    else { return nil }
                    return (String(kind), json, record)
                }
                return events.contains { $0.0 == "completed" } ? events : nil
            }
        }
        let events = try await records(streams[0])
        #expect(events.map(\.0).filter { $0 != "progress" } == ["queued", "started", "completed"])
        #expect(Set(events.compactMap { $0.1["jobID"] as? String }).count == 1)
        #expect(events.last?.1["outputs"] as? [String] == [harness.outbox.appending("sunset.jpg").string])
        let other = try await records(streams[1])
        #expect(other.map(\.2).filter { !$0.hasPrefix("event: progress") }
            == events.map(\.2).filter { !$0.hasPrefix("event: progress") })

        // A client still reading the stream does not hold up shutdown; the socket goes with the daemon.
        let daemon = try #require(harness.daemon)
        daemon.send(SIGTERM)
        let exit = try await daemon.waitForExit(timeout: 30)
        #expect(exit.status == 0)
        #expect(!FileManager.default.fileExists(atPath: Self.socket(of: harness).string))
    }

    @Test func aStaleSocketIsReplacedAndAnythingElseRefused() async throws {
        let harness = try Self.makeHarness()
        defer { harness.stop() }
        let socket = Self.socket(of: harness)
        try FileManager.default.createDirectory(
            atPath: socket.removingLastComponent().string,
            withIntermediateDirectories: true
        )
        // A socket file that nothing listens on, as a killed daemon leaves it.
        try CommandLineTool.run([
            "python3", "-c", "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", socket.string,
        ])
        try await Self.startDaemon(harness)
        #expect(try Self.api(harness, "GET", "/api/health").status == 200)
        harness.daemon?.terminate()

        // A regular file in its place is not removed: the daemon stops and says why.
        _ = unlink(socket.string)
        try "mine".write(toFile: socket.string, atomically: true, encoding: .utf8)
        let daemon = try ChuteProcess(["run", "--config", harness.configPath.string])
        let exit = try await daemon.waitForExit()
        #expect(exit.status != 0)
        #expect(
            daemon.log.contains {
                $0.contains("cannot serve the status API on \(socket): it exists and is not a socket")
            },
            "\(daemon.log)"
        )
        #expect((try? String(contentsOfFile: socket.string, encoding: .utf8)) == "mine")
    }

    /// Past `historyRetention`, a finished job leaves the history once its source has gone; a job whose source is still
    /// there stays, and still keeps that file from being converted again after a restart.
    @Test func theHistoryForgetsOldJobsWhoseSourceHasGone() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: sentinels
                    match: "zz-sentinel-*.png"
                    to: jpg
                    output: ./outbox
                  - name: kept
                    match: "kept-*.png"
                    to: jpg
                    output: ./outbox
                  - name: gone
                    match: "gone-*.png"
                    to: jpg
                    output: ./outbox
                    source: delete
                """,
            settings: "  historyRetention: 2s"
        )
        defer { harness.stop() }
        try await Self.startDaemon(harness)
        let staging = try harness.directory.makeDirectory("staging")
        for name in ["kept-1.png", "gone-1.png"] {
            try Fixtures.makeImage(at: staging.appending(name), width: 32, height: 24)
        }
        try harness.moveIn(["kept-1.png", "gone-1.png"], from: staging)
        try await harness.waitForSidecars(2)
        // The rule deletes its source once the source has been left alone for a while after the job.
        try await waitUntil("gone-1.png deleted by its rule", timeout: 30) {
            FileManager.default.fileExists(atPath: harness.inbox.appending("gone-1.png").string) ? nil : true
        }

        // The sentinel's source stays too, so the one row pruned is gone-1.png's.
        let pruned = try await #require(harness.daemon).waitForLog("History pruned", "deleted=1", timeout: 30)
        #expect(pruned.count == 1, "\(pruned)")
        try #require(harness.daemon).send(SIGTERM)
        _ = try await #require(harness.daemon).waitForExit()

        // After a restart the history is the journal's alone: the kept job is there, the pruned one is not, and the
        // kept source, still in the inbox, is not converted again.
        try await Self.startDaemon(harness)
        let sources = try Self.jobs(harness, "state=completed&limit=100").compactMap { $0["source"] as? String }
        #expect(sources.contains { $0.hasSuffix("/kept-1.png") }, "\(sources)")
        #expect(!sources.contains { $0.hasSuffix("/gone-1.png") }, "\(sources)")
        let sidecars = try await harness.waitForSidecars(2)
        #expect(sidecars.count == 2, "\(sidecars.keys.sorted())")
    }

    @Test func tcpNeedsTheBearerTokenAndATokenFile() async throws {
        let port = try LoopbackListener.freePort()
        let harness = try DaemonHarness(
            settings: """
                  api:
                    listen: 127.0.0.1:\(port)
                    tokenFile: ./token
                """
        )
        defer { harness.stop() }
        try "s3cret-token\n".write(
            toFile: harness.directory.appending("token").string,
            atomically: true,
            encoding: .utf8
        )
        try await harness.start()
        try await harness.daemon?.waitForLog("Status API listening", "127.0.0.1:\(port)")
        func status(_ headers: [String]) throws -> String {
            try CommandLineTool.run(
                ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}"] + headers.flatMap { ["-H", $0] }
                    + ["http://127.0.0.1:\(port)/api/health"]
            ).standardOutput
        }
        #expect(try status([]) == "401")
        #expect(try status(["Authorization: Bearer wrong-token!"]) == "401")
        #expect(try status(["Authorization: Bearer s3cret-toke"]) == "401")
        #expect(try status(["Authorization: Basic s3cret-token"]) == "401")
        #expect(try status(["Authorization: Bearer s3cret-token"]) == "200")
        // The socket needs no token: its permissions decide.
        #expect(try Self.api(harness, "GET", "/api/health").status == 200)

        // No token file, no TCP: chute check refuses the config.
        let refused = harness.directory.appending("refused.yaml")
        try """
        watch:
          - path: ./inbox
        rules:
          - name: a
            match: "*.png"
            to: jpg
            output: ./outbox
        settings:
          api:
            listen: 127.0.0.1:8750
        """.write(toFile: refused.string, atomically: true, encoding: .utf8)
        let check = try await Self.chute(["check", refused.string])
        #expect(check.status == 2)
        #expect(check.error.contains("'listen' needs 'tokenFile'"), "\(check.error)")
    }

    /// Runs `chute` to completion and returns its status and both outputs.
    private static func chute(_ arguments: [String]) async throws -> (status: Int32, output: String, error: String) {
        let process = try ChuteProcess(arguments)
        let exit = try await process.waitForExit()
        return (exit.status, process.output.joined(separator: "\n"), process.log.joined(separator: "\n"))
    }

    @Test func commandLineShowsRetriesAndCancelsThroughTheDaemon() async throws {
        let harness = try Self.makeHarness()
        defer { harness.stop() }
        let config = harness.configPath.string

        // No daemon yet: a clear message and exit 3.
        let none = try await Self.chute(["status", "--config", config])
        #expect(none.status == 3)
        #expect(none.error.contains("no Chute daemon answers on \(Self.socket(of: harness))"), "\(none.error)")

        try await Self.startDaemon(harness)
        try Self.makeLongClip(harness, named: "film.mkv")
        let id = try await Self.waitForRunningJob(harness, source: "film.mkv")
        let status = try await Self.chute(["status", "--config", config])
        #expect(status.status == 0, "\(status.error)")
        #expect(status.output.contains("running 1"), "\(status.output)")
        #expect(status.output.contains("% \(id)  videos"), "no progress bar in \(status.output)")
        // The film holds its share of the CPU budget.
        let budget = try await Self.chute(["status", "--config", config, "--json"])
        let document = try JSONSerialization.jsonObject(with: Data(budget.output.utf8)) as? [String: Any]
        let held = try #require(document?["budget"] as? [String: Any], "\(budget.output)")
        let (cores, inUse) = (held["cpu"] as? Int ?? 0, held["cpuInUse"] as? Int ?? 0)
        #expect(inUse >= 1 && inUse <= cores, "\(held)")
        #expect(status.output.contains("Budget: \(inUse) of \(cores) cores, "), "\(status.output)")

        let cancel = try await Self.chute(["cancel", "--config", config, id])
        #expect(cancel.status == 0, "\(cancel.error)")
        #expect(cancel.output == "Job \(id) cancelled.")
        let sidecar = try await waitUntil("the cancelled sidecar") { harness.sidecars()["film.mp4.chute.json"] }
        #expect(sidecar.status.rawValue == "cancelled")

        let staging = try harness.directory.makeDirectory("staging")
        try "not a picture".write(toFile: staging.appending("fake.png").string, atomically: true, encoding: .utf8)
        try harness.moveIn(["fake.png"], from: staging)
        let failed = try await waitUntil("the failed job") { harness.sidecars()["fake.jpg.chute.json"] }
        #expect(failed.status == .failed)
        let jobs = try await Self.chute(["jobs", "--config", config, "--failed", "--json"])
        let list = try JSONSerialization.jsonObject(with: Data(jobs.output.utf8)) as? [String: Any]
        #expect((list?["jobs"] as? [[String: Any]])?.compactMap { $0["id"] as? String } == [failed.jobID])
        let retry = try await Self.chute(["retry", "--config", config, failed.jobID])
        #expect(retry.status == 0, "\(retry.error)")
        #expect(retry.output == "Job \(failed.jobID) queued again.")
        try await waitUntil("a second job of fake.png") {
            harness.sidecars()["fake.jpg.chute.json"].flatMap { $0.jobID != failed.jobID ? true : nil }
        }
        let unknown = try await Self.chute(["show", "--config", config, "no-such-job"])
        #expect(unknown.status == 1)
        #expect(unknown.error.contains("no job 'no-such-job'"))
    }
}
