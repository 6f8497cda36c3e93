import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real daemon facing one class of hostile input, with the traps that prove what it did not do.
///
/// - A loopback TCP listener that the payloads point at: it must never see a connection.
/// - Marker files in a folder outside the watched tree (``outside``), watched with inotify for `IN_OPEN` and
///   `IN_ACCESS`: the daemon and its workers must never open or read them, by any path.
/// - One rule per engine, so that any hostile name reaches an engine: images become JPEG, video MP4, audio M4A.
///
/// Hostile files are written in a staging folder beside the inbox (outside the watched tree) under a plain name and
/// renamed into the inbox under their hostile name, so that the daemon sees each whole, at once, and the tools that
/// make them never see a hostile name. ``finish(_:)`` drops one normal image last, which must still convert, and
/// checks the listener, the markers, the log and a clean shutdown.
final class HostileScenario {
    /// Names of the markers in ``outside``.
    enum Marker: String, CaseIterable {
        case video = "marker.mp4"
        case image = "marker.png"
        case secret = "secret.txt"
        case linkTarget = "linked.jpg"
        case albumPhoto = "album/photo.jpg"
    }

    let harness: DaemonHarness
    /// The folder outside the watched tree with the markers.
    let outside: TemporaryDirectory
    let listener: LoopbackListener
    /// Where hostile files are made before they are renamed into the inbox.
    let staging: FilePath
    /// Watches every marker (and their folders) once ``start()`` is called.
    private(set) var markerWatch: AccessWatch?
    private let started = ContinuousClock.now
    private var fixtures = 0

    /// Makes the tree, the markers and the listener; the daemon starts with ``start()``, so that a test can place
    /// files it must find at start-up first.
    init() throws {
        self.harness = try DaemonHarness(
            rules: """
                  - name: images
                    match: ["*.jpg", "*.png", "*.gif", "*.bmp"]
                    to: jpg
                    output: ./outbox
                  - name: videos
                    match: ["*.mp4", "*.mkv", "*.avi"]
                    to: mp4
                    output: ./outbox
                  - name: audio
                    match: ["*.mp3", "*.m4a", "*.ogg"]
                    to: m4a
                    output: ./outbox
                """,
            settings: "  incompleteTimeout: 1s\n  jobTimeout: 60s"
        )
        self.outside = try TemporaryDirectory(prefix: "outside")
        self.listener = try LoopbackListener()
        self.staging = try self.harness.directory.makeDirectory("staging")
        try self.outside.makeDirectory("album")
        try MediaFixtures.makeClip(
            at: self.marker(.video),
            width: 64,
            height: 48,
            seconds: 1,
            codecArguments: MediaFixtures.h264AAC
        )
        try Fixtures.makeImage(at: self.marker(.image), width: 32, height: 32)
        try Fixtures.makeImage(at: self.marker(.linkTarget), width: 32, height: 32)
        try Fixtures.makeImage(at: self.marker(.albumPhoto), width: 32, height: 32)
        try "secret outside the watched tree\n".write(
            toFile: self.marker(.secret).string,
            atomically: false,
            encoding: .utf8
        )
    }

    /// Checks that the listener counts, starts watching the markers (which checks that the watch sees), then starts
    /// the daemon.
    func start() async throws {
        try await self.listener.checkThatItCounts()
        let markers = Marker.allCases.map { self.marker($0) }
        self.markerWatch = try AccessWatch(
            watching: markers + [self.outside.path, self.outside.appending("album")]
        )
        try await self.harness.start()
    }

    /// Stops the listener and the daemon and removes both trees.
    func stop() {
        self.listener.stop()
        self.harness.stop()
        self.outside.remove()
    }

    var daemon: ChuteProcess { self.harness.daemon! }

    /// `http://127.0.0.1:PORT`, the listener's URL.
    var url: String { "http://127.0.0.1:\(self.listener.port)" }

    /// A marker's absolute path.
    func marker(_ marker: Marker) -> FilePath {
        self.outside.appending(marker.rawValue)
    }

    // MARK: Dropping files

    /// Writes `content` under a plain name in staging and renames it to `name` in the inbox.
    ///
    /// - Parameter name: the name's bytes, relative to the inbox (it may contain `/` for a sub-folder, which must
    ///   exist).
    func drop(_ name: [UInt8], _ content: Data) throws {
        let plain = self.nextStagingPath()
        try content.write(to: URL(fileURLWithPath: plain.string))
        try self.rename(plain, to: self.inboxPath(name))
    }

    func drop(_ name: String, _ content: Data) throws {
        try self.drop(Array(name.utf8), content)
    }

    func drop(_ name: String, _ content: String) throws {
        try self.drop(Array(name.utf8), Data(content.utf8))
    }

    /// Drops a small real PNG (whatever the name's extension says) under `name`.
    func dropImage(_ name: [UInt8]) throws {
        try self.drop(name, try self.makePNG())
    }

    func dropImage(_ name: String) throws {
        try self.dropImage(Array(name.utf8))
    }

