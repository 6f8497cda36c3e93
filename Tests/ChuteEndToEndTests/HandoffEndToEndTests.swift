import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Two agents without shared storage: the one that watches the share in this network namespace, the other in a
/// namespace of its own (`ip netns`, a veth pair) where the share is an empty tmpfs. The second converts files of the
/// first by hand-offs over the first one's API, through a proxy that flips a byte of the first file fetched and of the
/// first output sent back.
@Suite(.enabled(if: NetworkNamespace.isAvailable, "needs root and ip(8) for a network namespace"))
struct HandoffEndToEndTests {
    private static func rules(_ shared: FilePath, agent: String, settings: String) -> String {
        """
        watch:
          - path: \(shared.appending("inbox"))
        rules:
          - name: to-jpg
            match: "*.png"
            to: jpg
            output: \(shared.appending("outbox"))
        settings:
          quietPeriod: 300ms
          gracePeriod: 10s
          concurrency:
            image: 1
            video: 1
          agent: \(agent)
          agentLease: 30s
        \(settings)
        """
    }

    @Test func twoAgentsWithoutASharedFolderConvertTheFilesOfOneAndRetryACorruptedHandOff() async throws {
        let namespace = try NetworkNamespace()
        defer { namespace.stop() }
        let server = try PostgresServer(extraListenAddresses: [namespace.hostAddress])
        defer { server.stop() }
        let shared = try TemporaryDirectory(prefix: "handoff-share")
        defer { shared.remove() }
        let inbox = try shared.makeDirectory("inbox")
        let outbox = try shared.makeDirectory("outbox")
        let keeperFolder = try TemporaryDirectory(prefix: "handoff-keeper")
        defer { keeperFolder.remove() }
        let helperFolder = try TemporaryDirectory(prefix: "handoff-helper")
        defer { helperFolder.remove() }

        // The keeper's API on loopback; other agents reach it through the proxy on the veth's address.
        let port = try LoopbackListener.freePort()
        let proxy = try CorruptingProxy(
            host: namespace.hostAddress,
            target: ("127.0.0.1", port),
            corruptRequests: true,
            corruptResponses: true,
            // Inside the smallest output (a JPEG of about 5.7 KB) as well as inside every source.
            offset: 2_000
        )
        defer { proxy.stop() }
        let token = keeperFolder.appending("token")
        try Data(UUID().uuidString.utf8).write(to: URL(fileURLWithPath: token.string))
        chmod(token.string, 0o600)
        let keeperRules = keeperFolder.appending("rules.yaml")
        try Self.rules(
            shared.path,
            agent: "keeper",
            settings: """
                  store: \(server.address)
                  storePasswordFile: \(server.passwordFile)
                  agentURL: http://\(namespace.hostAddress):\(proxy.port)
                  api:
                    listen: 127.0.0.1:\(port)
                    tokenFile: \(token)
                """
        ).write(toFile: keeperRules.string, atomically: true, encoding: .utf8)
        let helperRules = helperFolder.appending("rules.yaml")
        try Self.rules(
            shared.path,
            agent: "helper",
            settings: """
                  store: \(server.address(host: namespace.hostAddress))
                  storePasswordFile: \(server.passwordFile)
                  watch: false
                """
        ).write(toFile: helperRules.string, atomically: true, encoding: .utf8)

        let staging = try TemporaryDirectory(prefix: "handoff-staging")
        defer { staging.remove() }
        let files = (0..<40).map { String(format: "photo%02d.png", $0) }
        var hashes: [String: String] = [:]
        for (index, file) in files.enumerated() {
            let path = staging.appending(file)
            try Fixtures.makeImage(at: path, width: 600 + index % 9 * 10, height: 400)
            hashes[file] = try CommandLineTool.run(["sha256sum", path.string]).standardOutput.prefix(64).description
        }

        let keeper = try ChuteProcess(["run", "--config", keeperRules.string, "--log-level", "debug"])
        defer { keeper.terminate() }
        try await keeper.waitForLog("Watcher ready")
        let (executable, arguments) = namespace.command(
            hiding: [shared.path],
            [ChuteProcess.executable.string, "run", "--config", helperRules.string, "--log-level", "debug"]
        )
        let helper = try ChuteProcess(arguments, executable: executable)
        defer { helper.terminate() }
        try await helper.waitForLog("Chute started")
        #expect(!helper.logLines(containing: "Watching no folder").isEmpty)

        for file in files {
            try FileManager.default.moveItem(
                atPath: staging.appending(file).string,
                toPath: inbox.appending(file).string
            )
        }
        try await waitUntil("40 completed jobs", timeout: 300) {
            try server.psql("SELECT COUNT(*) FROM job WHERE state = 'completed'") == "40" ? true : nil
        }
        let sidecarCount = {
            shared.files(below: "outbox").filter { $0.hasSuffix(Sidecar.fileSuffix) }.count
        }
        try await waitUntil("40 sidecars", timeout: 60) { sidecarCount() >= 40 ? true : nil }

        let outputs = shared.files(below: "outbox").filter { $0.hasSuffix(".jpg") }
        let started = [keeper, helper].map { $0.logLines(containing: "Job started", ".png").count }
        let byAgent = try server.psql(
            "SELECT string_agg(agent || '=' || n, ' ' ORDER BY agent) FROM "
                + "(SELECT agent, COUNT(*) AS n FROM job WHERE state = 'completed' GROUP BY agent) AS done"
        )
        let fetchedAgain = helper.logLines(containing: "does not match the store's SHA-256; fetching it again")
        let sentAgain = helper.logLines(containing: "Output refused by the agent that has the source")
        let refused = keeper.logLines(containing: "Output sent back does not match its SHA-256; refused")
        print(
            "two agents, no shared folder, 40 files: \(outputs.count) outputs, \(Set(outputs).count) distinct; jobs "
                + "started: keeper \(started[0]), helper \(started[1]); completed in the store: \(byAgent); "
                + "proxy: \(proxy.connections) connections, flipped \(proxy.flipped.responses) response and "
                + "\(proxy.flipped.requests) request bytes; fetched again \(fetchedAgain.count), sent again "
                + "\(sentAgain.count), refused by the keeper \(refused.count)"
        )
        for line in fetchedAgain + sentAgain + refused { print(line) }
        #expect(outputs.count == 40 && Set(outputs).count == 40)
        #expect(try server.psql("SELECT COUNT(*) FROM job") == "40")
        #expect(started.allSatisfy { $0 > 0 }, "both agents converted some: \(started)")
        #expect(started.reduce(0, +) == 40)
        #expect(proxy.flipped.responses == 1 && proxy.flipped.requests == 1)
        #expect(fetchedAgain.count == 1 && sentAgain.count == 1 && refused.count == 1)
        #expect(shared.files(below: "outbox").filter { $0.contains(".chute-") }.isEmpty, "no temporary is left")
        #expect(helperFolder.files(below: ".chute/handoff").isEmpty, "no fetched copy is left")

        // Every output is a whole JPEG of its source's size; the helper's sidecars name it, with the source's hash.
        var helperSidecars = 0
        for (index, file) in files.enumerated() {
            let stem = String(file.dropLast(4))
            let output = outbox.appending("\(stem).jpg")
            let identified = try CommandLineTool.run([Fixtures.identify, "-format", "%m %wx%h", output.string])
            #expect(identified.standardOutput == "JPEG \(600 + index % 9 * 10)x400", "\(file)")
            let sidecar = try JSONDecoder().decode(
                Sidecar.self,
                from: Data(contentsOf: URL(fileURLWithPath: outbox.appending("\(stem).jpg.chute.json").string))
            )
            #expect(sidecar.status == .completed && sidecar.source.sha256 == hashes[file], "\(file)")
            #expect(sidecar.source.path == inbox.appending(file).string)
            if sidecar.agent == "helper" { helperSidecars += 1 }
        }
        #expect(helperSidecars == started[1], "the helper's sidecars name it")
    }
}
