import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Notifications from the real daemon to an HTTP listener of the test's own on 127.0.0.1: a webhook's JSON, an ntfy
/// topic's text, the digest, retries with back-off, and a receiver that never answers.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct NotificationsEndToEndTests {
    private static let rule = """
          - name: to-jpg
            match: ["*.png", "*.jpg"]
            to: jpg
            output: ./outbox
        """

    @Test func aWebhookAndATopicGetTheGoodAndTheCorruptFileAndTheDigestCountsBoth() async throws {
        let listener = try LoopbackListener(answer: .http([200]))
        defer { listener.stop() }
        let base = "http://127.0.0.1:\(listener.port)"
        // A cut-off JPEG looks like one still being written; it is waited for `incompleteTimeout`, shortened here.
        let harness = try DaemonHarness(
            rules: Self.rule,
            settings: "  incompleteTimeout: 1s\n  digestEvery: 1s",
            topLevel: """
                notify:
                  - url: \(base)/hook
                    on: [failed, completed, digest]
                  - ntfy: \(base)/chute-alerts
                    on: failed
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("good.png"), width: 64, height: 48)
        try Fixtures.makeImage(at: staging.appending("whole.jpg"), width: 800, height: 600)
        try Fixtures.truncatedCopy(
            of: staging.appending("whole.jpg"),
            to: staging.appending("broken.jpg"),
            keeping: 0.3
        )
        let goodSize = try #require(
            try FileManager.default.attributesOfItem(atPath: staging.appending("good.png").string)[.size] as? Int
        )
        try harness.moveIn(["good.png", "broken.jpg"], from: staging)

        // The digest comes at least a second after both jobs ended; digests cover consecutive spans, so they are
        // added up.
        let hooks = try await waitUntil("both jobs' webhooks and digests counting both", timeout: 60) {
            () -> [[String: Any]]? in
            let hooks = listener.httpRequests.filter { $0.path == "/hook" }.compactMap { Self.object($0.body) }
            let digests = hooks.compactMap { $0["digest"] as? [String: Any] }
            let counts = digests.flatMap { $0["rules"] as? [[String: Any]] ?? [] }.filter {
                $0["rule"] as? String == "to-jpg"
            }
            let completed = counts.reduce(0) { $0 + ($1["completed"] as? Int ?? 0) }
            let failed = counts.reduce(0) { $0 + ($1["failed"] as? Int ?? 0) }
            return completed >= 1 && failed >= 1 ? hooks : nil
        }
        let completed = try #require(hooks.first { $0["event"] as? String == "completed" })
        let job = try #require(completed["job"] as? [String: Any])
        #expect((job["id"] as? String)?.isEmpty == false)
        #expect(job["rule"] as? String == "to-jpg")
        #expect(job["state"] as? String == "completed")
        #expect((job["source"] as? String)?.hasSuffix("/inbox/good.png") == true)
        #expect(job["startedAt"] is String && job["endedAt"] is String && completed["time"] is String)
        let outputs = try #require(completed["outputs"] as? [[String: Any]])
        #expect(outputs.count == 1)
        #expect((outputs.first?["path"] as? String)?.hasSuffix("/outbox/good.jpg") == true)
        #expect((outputs.first?["size"] as? Int ?? 0) > 0)
        #expect(completed["sourceSize"] as? Int == goodSize)
        // Durations to the millisecond, here and in the log: not 1.7012126969999999.
        let duration = completed["duration"] as? Double ?? -1
        print("notifications: duration \(duration)")
        #expect(duration >= 0 && (duration * 1000).rounded() / 1000 == duration, "\(duration)")
        let logged = try #require(harness.daemon?.logLines(containing: "Job completed", "good.png").first)
        let seconds = try #require(Logfmt.parse(logged)?["duration"])
        #expect(seconds.split(separator: ".").last.map { $0.count <= 3 } == true, "\(logged)")

        let failed = try #require(hooks.first { $0["event"] as? String == "failed" })
        let failedJob = try #require(failed["job"] as? [String: Any])
        #expect(failedJob["state"] as? String == "failed")
        #expect(failedJob["code"] as? String == "corruptInput")
        #expect((failedJob["message"] as? String)?.isEmpty == false)
        #expect((failedJob["source"] as? String)?.hasSuffix("/inbox/broken.jpg") == true)
        #expect((failed["outputs"] as? [Any])?.isEmpty == true)
        #expect(hooks.filter { $0["event"] as? String == "completed" || $0["event"] as? String == "failed" }.count == 2)

        let failures = hooks.compactMap { $0["digest"] as? [String: Any] }.flatMap {
            $0["failures"] as? [[String: Any]] ?? []
        }
        #expect(failures.count == 1)
        #expect((failures.first?["source"] as? String)?.hasSuffix("/inbox/broken.jpg") == true)
        #expect(failures.first?["code"] as? String == "corruptInput")

        // The topic wants failures only: one text message, high priority.
        let topic = listener.httpRequests.filter { $0.path == "/chute-alerts" }
        #expect(topic.count == 1)
        let text = String(decoding: topic.first?.body ?? Data(), as: UTF8.self)
        #expect(text.hasPrefix("broken.jpg failed: corruptInput: "), "\(text)")
        #expect(text.hasSuffix(" (rule to-jpg)"), "\(text)")
        #expect(topic.first?.headers["priority"] == "high")
        #expect(topic.first?.headers["title"] == "Chute: broken.jpg failed")
        #expect(topic.first?.headers["tags"] == "warning")
        #expect(topic.first?.headers["content-type"]?.hasPrefix("text/plain") == true)
        #expect(listener.httpRequests.first { $0.path == "/hook" }?.headers["content-type"] == "application/json")
    }

    @Test func aWebhookThatAnswers500TwiceGetsTheNotificationOnTheThirdTry() async throws {
        let listener = try LoopbackListener(answer: .http([500, 500, 200]))
        defer { listener.stop() }
        let harness = try DaemonHarness(
            rules: Self.rule,
            topLevel: """
                notify:
                  - url: http://chute:s3cret@127.0.0.1:\(listener.port)/hook?token=t0ken
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeRandomFile(at: staging.appending("noise.png"), bytes: 4096)
        try harness.moveIn(["noise.png"], from: staging)

        let daemon = try #require(harness.daemon)
        try await daemon.waitForLog("Notification sent", "try=3")
        let requests = listener.httpRequests
        #expect(requests.map(\.status) == [500, 500, 200])
        #expect(Set(requests.map(\.body)).count == 1, "every try sends the same notification")
        #expect(requests.allSatisfy { $0.path == "/hook?token=t0ken" })
        let credentials = Data("chute:s3cret".utf8).base64EncodedString()
        #expect(requests.allSatisfy { $0.headers["authorization"] == "Basic \(credentials)" })
        let job = try #require(Self.object(requests[2].body)?["job"] as? [String: Any])
        #expect(job["code"] as? String == "unsupportedInput")

        // Each failed try is logged with the URL (no credentials, no query), the status and the back-off.
        let tries = daemon.logLines(containing: "Notification try failed").compactMap(Logfmt.parse)
        #expect(tries.map { $0["url"] } == Array(repeating: "http://127.0.0.1:\(listener.port)/hook", count: 2))
        #expect(tries.map { $0["status"] } == ["500", "500"])
        #expect(tries.map { $0["retryIn"] } == ["1s", "2s"])
        #expect(tries.map { $0["try"] } == ["1", "2"])
        let leaks = daemon.log.filter { $0.contains("s3cret") || $0.contains("t0ken") }
        #expect(leaks.isEmpty, "\(leaks)")
    }

    @Test func aWebhookThatNeverAnswersDelaysNoJob() async throws {
        let listener = try LoopbackListener(answer: .silence)
        defer { listener.stop() }
        let harness = try DaemonHarness(
            rules: Self.rule,
            topLevel: """
                notify:
                  - url: http://127.0.0.1:\(listener.port)/hook
                    on: [completed]
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("first.png"), width: 32, height: 32)
        try Fixtures.makeImage(at: staging.appending("second.png"), width: 32, height: 32)
        try harness.moveIn(["first.png"], from: staging)
        try await waitUntil("the first job's notification to reach the listener") {
            listener.httpRequests.isEmpty ? nil : true
        }
        // The first notification waits for an answer that never comes; the next job does not wait for it.
        try harness.moveIn(["second.png"], from: staging)
        let sidecars = try await harness.waitForSidecars(2)
        #expect(sidecars["second.jpg.chute.json"]?.status == .completed)
        let daemon = try #require(harness.daemon)
        #expect(daemon.logLines(containing: "Notification sent").isEmpty)
        #expect(daemon.logLines(containing: "Notification given up").isEmpty)
        #expect(listener.httpRequests.allSatisfy { $0.status == nil })

        // Shutdown does not wait for it either: what is not sent is dropped, and said so.
        daemon.send(SIGTERM)
        let exit = try await daemon.waitForExit(timeout: 30)
        #expect(exit.status == 0 && !exit.signalled)
        #expect(!daemon.logLines(containing: "Notification not sent: the daemon is stopping").isEmpty)
    }

    /// The JSON object in a body, or `nil`.
    /// A notification whose webhook answers 500 to every try is kept in the journal, not lost: the webhook's next
    /// notification that it takes brings the kept one after it.
    @Test func aNotificationNotTakenAfterEveryTryIsSentWhenTheWebhookIsBack() async throws {
        let listener = try LoopbackListener(answer: .http([500, 500, 500, 500, 500, 200]))
        defer { listener.stop() }
        let harness = try DaemonHarness(
            rules: Self.rule,
            topLevel: """
                notify:
                  - url: http://127.0.0.1:\(listener.port)/hook
                    on: [completed]
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("first.png"), width: 32, height: 32)
        try Fixtures.makeImage(at: staging.appending("second.png"), width: 32, height: 32)
        try harness.moveIn(["first.png"], from: staging)
        // Five tries, 1 + 2 + 4 + 8 s apart.
        try await waitUntil("the fifth try", timeout: 60) { listener.httpRequests.count >= 5 ? true : nil }
        try await waitUntil("the first notification kept or given up", timeout: 30) {
            daemon.logLines(containing: "Notification not taken after every try").first
                ?? daemon.logLines(containing: "Notification given up").first
        }
        try harness.moveIn(["second.png"], from: staging)

        let sent = try await waitUntil("both jobs' notifications taken", timeout: 30) { () -> [String]? in
            let taken = listener.httpRequests.filter { $0.status == 200 }
                .compactMap { (Self.object($0.body)?["job"] as? [String: Any])?["source"] as? String }
            return taken.count >= 2 ? taken : nil
        }
        print("kept notification: taken: \(sent.map { FilePath($0).lastComponent?.string ?? $0 })")
        #expect(sent.map { FilePath($0).lastComponent?.string } == ["second.png", "first.png"])
        #expect(daemon.logLines(containing: "Notification given up").isEmpty)
    }

    /// A reload that changes rules but not where notifications go says nothing about notifications; one that adds a
    /// URL says it takes effect at the next restart.
    @Test func aReloadSaysNotificationsChangedOnlyWhenTheyDid() async throws {
        let notify = """
            notify:
              - url: http://127.0.0.1:9/hook
            """
        let harness = try DaemonHarness(rules: Self.rule, topLevel: notify)
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let config = try String(contentsOfFile: harness.configPath.string, encoding: .utf8)
        let added = """
              - name: to-png
                match: "*.gif"
                to: png
                output: ./outbox
            """
        try config.replacingOccurrences(of: "rules:\n", with: "rules:\n" + added + "\n")
            .write(toFile: harness.configPath.string, atomically: true, encoding: .utf8)
        daemon.send(SIGHUP)
        try await daemon.waitForLog("Rules reloaded", "rules=2")
        let changed = "Notifications changed in the rules file"
        #expect(daemon.logLines(containing: changed).isEmpty, "\(daemon.logLines(containing: changed))")

        try config.replacingOccurrences(of: "/hook", with: "/other-hook")
            .write(toFile: harness.configPath.string, atomically: true, encoding: .utf8)
        daemon.send(SIGHUP)
        try await daemon.waitForLog("Rules reloaded", count: 2)
        #expect(daemon.logLines(containing: changed).count == 1)
    }

    private static func object(_ body: Data) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
    }
}