    /// A fresh 16×16 PNG's bytes.
    func makePNG(width: Int = 16, height: Int = 16) throws -> Data {
        let path = self.nextStagingPath(extension: "png")
        try Fixtures.makeImage(at: path, width: width, height: height)
        defer { try? FileManager.default.removeItem(atPath: path.string) }
        return try Data(contentsOf: URL(fileURLWithPath: path.string))
    }

    /// Makes something in staging with `make` (given a plain path) and renames it to `name` in the inbox.
    func dropMade(_ name: String, _ make: (FilePath) throws -> Void) throws {
        let plain = self.nextStagingPath()
        try make(plain)
        try self.rename(plain, to: self.inboxPath(Array(name.utf8)))
    }

    /// The inbox path for a name given as bytes.
    func inboxPath(_ name: [UInt8]) -> FilePath {
        let relative = (name.map { CChar(bitPattern: $0) } + [0]).withUnsafeBufferPointer {
            FilePath(platformString: $0.baseAddress!)
        }
        return self.harness.inbox.pushing(relative)
    }

    /// A new plain path in staging.
    func nextStagingPath(extension: String = "bin") -> FilePath {
        self.fixtures += 1
        return self.staging.appending("fixture-\(self.fixtures).\(`extension`)")
    }

    /// `rename(2)` on byte paths (FileManager takes `String`s, which cannot hold every name).
    func rename(_ source: FilePath, to destination: FilePath) throws {
        let result = source.withPlatformString { from in destination.withPlatformString { to in Glibc.rename(from, to) }
        }
        guard result == 0 else { throw Errno(rawValue: errno) }
    }

    // MARK: Outcomes

    /// The sidecar of an output name (relative to the outbox), if written.
    func sidecar(_ output: String) -> Sidecar? {
        self.sidecar(at: self.harness.outbox.appending(output))
    }

    /// The sidecar of an output path, read with the path's bytes (a name need not be valid UTF-8).
    func sidecar(at output: FilePath) -> Sidecar? {
        guard let data = try? SystemCall.contents(of: output.appendingToLastComponent(Sidecar.fileSuffix)) else {
            return nil
        }
        return try? JSONDecoder().decode(Sidecar.self, from: data)
    }

    /// Every sidecar file in the outbox (relative paths, twins with equal Unicode but different bytes kept apart,
    /// names that are not valid UTF-8 escaped as the log shows them).
    func sidecarFiles() -> [String] {
        SystemCall.files(below: self.harness.outbox).map(\.readableString).filter { $0.hasSuffix(Sidecar.fileSuffix) }
            .sorted()
    }

    /// Waits until at least `count` sidecars exist.
    func waitForSidecars(_ count: Int, timeout: Double = 90) async throws {
        try await waitUntil("\(count) sidecars; have \(self.sidecarFiles())", timeout: timeout) {
            self.sidecarFiles().count >= count ? true : nil
        }
    }

