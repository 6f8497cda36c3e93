import ChuteCore
import ChuteTestSupport
import Foundation
import Glibc
import SystemPackage
import Testing

/// Files uploaded to the real daemon over TCP with its bearer token, as an app or a script would with curl: each
/// becomes a job of its rule, whose status is polled and whose outputs are downloaded; refusals say why and leave
/// nothing behind; kills during and after an upload lose nothing and keep nothing half received.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct UploadEndToEndTests {
    private static let token = "upload-test-token"

    /// A daemon with a rule that takes uploads (clips to 480p MP4, photos to 300 px JPEG) and one that does not,
    /// listening on a free loopback port with a token.
    private static func harness(settings: String = "", api: String = "") throws -> (DaemonHarness, Int) {
        let port = Int(try LoopbackListener.freePort())
        let harness = try DaemonHarness(
            rules: """
                  - name: clips
                    match: ["*.mov", "*.mp4", "*.mkv"]
                    to: mp4
                    shortSide: 480
                    preset: ultrafast
                    output: ./outbox
                    upload: true
                  - name: photos
                    match: ["*.png", "*.jpg"]
                    to: jpg
                    width: 300
                    output: ./outbox
                    upload: true
                  - name: watched-only
                    match: "*.tif"
                    to: png
                    output: ./outbox
                """,
            settings: """
                  api:
                    listen: 127.0.0.1:\(port)
                    tokenFile: ./token
                \(api)
                  concurrency: {video: 1}
                \(settings)
                """
        )
        try "\(Self.token)\n".write(
            toFile: harness.directory.appending("token").string,
            atomically: true,
            encoding: .utf8
        )
        return (harness, port)
    }

    /// curl's answer: the status, the body, and the response's header lines.
    private struct Answer {
        var status: Int
        var body: String
        var headers: [String]

        var json: [String: Any] {
            (try? JSONSerialization.jsonObject(with: Data(self.body.utf8))) as? [String: Any] ?? [:]
        }
    }

    private static func curl(_ port: Int, _ path: String, _ arguments: [String], token: Bool = true) throws -> Answer {
        let headers = FileManager.default.temporaryDirectory.appendingPathComponent("headers-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: headers) }
        let result = try CommandLineTool.run(
            ["curl", "-sS", "--max-time", "60", "-D", headers.path, "-w", "\n%{http_code}"]
                + (token ? ["-H", "Authorization: Bearer \(Self.token)"] : []) + arguments
                + ["http://127.0.0.1:\(port)\(path)"]
        )
        var lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let status = Int(lines.popLast() ?? "") ?? 0
        let fields = ((try? String(contentsOf: headers, encoding: .utf8)) ?? "")
            .split(separator: "\r\n").map(String.init)
        return Answer(status: status, body: lines.joined(separator: "\n"), headers: fields)
    }

    /// Stops (SIGSTOP) the worker that runs the job of the upload named `name`, so that its lane stays busy for as
    /// long as the test needs, however fast the machine is; returns the worker's pid.
    private static func stopWorker(running name: String, of daemon: ChuteProcess) async throws -> Int32 {
        let started = try await daemon.waitForLog("Job started", "/\(name) ")
        let worker = try #require(
            started.first.flatMap { $0.split(separator: " ").first { $0.hasPrefix("worker.pid=") } }
                .flatMap { Int32($0.dropFirst("worker.pid=".count)) }
        )
        kill(worker, SIGSTOP)
        return worker
    }

    /// The files in the spool, the partial bodies included.
    private static func spoolFiles(_ harness: DaemonHarness) -> [String] {
        harness.directory.files(below: ".chute/spool")
    }

    /// How many jobs the journal records.
    private static func journalJobs(_ harness: DaemonHarness) throws -> Int {
        let journal = harness.directory.appending(".chute/journal.sqlite")
        let count = try CommandLineTool.run(["sqlite3", journal.string, "SELECT COUNT(*) FROM job"]).standardOutput
        return Int(count.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    @Test func aClipUploadedWithCurlIsPolledToCompletedAndDownloadedWithRanges() async throws {
        let (harness, port) = try Self.harness()
        defer { harness.stop() }
        let clip = harness.directory.appending("holiday.mov")
        try MediaFixtures.makeClip(
            at: clip,
            width: 1920,
            height: 1080,
            seconds: 15,
            codecArguments: MediaFixtures.h264AAC
        )
        try await harness.start()
        try await harness.daemon?.waitForLog("Status API listening", "127.0.0.1:\(port)")

        let taken = try Self.curl(port, "/api/jobs?rule=clips&name=holiday.mov", ["-T", clip.string])
        #expect(taken.status == 202, "\(taken.body)")
        let id = try #require(taken.json["id"] as? String)
        #expect(taken.headers.contains("Location: /api/jobs/\(id)"), "\(taken.headers)")
        #expect(taken.json["status"] as? String == "pending")

        var seen: [Int] = []
        let done = try await waitUntil("the upload's job to complete", timeout: 180) { () -> [String: Any]? in
            let polled = try Self.curl(port, "/api/jobs/\(id)", []).json
            if let progress = polled["progress"] as? Int, seen.last != progress { seen.append(progress) }
            let status = polled["status"] as? String
            return status == "completed" || status == "failed" ? polled : nil
        }
        print("upload: progress seen \(seen), final \(done["status"] ?? "?")")
        #expect(done["status"] as? String == "completed", "\(done)")
        #expect(seen == seen.sorted(), "progress only rises: \(seen)")
        #expect(seen.contains { (1...99).contains($0) }, "progress between start and end: \(seen)")
        #expect(seen.last == 100)
        let result = try #require(done["result"] as? [String])
        #expect(result == ["/api/jobs/\(id)/outputs/0"])

        let downloaded = harness.directory.appending("downloaded.mp4")
        let whole = try Self.curl(port, result[0], ["-o", downloaded.string])
        #expect(whole.status == 200)
        let tag = try #require(whole.headers.first { $0.lowercased().hasPrefix("etag:") })
        let probe = try CommandLineTool.run([
            "ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height",
            "-of", "csv=p=0", downloaded.string,
        ]).standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
        print("upload: downloaded \(probe), \(tag)")
        #expect(probe == "h264,854,480")

        // A phone resuming the download: the bytes from 1000 on, and a 304 for a copy it has.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: downloaded.string))
        let rest = harness.directory.appending("rest.bin")
        let resumed = try Self.curl(port, result[0], ["-H", "Range: bytes=1000-", "-o", rest.string])
        #expect(resumed.status == 206)
        #expect(resumed.headers.contains("Content-Range: bytes 1000-\(bytes.count - 1)/\(bytes.count)"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: rest.string)) == bytes.dropFirst(1000))
        let etag = String(tag.drop { $0 != ":" }.dropFirst()).trimmingCharacters(in: .whitespaces)
        #expect(try Self.curl(port, result[0], ["-H", "If-None-Match: \(etag)", "-o", "/dev/null"]).status == 304)
        #expect(try Self.curl(port, result[0], ["-H", "Range: bytes=\(bytes.count)-"]).status == 416)

        // DELETE removes the upload, its output and its sidecar from the spool.
        #expect(!Self.spoolFiles(harness).isEmpty)
        let deleted = try Self.curl(port, "/api/jobs/\(id)", ["-X", "DELETE"])
        #expect(deleted.status == 200, "\(deleted.body)")
        #expect(Self.spoolFiles(harness).isEmpty, "\(Self.spoolFiles(harness))")
        #expect(harness.directory.files(below: "outbox").isEmpty, "spooled outputs never go to the rule's folder")
    }

    @Test func refusalsSayWhyAndLeaveNothingBehind() async throws {
        let (harness, port) = try Self.harness(settings: "  maxUploadSize: 1MB")
        defer { harness.stop() }
        try await harness.start()
        try await harness.daemon?.waitForLog("Status API listening", "127.0.0.1:\(port)")
        let photo = harness.directory.appending("photo.png")
        try Fixtures.makeImage(at: photo, width: 400, height: 300)
        let big = harness.directory.appending("big.bin")
        try Data(repeating: 7, count: 3_000_000).write(to: URL(fileURLWithPath: big.string))
        let noise = harness.directory.appending("noise.png")
        try Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7919) }).write(
            to: URL(fileURLWithPath: noise.string)
        )

        var answers: [(String, Answer)] = []
        answers.append(("no token", try Self.curl(port, "/api/jobs?rule=photos", ["-T", photo.string], token: false)))
        answers.append(
            ("not an upload rule", try Self.curl(port, "/api/jobs?rule=watched-only", ["-T", photo.string]))
        )
        answers.append(("unknown rule", try Self.curl(port, "/api/jobs?rule=nope", ["-T", photo.string])))
        answers.append(("too large", try Self.curl(port, "/api/jobs?rule=photos&name=big.png", ["-T", big.string])))
        // No Content-Length: cut off once the body grows past maxUploadSize.
        answers.append(
            (
                "too large, chunked",
                try Self.curl(
                    port,
                    "/api/jobs?rule=photos&name=big.png",
                    ["-H", "Transfer-Encoding: chunked", "--data-binary", "@\(big.string)"]
                )
            )
        )
        answers.append(
            ("not a picture", try Self.curl(port, "/api/jobs?rule=photos&name=n.png", ["-T", noise.string]))
        )
        answers.append(("wrong name", try Self.curl(port, "/api/jobs?rule=photos&name=n.gif", ["-T", photo.string])))
        answers.append(("a form with no file", try Self.curl(port, "/api/jobs?rule=photos", ["-F", "note=nothing"])))
        for (what, answer) in answers { print("upload refused (\(what)): \(answer.status) \(answer.body)") }
        #expect(answers.map(\.1.status) == [401, 403, 404, 413, 413, 415, 415, 400])
        #expect(answers[1].1.body.contains("rules that do: 'clips', 'photos'"))
        #expect(answers[3].1.body.contains("maxUploadSize"))
        #expect(answers[5].1.body.contains("not in a format Chute recognises"))
        #expect(answers[6].1.body.contains("it matches *.png, *.jpg"))
        #expect(answers[7].1.body.contains("the form has no file"))
        #expect(Self.spoolFiles(harness).isEmpty, "\(Self.spoolFiles(harness))")
        #expect(try Self.journalJobs(harness) == 0)

        // A client name is never a path: the upload lands in its own folder of the spool.
        let taken = try Self.curl(port, "/api/jobs?rule=photos&name=..%2F..%2Fetc%2Fpasswd.png", ["-T", photo.string])
        #expect(taken.status == 202, "\(taken.body)")
        let id = try #require(taken.json["id"] as? String)
        #expect(Self.spoolFiles(harness).contains("\(id)/in/passwd.png"), "\(Self.spoolFiles(harness))")
    }

    @Test func convertAnswersEachOfTwentyPhotosFromFourClientsWithItsJPEG() async throws {
        let (harness, port) = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        try await harness.daemon?.waitForLog("Status API listening", "127.0.0.1:\(port)")
        let photos = try harness.directory.makeDirectory("photos")
        for index in 0..<20 {
            try Fixtures.makeImage(at: photos.appending("p\(index).png"), width: 640 + index * 8, height: 480)
        }
        let answers = try await withThrowingTaskGroup(of: [(Int, Int, String)].self) { group in
            for client in 0..<4 {
                group.addTask {
                    try (0..<5).map { round in
                        let index = client * 5 + round
                        let out = photos.appending("p\(index).jpg")
                        let answer = try Self.curl(
                            port,
                            "/api/convert?rule=photos&name=p\(index).png",
                            ["--data-binary", "@\(photos.appending("p\(index).png").string)", "-o", out.string]
                        )
                        let info = try Fixtures.identify(out)
                        return (answer.status, info.width, info.format)
                    }
                }
            }
            var all: [(Int, Int, String)] = []
            for try await some in group { all += some }
            return all
        }
        print("convert: \(answers.count) answers, statuses \(Set(answers.map(\.0))), formats \(Set(answers.map(\.2)))")
        #expect(answers.count == 20)
        #expect(answers.allSatisfy { $0.0 == 200 && $0.1 == 300 && $0.2 == "JPEG" })
        try await waitUntil("the spool to be empty once every answer was sent") {
            Self.spoolFiles(harness).isEmpty ? true : nil
        }
        #expect(harness.directory.files(below: "outbox").isEmpty)
    }

    @Test func aFullQueueAnswers429AndASlowConversionIsCancelledAfterRequestTimeout() async throws {
        let (harness, port) = try Self.harness(settings: "  maxQueued: 1\n  requestTimeout: 1s")
        defer { harness.stop() }
        try await harness.start()
        try await harness.daemon?.waitForLog("Status API listening", "127.0.0.1:\(port)")
        let daemon = try #require(harness.daemon)
        let clip = harness.directory.appending("clip.mkv")
        try MediaFixtures.makeClip(
            at: clip,
            width: 1280,
            height: 720,
            seconds: 10,
            codecArguments: MediaFixtures.h264AAC
        )
        // The first clip runs in the one video lane, whose worker is stopped; the second waits: the queue is full.
        let first = try Self.curl(port, "/api/jobs?rule=clips&name=a.mkv", ["-T", clip.string])
        let worker = try await Self.stopWorker(running: "a.mkv", of: daemon)
        let second = try Self.curl(port, "/api/jobs?rule=clips&name=b.mkv", ["-T", clip.string])
        let refused = try Self.curl(port, "/api/jobs?rule=clips&name=c.mkv", ["-T", clip.string])
        print("queue full: \(first.status) \(second.status) \(refused.status) \(refused.body)")
        #expect(first.status == 202 && second.status == 202)
        #expect(refused.status == 429)
        #expect(refused.headers.contains("Retry-After: 5"), "\(refused.headers)")
        #expect(refused.body.contains("maxQueued"))
        kill(worker, SIGCONT)
        for answer in [first, second] {
            let id = try #require(answer.json["id"] as? String)
            #expect(try Self.curl(port, "/api/jobs/\(id)", ["-X", "DELETE"]).status == 200)
        }

        // Past requestTimeout, POST /api/convert cancels its job and answers 503 (its worker is held as well).
        let answer = Task { try Self.curl(port, "/api/convert?rule=clips&name=slow.mkv", ["-T", clip.string]) }
        let held = try await Self.stopWorker(running: "slow.mkv", of: daemon)
        let slow = try await answer.value
        kill(held, SIGCONT)
        print("convert past requestTimeout: \(slow.status) \(slow.body)")
        #expect(slow.status == 503)
        #expect(slow.body.contains("requestTimeout"))
        try await waitUntil("nothing left in the spool, which holds \(Self.spoolFiles(harness))") {
            Self.spoolFiles(harness).isEmpty ? true : nil
        }
    }

    /// The same photo by every way in: dropped in the watched folder, sent with `chute submit --wait` over TCP, and
    /// converted with `chute convert` and the rule's options, gives the same bytes.
    @Test func submitConvertAndTheWatchedFolderGiveTheSameBytes() async throws {
        let (harness, port) = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        try await harness.daemon?.waitForLog("Status API listening", "127.0.0.1:\(port)")
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("photo.png"), width: 1600, height: 1200)
        let chute = ChuteProcess.executable.string

        let got = try harness.directory.makeDirectory("got")
        let submitted = try CommandLineTool.run(
            [
                chute, "submit", staging.appending("photo.png").string, "--rule", "photos", "--wait", "--output",
                got.string, "--url", "http://127.0.0.1:\(port)", "--token-file",
                harness.directory.appending("token").string,
            ],
            check: false
        )
        print("chute submit: \(submitted.status)\n\(submitted.standardOutput)\(submitted.standardError)")
        #expect(submitted.status == 0)
        #expect(submitted.standardOutput.contains("completed → \(got.appending("photo.jpg").string)"))
        let converted = harness.directory.appending("converted.jpg")
        _ = try CommandLineTool.run([
            chute, "convert", staging.appending("photo.png").string, converted.string, "--width", "300",
        ])
        try FileManager.default.copyItem(
            atPath: staging.appending("photo.png").string,
            toPath: harness.inbox.appending("photo.png").string
        )
        _ = try await harness.waitForSidecars(1)
        // And as a form's file, as curl -F and a browser send it; the name comes from the form.
        let formed = harness.directory.appending("formed.jpg")
        let form = try Self.curl(
            port,
            "/api/convert?rule=photos",
            ["-F", "note=ignored", "-F", "file=@\(staging.appending("photo.png").string)", "-o", formed.string]
        )
        #expect(form.status == 200, "\(form.headers)")
        #expect(form.headers.contains { $0.lowercased().hasPrefix("content-disposition:") && $0.contains("photo.jpg") })

        let bytes = try [got.appending("photo.jpg"), converted, harness.outbox.appending("photo.jpg"), formed].map {
            try Data(contentsOf: URL(fileURLWithPath: $0.string))
        }
        print(
            "same bytes: \(bytes.map(\.count)) bytes, submit = convert: \(bytes[0] == bytes[1]), submit = watched: "
                + "\(bytes[0] == bytes[2]), submit = form: \(bytes[0] == bytes[3])"
        )
        #expect(bytes[0] == bytes[1])
        #expect(bytes[0] == bytes[2])
        #expect(bytes[0] == bytes[3])
        #expect(try Fixtures.identify(got.appending("photo.jpg")).width == 300)

        // A refused file makes it exit 1 with the daemon's reason, and no daemon makes it exit 3.
        let refused = try CommandLineTool.run(
            [
                chute, "submit", staging.appending("photo.png").string, "--rule", "watched-only", "--socket",
                harness.directory.appending(".chute/api.sock").string,
            ],
            check: false
        )
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("does not take uploads"), "\(refused.standardError)")
        let nobody = try CommandLineTool.run(
            [
                chute, "submit", staging.appending("photo.png").string, "--rule", "photos", "--socket",
                "/nonexistent.sock",
            ],
            check: false
        )
        #expect(nobody.status == 3)
    }

    /// A client that stops sending in the middle of its upload is dropped after the API's idleTimeout, and what it
    /// sent is removed.
    @Test func aStalledUploadIsDroppedAndLeavesNothing() async throws {
        let (harness, port) = try Self.harness(api: "    idleTimeout: 2s")
        defer { harness.stop() }
        try await harness.start()
        try await harness.daemon?.waitForLog("Status API listening", "127.0.0.1:\(port)")
        // Announces 5 MB, sends 64 KB, then waits up to 20 s for the daemon to answer or close.
        let client = """
            import socket, sys, time
            s = socket.create_connection(("127.0.0.1", \(port)))
            s.sendall(b"PUT /api/jobs?rule=photos&name=stalled.png HTTP/1.1\\r\\nHost: x\\r\\n"
                      b"Authorization: Bearer \(Self.token)\\r\\nContent-Length: 5000000\\r\\n\\r\\n" + b"\\x89PNG" * 16384)
            s.settimeout(20)
            start = time.monotonic()
            try:
                data = s.recv(65536)
            except socket.timeout:
                data = None
            print("closed" if data == b"" else "timeout" if data is None else "answered", round(time.monotonic() - start, 1))
            """
        let dropped = try CommandLineTool.run(["/usr/bin/python3", "-c", client]).standardOutput
        print("stalled upload: \(dropped)")
        #expect(dropped.hasPrefix("closed"), "\(dropped)")
        try await waitUntil("nothing left in the spool, which holds \(Self.spoolFiles(harness))") {
            Self.spoolFiles(harness).isEmpty ? true : nil
        }
        #expect(try Self.journalJobs(harness) == 0)
    }

    /// Eight clients each send 2 GB at once: the bodies go to the spool as they come, so the daemon's resident memory
    /// stays small. (The bodies are zeros, which no rule takes: each is refused once whole, and removed.)
    @Test func eightUploadsOfTwoGigabytesKeepTheDaemonSmall() async throws {
        let (harness, port) = try Self.harness(settings: "  maxUploadSize: 3GB")
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        try await daemon.waitForLog("Status API listening", "127.0.0.1:\(port)")
        let pid = try #require(daemon.logLines(containing: "Chute started").first?.firstMatch(of: /pid=(\d+)/)?.1)
        @Sendable func residentKB() -> Int? {
            let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            return status?.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }?
                .split(separator: " ").dropFirst().first.flatMap { Int($0) }
        }
        let before = try #require(residentKB())
        let uploads = (0..<8).map { index in
            Task {
                try CommandLineTool.run([
                    "bash", "-c",
                    "head -c 2000000000 /dev/zero | curl -sS -o /dev/null -w '%{http_code}' --max-time 300 "
                        + "-H 'Authorization: Bearer \(Self.token)' -T - "
                        + "'http://127.0.0.1:\(port)/api/jobs?rule=photos&name=zeros\(index).png'",
                ]).standardOutput
            }
        }
        // Sampled until every client has its answer (each is bounded by curl's --max-time).
        let sampler = Task {
            var peak = before
            while !Task.isCancelled {
                if let now = residentKB() { peak = max(peak, now) }
                try? await Task.sleep(for: .milliseconds(100))
            }
            return peak
        }
        var statuses: [String] = []
        for upload in uploads { statuses.append(try await upload.value) }
        sampler.cancel()
        let peak = await sampler.value
        print("8 uploads of 2 GB: resident \(before / 1024) MB before, at most \(peak / 1024) MB during; \(statuses)")
        #expect(statuses == Array(repeating: "415", count: 8))
        #expect(peak < 150 * 1024, "resident memory \(peak / 1024) MB")
        #expect(Self.spoolFiles(harness).isEmpty)
    }

    @Test(.enabled(if: geteuid() == 0, "mounting needs root"))
    func aFullSpoolAnswers507AndKeepsNothing() async throws {
        let (harness, port) = try Self.harness()
        defer { harness.stop() }
        let state = try harness.directory.makeDirectory(".chute")
        try CommandLineTool.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", state.string])
        defer { _ = try? CommandLineTool.run(["umount", "--lazy", state.string]) }
        try await harness.start()
        try await harness.daemon?.waitForLog("Status API listening", "127.0.0.1:\(port)")
        let big = harness.directory.appending("big.png")
        try Data(repeating: 1, count: 4_000_000).write(to: URL(fileURLWithPath: big.string))

        let answer = try Self.curl(port, "/api/jobs?rule=photos&name=big.png", ["-T", big.string])
        print("upload to a full spool: \(answer.status) \(answer.body)")
        #expect(answer.status == 507)
        #expect(answer.body.contains("disk is full"))
        #expect(Self.spoolFiles(harness).isEmpty, "\(Self.spoolFiles(harness))")
    }

    @Test func aKillDuringAnUploadKeepsNothingAndAKillAfterItsAnswerLosesNothing() async throws {
        let (harness, port) = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        try await harness.daemon?.waitForLog("Status API listening", "127.0.0.1:\(port)")

        // 1. Killed while the body is still coming (curl sends it at 200 KB/s).
        let photo = harness.directory.appending("photo.png")
        try Fixtures.makeImage(at: photo, width: 2000, height: 1500)
        let slow = Task {
            try? Self.curl(port, "/api/jobs?rule=photos&name=slow.png", ["--limit-rate", "200k", "-T", photo.string])
        }
        try await waitUntil("part of the body in the spool") {
            Self.spoolFiles(harness).contains { $0.hasSuffix("in/.chute-upload.partial") } ? true : nil
        }
        var daemon = try #require(harness.daemon)
        daemon.send(SIGKILL)
        _ = try await daemon.waitForExit(timeout: 30)
        _ = await slow.value
        try await harness.start()
        try await harness.daemon?.waitForLog("Status API listening", "127.0.0.1:\(port)")
        #expect(Self.spoolFiles(harness).isEmpty, "\(Self.spoolFiles(harness))")
        #expect(try Self.journalJobs(harness) == 0)

        // 2. Killed right after the 202: the job runs after the restart, under the same id.
        let clip = harness.directory.appending("clip.mkv")
        try MediaFixtures.makeClip(
            at: clip,
            width: 1280,
            height: 720,
            seconds: 20,
            codecArguments: MediaFixtures.h264AAC
        )
        // The first clip's worker is stopped in the middle of its job, so that the one video lane stays busy and the
        // second clip surely waits in the queue when the daemon is killed, however fast the machine.
        daemon = try #require(harness.daemon)
        let first = try Self.curl(port, "/api/jobs?rule=clips&name=first.mkv", ["-T", clip.string])
        let worker = try await Self.stopWorker(running: "first.mkv", of: daemon)
        let taken = try Self.curl(port, "/api/jobs?rule=clips&name=second.mkv", ["-T", clip.string])
        #expect([first, taken].map(\.status) == [202, 202], "\(first.body) \(taken.body)")
        let id = try #require(taken.json["id"] as? String)
        let before = try Self.curl(port, "/api/jobs/\(id)", []).json
        #expect(before["status"] as? String == "pending", "\(before)")
        daemon.send(SIGKILL)
        _ = try await daemon.waitForExit(timeout: 30)
        // A stopped worker cannot notice that its supervisor is gone.
        kill(worker, SIGKILL)
        try await harness.start()
        let restarted = try #require(harness.daemon)
        try await restarted.waitForLog("Status API listening", "127.0.0.1:\(port)")
        let opened = try #require(restarted.logLines(containing: "Journal opened").first)
        let done = try await waitUntil("the upload's job to end after the restart", timeout: 180) {
            () -> [String: Any]? in
            let polled = try Self.curl(port, "/api/jobs/\(id)", []).json
            return ["completed", "failed"].contains(polled["status"] as? String ?? "") ? polled : nil
        }
        let resubmitted = restarted.logLines(containing: "Upload submitted again after a restart")
        print("upload after a kill: \(opened); \(resubmitted.count) submitted again; status \(done["status"] ?? "?")")
        #expect(done["status"] as? String == "completed", "\(done)")
        #expect(!resubmitted.isEmpty, "\(opened)")
        #expect(resubmitted.contains { $0.contains(id) }, "\(resubmitted)")
    }
}
