import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// File names that are not valid UTF-8 (Latin-1 names, as old Windows clients, Samba and unzip write them) keep their
/// bytes from the inbox to the output, the sidecar, the done folder, the quarantine and the log.
@Suite struct FileNameBytesEndToEndTests {
    /// `café.jpg` and `cafè.jpg` in Latin-1: `caf\xe9.jpg` and `caf\xe8.jpg`.
    private static let names: [[UInt8]] = [0xE9, 0xE8].map { Array("caf".utf8) + [$0] + Array(".jpg".utf8) }
    /// A corrupt file named `\xe9.jpg`.
    private static let corrupt: [UInt8] = [0xE9] + Array(".jpg".utf8)

    @Test func latin1NamesKeepTheirBytesInOutputsSidecarsTheDoneFolderAndTheQuarantine() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: to-jpg
                    match: "*.jpg"
                    to: jpg
                    width: 32
                    output: ./outbox
                    source: move
                    doneFolder: ./done
                    quarantine: ./quarantine
                """,
            settings: "  incompleteTimeout: 1s"
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        for (index, name) in Self.names.enumerated() {
            let made = staging.appending("photo-\(index).jpg")
            try Fixtures.makeImage(at: made, width: 64, height: 48)
            try Self.rename(made, to: harness.inbox.appending(Self.component(name)))
        }
        let noise = staging.appending("noise.jpg")
        try Fixtures.makeRandomFile(at: noise, bytes: 4096)
        try Self.rename(noise, to: harness.inbox.appending(Self.component(Self.corrupt)))

        let suffix = Array(Sidecar.fileSuffix.utf8)
        try await waitUntil("three sidecars in the outbox", timeout: 90) {
            let names = (try? Self.names(in: harness.outbox)) ?? []
            return names.filter { $0.reversed().starts(with: suffix.reversed()) }.count >= 3 ? true : nil
        }
        let outbox = Set(try Self.names(in: harness.outbox))
        for name in Self.names {
            // The output has the source's stem bytes, not U+FFFD, so the two never collide.
            #expect(outbox.contains(name), "no output \(Self.escaped(name)) in \(outbox.map(Self.escaped))")
            let sidecar = try Self.json(at: harness.outbox.appending(Self.component(name + suffix)))
            #expect(sidecar["status"] as? String == "completed")
            let source = try #require(sidecar["source"] as? [String: Any])
            #expect(Self.decoded(source["pathBytes"]) == Array(harness.inbox.appending(Self.component(name)).bytes))
            let output = try #require(sidecar["output"] as? [String: Any])
            #expect(Self.decoded(output["pathBytes"]) == Array(harness.outbox.appending(Self.component(name)).bytes))
        }
        let corruptSidecar = try Self.json(at: harness.outbox.appending(Self.component(Self.corrupt + suffix)))
        #expect(corruptSidecar["status"] as? String == "failed")

        let done = harness.directory.appending("done")
        try await waitUntil("both sources in the done folder") {
            Set((try? Self.names(in: done)) ?? []).isSuperset(of: Self.names) ? true : nil
        }
        let quarantine = harness.directory.appending("quarantine")
        let reasonName = Self.corrupt + Array(".reason.txt".utf8)
        try await waitUntil("the corrupt source and its reason in quarantine") {
            Set((try? Self.names(in: quarantine)) ?? []).isSuperset(of: [Self.corrupt, reasonName]) ? true : nil
        }
        #expect(try Self.names(in: harness.inbox).isEmpty)
        let reason = try SystemCall.contents(of: quarantine.appending(Self.component(reasonName)))
        #expect(String(decoding: reason, as: UTF8.self).contains("\\x{e9}.jpg"))
        let log = try #require(harness.daemon).log
        #expect(log.filter { $0.contains("\u{FFFD}") }.isEmpty, "\(log.filter { $0.contains("\u{FFFD}") })")
        #expect(!log.filter { $0.contains("caf\\x{e9}.jpg") }.isEmpty)
        // `chute jobs` (the status API) shows the names escaped the same way.
        let jobs = try ChuteProcess(["jobs", "--config", harness.configPath.string])
        _ = try await jobs.waitForExit()
        let listing = jobs.output.joined(separator: "\n")
        #expect(listing.contains("caf\\x{e9}.jpg") && listing.contains("caf\\x{e8}.jpg"), "\(listing)")
        #expect(!listing.contains("\u{FFFD}"), "\(listing)")
    }

    private static func component(_ bytes: [UInt8]) -> FilePath.Component {
        FilePath.Component(bytes: bytes)!
    }

    private static func rename(_ source: FilePath, to target: FilePath) throws {
        guard SystemCall.rename(source, target) == 0 else { throw Errno(rawValue: errno) }
    }

    /// The names in a folder as their bytes, read with `readdir` (FileManager would repair them).
    private static func names(in folder: FilePath) throws -> [[UInt8]] {
        try SystemCall.entries(of: folder).map(\.bytes)
    }

    private static func json(at path: FilePath) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: SystemCall.contents(of: path)) as? [String: Any])
    }

    private static func decoded(_ field: Any?) -> [UInt8]? {
        (field as? String).flatMap { Data(base64Encoded: $0) }.map(Array.init)
    }

    private static func escaped(_ name: [UInt8]) -> String {
        name.map { $0 < 0x80 ? String(UnicodeScalar($0)) : "\\x\(String($0, radix: 16))" }.joined()
    }
}
