import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon's `/metrics`, read with curl and parsed by Prometheus's own text-format parser (Debian's
/// python3-prometheus-client), after one file converted and one failed.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct MetricsEndToEndTests {
    @Test func countersMatchTheJobsRunAndTCPNeedsTheToken() async throws {
        let port = try LoopbackListener.freePort()
        // A cut-off JPEG looks like one still being written: it is waited for `incompleteTimeout`, shortened here.
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: to-jpg
                    match: "*.jpg"
                    to: jpg
                    output: ./outbox
                """,
            settings: """
                  incompleteTimeout: 1s
                  workerIdle: 10m
                  api:
                    listen: 127.0.0.1:\(port)
                    tokenFile: ./token
                """
        )
        defer { harness.stop() }
        try "metrics-token\n".write(
            toFile: harness.directory.appending("token").string,
            atomically: true,
            encoding: .utf8
        )
        try await harness.start()
        let daemon = try #require(harness.daemon)
        try await daemon.waitForLog("Status API listening", "127.0.0.1:\(port)")
        try await daemon.waitForLog("Status API listening", "api.sock")

        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("whole.jpg"), width: 320, height: 240)
        try Fixtures.truncatedCopy(
            of: staging.appending("whole.jpg"),
            to: staging.appending("broken.jpg"),
            keeping: 0.3
        )
        let inputBytes = try Self.size(of: staging.appending("whole.jpg"))
        try harness.moveIn(["whole.jpg", "broken.jpg"], from: staging)
        let sidecars = try await harness.waitForSidecars(2)
        #expect(sidecars["whole.jpg.chute.json"]?.status == .completed)
        #expect(sidecars["broken.jpg.chute.json"]?.status == .failed)
        let outputBytes = try Self.size(of: harness.outbox.appending("whole.jpg"))

        // A job's end reaches the metrics a moment after its sidecar is written: wait for the three (the photo, the
        // broken one and the sentinel).
        let rule = ["rule": "to-jpg", "engine": "image"]
        let finished = "chute_jobs_finished_total"
        let samples = try await waitUntil("the metrics to count three finished jobs", timeout: 30) {
            let samples = try harness.metrics()
            return samples.filter { $0.name == finished }.reduce(0) { $0 + $1.value } == 3 ? samples : nil
        }
        #expect(samples.value(finished, ["rule": "sentinels", "outcome": "completed"]) == 1)
        #expect(samples.value(finished, rule.merging(["outcome": "completed"]) { $1 }) == 1)
        #expect(samples.value(finished, rule.merging(["outcome": "failed"]) { $1 }) == 1)
        #expect(samples.value("chute_input_bytes_total", rule) == Double(inputBytes))
        #expect(samples.value("chute_output_bytes_total", rule) == Double(outputBytes))
        #expect(inputBytes > 0 && outputBytes > 0)
        // Three jobs started and ended in the image lane: the photo, the broken one and the sentinel.
        #expect(samples.value("chute_job_duration_seconds_count", ["engine": "image"]) == 3)
        #expect(samples.value("chute_job_duration_seconds_bucket", ["engine": "image", "le": "+Inf"]) == 3)
        // Each image lane that ran a job still has its worker (none died, none idled out): as many as the log names.
        let workers = Set(daemon.logLines(containing: "Job started").compactMap { Logfmt.parse($0)?["worker.pid"] })
        #expect(!workers.isEmpty)
        #expect(samples.value("chute_workers_alive", ["engine": "image"]) == Double(workers.count))
        #expect(samples.value("chute_worker_restarts_total", ["engine": "image"]) == 0)
        #expect(samples.value("chute_queue_depth", ["engine": "image"]) == 0)
        #expect(samples.value("chute_queue_depth", ["engine": "video"]) == 0)
        #expect(samples.value("chute_files_waiting") != nil)
        #expect(samples.value("chute_disk_full_postponements_total") == 0)

        // On TCP, the metrics are behind the token like the rest of the API.
        func status(_ headers: [String]) throws -> String {
            try CommandLineTool.run(
                ["curl", "-sS", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}"]
                    + headers.flatMap { ["-H", $0] } + ["http://127.0.0.1:\(port)/metrics"]
            ).standardOutput
        }
        #expect(try status([]) == "401")
        #expect(try status(["Authorization: Bearer wrong"]) == "401")
        #expect(try status(["Authorization: Bearer metrics-token"]) == "200")
    }

    private static func size(of path: FilePath) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: path.string)[.size] as? Int ?? 0
    }
}