    /// Expects the job for `output` to have failed with `code`, and its message to contain `message` if given.
    ///
    /// - Returns: the failure's message.
    @discardableResult
    func expectFailed(
        _ output: String,
        _ codes: Set<String>,
        message: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> String {
        guard let sidecar = self.sidecar(output) else {
            Issue.record("no sidecar for \(output); have \(self.sidecarFiles())", sourceLocation: sourceLocation)
            return ""
        }
        #expect(sidecar.status == .failed, "\(output)", sourceLocation: sourceLocation)
        #expect(sidecar.output == nil, "\(output)", sourceLocation: sourceLocation)
        let error = sidecar.error
        #expect(
            codes.contains(error?.code ?? "none"),
            "\(output): \(String(describing: error))",
            sourceLocation: sourceLocation
        )
        #expect(error?.message.isEmpty == false, "\(output)", sourceLocation: sourceLocation)
        if let message {
            #expect(
                error?.message.contains(message) == true,
                "\(output): \(String(describing: error))",
                sourceLocation: sourceLocation
            )
        }
        #expect(
            !FileManager.default.fileExists(atPath: self.harness.outbox.appending(output).string),
            "\(output) has an output",
            sourceLocation: sourceLocation
        )
        return error?.message ?? ""
    }

    /// Expects the job for `output` to have completed, with the output in place.
    @discardableResult
    func expectCompleted(_ output: String, sourceLocation: SourceLocation = #_sourceLocation) -> Sidecar? {
        self.expectCompleted(at: self.harness.outbox.appending(output), sourceLocation: sourceLocation)
    }

    /// Expects the job for the output at `output` (a path with its bytes) to have completed, with the output in place.
    @discardableResult
    func expectCompleted(at output: FilePath, sourceLocation: SourceLocation = #_sourceLocation) -> Sidecar? {
        let sidecar = self.sidecar(at: output)
        #expect(
            sidecar?.status == .completed,
            "\(LogText.escaped(output)): \(String(describing: sidecar?.error))",
            sourceLocation: sourceLocation
        )
        #expect(
            SystemCall.access(output, F_OK) == 0,
            "no output \(LogText.escaped(output))",
            sourceLocation: sourceLocation
        )
        return sidecar
    }

    /// The log lines that say a path was skipped as not a regular file, or (`link`) as a symbolic link.
    func skippedLines(_ name: [UInt8], link: Bool = false) -> [String] {
        let escaped = LogText.escaped(self.inboxPath(name))
        let message = link ? "Skipped: a symbolic link, which is not followed" : "Skipped: not a regular file"
        return self.records(message: message, inputPath: escaped)
    }

    /// The log lines whose record has this message and `input.path`, compared byte for byte (`==` on strings would
    /// take a name and its canonically equivalent twin, NFC and NFD, for the same).
    func records(message: String, inputPath: String) -> [String] {
        self.daemon.log.filter { line in
            let fields = Logfmt.parse(line)
            return fields?["msg"] == message && fields?["input.path"].map { Array($0.utf8) } == Array(inputPath.utf8)
        }
    }

    // MARK: The end

    /// Drops one normal image last and checks that it converts; then that the daemon still runs, the listener saw no
    /// connection, no marker was opened or read, every log line is one well-formed record with no raw control
    /// character, and that SIGTERM ends the daemon cleanly. Prints one summary line for the class, with the outcomes
    /// counted from the sidecars and the log.
    ///
    /// - Parameters:
    ///   - hostileClass: the class of input, for the summary line.
    ///   - note: what else the test established, for the summary line.
    func finish(
        _ hostileClass: String,
        note: String = "",
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let outcomes = self.outcomes()
        try self.dropImage("zz-last-normal.png")
        let last = try await waitUntil("the last normal file's sidecar", timeout: 60) {
            self.sidecar("zz-last-normal.jpg")
        }
        #expect(last.status == .completed, "\(String(describing: last.error))", sourceLocation: sourceLocation)
        #expect(kill(self.daemon.pid, 0) == 0, "the daemon is gone", sourceLocation: sourceLocation)

        self.daemon.send(SIGTERM)
        let exit = try await self.daemon.waitForExit(timeout: 30)
        #expect(exit.status == 0 && !exit.signalled, "daemon exit \(exit)", sourceLocation: sourceLocation)

        let connections = self.listener.connections
        #expect(
            connections == 0,
            "connections to the listener: \(self.listener.requests)",
            sourceLocation: sourceLocation
        )
        let events = self.markerWatch?.events() ?? []
        #expect(events.isEmpty, "markers outside the root were touched: \(events)", sourceLocation: sourceLocation)
        Self.expectWellFormed(self.daemon.log, sourceLocation: sourceLocation)

        let skipped = self.daemon.logLines(containing: "Skipped: not a regular file").count
            + self.daemon.logLines(containing: "Skipped: a symbolic link").count
        let seconds = (ContinuousClock.now - self.started) / .seconds(1)
        print(
            "hostile[\(hostileClass)]: \(outcomes), \(skipped) skip records\(note.isEmpty ? "" : "; " + note); "
                + "last normal file converted; listener connections \(connections); marker accesses \(events.count); "
                + "clean exit \(exit.status); \(String(format: "%.1f", seconds)) s"
        )
    }

    /// The sidecars so far, counted: "3 converted, 5 refused (unsupportedInput 4, corruptInput 1)".
    private func outcomes() -> String {
        var converted = 0
        var refused: [String: Int] = [:]
        for file in self.sidecarFiles() {
            let path = self.harness.outbox.appending(file)
            guard let data = FileManager.default.contents(atPath: path.string),
                let sidecar = try? JSONDecoder().decode(Sidecar.self, from: data)
            else { continue }
            if sidecar.status == .completed {
                converted += 1
            } else {
                refused[sidecar.error?.code ?? "none", default: 0] += 1
            }
        }
        let codes = refused.sorted { $0.value > $1.value || $0.value == $1.value && $0.key < $1.key }
            .map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let total = refused.values.reduce(0, +)
        return "\(converted) converted, \(total) refused" + (codes.isEmpty ? "" : " (\(codes))")
    }

    /// Every line is a logfmt record (time, level, message), and none holds a raw ESC, CR or other control
    /// character: a name or decoder message with a newline would start a line that is not a record.
    static func expectWellFormed(_ log: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let levels: Set = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
        let time = try! Regex(#"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4}$"#)
        let malformed = log.filter { line in
            guard let fields = Logfmt.parse(line), let stamp = fields["time"], let level = fields["level"] else {
                return true
            }
            return (try? time.wholeMatch(in: stamp)) == nil || !levels.contains(level) || fields["msg"] == nil
        }
        #expect(
            malformed.isEmpty,
            "log lines that are not records: \(malformed.prefix(5))",
            sourceLocation: sourceLocation
        )
        let raw = log.filter { line in
            line.unicodeScalars.contains { scalar in
                scalar.properties.generalCategory == .control || (0x202A...0x202E).contains(scalar.value)
                    || (0x2066...0x2069).contains(scalar.value)
            }
        }
        #expect(raw.isEmpty, "log lines with raw control characters: \(raw.prefix(5))", sourceLocation: sourceLocation)
    }
}
