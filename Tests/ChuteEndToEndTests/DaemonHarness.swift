import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage

/// A temporary tree with an inbox and an outbox, a rules file, and the real `chute run` on it.
final class DaemonHarness {
    let directory: TemporaryDirectory
    let inbox: FilePath
    let outbox: FilePath
    let configPath: FilePath
    private(set) var daemon: ChuteProcess?
    private var sentinels = 0

    /// Writes a config whose rules are `rules` (YAML list items, indented by two spaces) watching `inbox`, with
    /// `watchOptions` (keys of the watch entry, indented by four spaces), `settings` (indented by two) and
    /// `topLevel` (more top-level keys, such as `notify:`).
    init(
        rules: String,
        settings: String = "",
        gracePeriod: String = "10s",
        quietPeriod: String = "300ms",
        watchOptions: String = "",
        topLevel: String = ""
    ) throws {
        self.directory = try TemporaryDirectory(prefix: "e2e")
        self.inbox = try self.directory.makeDirectory("inbox")
        self.outbox = self.directory.appending("outbox")
        self.configPath = self.directory.appending("rules.yaml")
        let yaml = """
            watch:
              - path: ./inbox
            \(watchOptions)
            rules:
            \(rules)
            settings:
              quietPeriod: \(quietPeriod)
              gracePeriod: \(gracePeriod)
            \(settings)
            \(topLevel)
            """
        try yaml.write(toFile: self.configPath.string, atomically: true, encoding: .utf8)
    }

    /// The usual single rule: HEIC, PNG and JPEG files become JPEGs at quality 0.85 in the outbox.
    convenience init(settings: String = "", gracePeriod: String = "10s", watchOptions: String = "") throws {
        try self.init(
            rules: """
                  - name: to-jpg
                    match: ["*.heic", "*.png", "*.jpg"]
                    to: jpg
                    quality: 0.85
                    output: ./outbox
                """,
            settings: settings,
            gracePeriod: gracePeriod,
            watchOptions: watchOptions
        )
    }

    /// A daemon whose first rule takes the PNG sentinels that ``waitForSidecars`` drops (into the outbox as JPEGs),
    /// followed by `rules`, with `settings` (indented by two).
    convenience init(afterSentinels rules: String, settings: String = "") throws {
        try self.init(
            rules: """
                  - name: sentinels
                    match: "zz-sentinel-*.png"
                    to: jpg
                    output: ./outbox
                \(rules)
                """,
            settings: settings
        )
    }

    /// Starts `chute run` (with `environment` added to the test's, and `arguments` after its own) and waits until its
    /// watcher is ready.
    func start(environment: [String: String] = [:], arguments: [String] = []) async throws {
        let daemon = try ChuteProcess(
            ["run", "--config", self.configPath.string, "--log-level", "debug"] + arguments,
            environment: environment
        )
        self.daemon = daemon
        try await daemon.waitForLog("Watcher ready")
    }

    /// Sidecars below the outbox, decoded, keyed by their path relative to the outbox.
    func sidecars() -> [String: Sidecar] {
        var result: [String: Sidecar] = [:]
        for file in self.directory.files(below: "outbox") where file.hasSuffix(Sidecar.fileSuffix) {
            let path = self.outbox.appending(file)
            if let data = FileManager.default.contents(atPath: path.string),
                let sidecar = try? JSONDecoder().decode(Sidecar.self, from: data)
            {
                result[file] = sidecar
            }
        }
        return result
    }

    /// Waits until `count` sidecars exist (not counting earlier sentinels'), then proves no more are coming: it drops
    /// a sentinel file and waits for the sentinel's own sidecar. Events are handled in order, so a duplicate job for
    /// an earlier file would have been queued before the sentinel's. Sentinels' sidecars are left out of the result.
    @discardableResult
    func waitForSidecars(_ count: Int, timeout: Double = 90) async throws -> [String: Sidecar] {
        try await waitUntil("\(count) sidecars in \(self.outbox)", timeout: timeout) {
            self.sidecars().keys.filter { !$0.contains("zz-sentinel-") }.count >= count ? true : nil
        }
        self.sentinels += 1
        let sentinel = "zz-sentinel-\(self.sentinels)"
        try Fixtures.makeImage(at: self.directory.appending("\(sentinel).png"), width: 16, height: 16)
        try FileManager.default.moveItem(
            atPath: self.directory.appending("\(sentinel).png").string,
            toPath: self.inbox.appending("\(sentinel).png").string
        )
        try await waitUntil("the sentinel's sidecar", timeout: timeout) {
            self.sidecars().keys.contains { $0.contains(sentinel) } ? true : nil
        }
        return self.sidecars().filter { !$0.key.contains("zz-sentinel-") }
    }

    /// Moves files made in `staging` into the inbox, each in one rename, as a finished upload arrives.
    func moveIn(_ names: [String], from staging: FilePath) throws {
        for name in names {
            try FileManager.default.moveItem(
                atPath: staging.appending(name).string,
                toPath: self.inbox.appending(name).string
            )
        }
    }

    /// `GET /metrics` on the daemon's socket (the default one, beside the journal), parsed by Prometheus's own
    /// text-format parser.
    func metrics() throws -> [MetricSample] {
        let socket = self.directory.appending(".chute/api.sock")
        let text = try CommandLineTool.run([
            "curl", "-sS", "--fail", "--max-time", "10", "--unix-socket", socket.string, "http://chute/metrics",
        ]).standardOutput
        let file = self.directory.appending("metrics.txt")
        try text.write(toFile: file.string, atomically: true, encoding: .utf8)
        // Debian's python3, whose dist-packages hold the parser (python3-prometheus-client), whatever python3 comes
        // first in PATH.
        let parsed = try CommandLineTool.run(["/usr/bin/python3", "-c", MetricSample.parser, file.string])
        return try JSONDecoder().decode([MetricSample].self, from: Data(parsed.standardOutput.utf8))
    }

    /// Every `.chute-*` temporary file anywhere in the tree.
    func temporaryFiles() -> [String] {
        self.directory.files().filter { ($0.split(separator: "/").last ?? "").hasPrefix(".chute-") }
    }

    func stop() {
        self.daemon?.terminate()
        self.directory.remove()
    }
}

/// One sample of the daemon's `/metrics`, as Prometheus's parser gives it.
struct MetricSample: Decodable {
    var name: String
    var labels: [String: String]
    var value: Double

    /// Prints the samples of the exposition in the file named by its argument as JSON.
    static let parser = """
        import json, sys
        from prometheus_client.parser import text_string_to_metric_families
        with open(sys.argv[1]) as exposition:
            families = text_string_to_metric_families(exposition.read())
            print(json.dumps([
                {"name": s.name, "labels": s.labels, "value": s.value} for f in families for s in f.samples
            ]))
        """
}

extension [MetricSample] {
    /// The value of the sample `name` whose labels include `labels`; `nil` when there is none.
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
        self.first { sample in
            sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value }
        }?.value
    }
}
