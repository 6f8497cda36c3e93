import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Hostile file-system entries against the real daemon: FIFOs, sockets and devices with media names, symbolic links
/// and hard links leading out of the watched tree, hostile names and very deep trees.
///
/// Each test is one ``HostileScenario`` (see `HostileInputEndToEndTests` for what every scenario checks at the end).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct HostileFileSystemEndToEndTests {
    /// A FIFO, a socket and a character device (1:3, like `/dev/null`) named as media are never opened: moved in,
    /// each is logged as "Skipped: not a regular file" after an `lstat`; a FIFO written in place (opened for writing
    /// and closed, which inotify reports like a written file) likewise; one already there at start-up is left out of
    /// the first scan without a word. None of them blocks the daemon.
    @Test func fifosSocketsAndDevicesAreSkippedWithoutBlocking() async throws {
        let scenario = try HostileScenario()
        defer { scenario.stop() }
        let early = scenario.harness.inbox.appending("early.jpg")
        try Self.check(mkfifo(early.string, 0o644))
        try await scenario.start()

        var moved: [String] = []
        try scenario.dropMade("photo.jpg") { try Self.check(mkfifo($0.string, 0o644)) }
        moved.append("photo.jpg")
        try scenario.dropMade("song.mp3") { try Self.check(mkfifo($0.string, 0o600)) }
        moved.append("song.mp3")
        try scenario.dropMade("movie.mp4") { try Self.makeSocket(at: $0) }
        moved.append("movie.mp4")
        // A device node needs CAP_MKNOD; where that is missing, the case is left out (and said so).
        let node = scenario.nextStagingPath()
        let hasDevice = mknod(node.string, S_IFCHR | 0o644, 0x103) == 0
        if hasDevice {
            try scenario.rename(node, to: scenario.harness.inbox.appending("clip.mkv"))
            moved.append("clip.mkv")
        }
        let inPlace = scenario.harness.inbox.appending("inplace.png")
        try Self.check(mkfifo(inPlace.string, 0o644))
        // O_RDWR opens a FIFO at once on Linux; closing it is an IN_CLOSE_WRITE, like a finished upload.
        let writer = open(inPlace.string, O_RDWR)
        try Self.check(writer)
        close(writer)
        // Any open of these by the daemon would show here (the first path is a regular file for the watch's check).
        let canary = scenario.nextStagingPath()
        try Data("canary".utf8).write(to: URL(fileURLWithPath: canary.string))
        let specials = ([early, inPlace] + moved.map { scenario.harness.inbox.appending($0) })
        let specialWatch = try AccessWatch(watching: [canary] + specials)

        let skipped = moved + ["inplace.png"]
        try await waitUntil("skip records for \(skipped); log: \(scenario.daemon.log.suffix(10))") {
            skipped.allSatisfy { !scenario.skippedLines(Array($0.utf8)).isEmpty } ? true : nil
        }
        #expect(scenario.sidecarFiles().isEmpty)
        #expect(scenario.daemon.logLines(containing: "early.jpg").isEmpty)
        #expect(scenario.daemon.logLines(containing: "Job queued").isEmpty)
        let device = hasDevice ? "a character device" : "no device (mknod needs CAP_MKNOD)"
        try await scenario.finish(
            "FIFOs, sockets, devices",
            note: "\(specials.count) entries with \(device); 1 left out of the start-up scan; none opened"
        )
        #expect(specialWatch.events().isEmpty, "\(specialWatch.events())")
    }

    /// Symbolic links to a file and to a folder outside the tree, absolute and relative, moved in, made in place,
    /// present at start-up or inside a folder moved in: none is followed, and each is logged as skipped, once (the
    /// watcher reports a link made in place or found by a scan, for that record only). The regular file beside
    /// them converts.
    @Test func symbolicLinksOutOfTheRootAreNeverFollowed() async throws {
        let scenario = try HostileScenario()
        defer { scenario.stop() }
        let inbox = scenario.harness.inbox
        let target = scenario.marker(.linkTarget)
        let album = scenario.outside.appending("album")
        try Self.check(symlink(target.string, inbox.appending("at-start.jpg").string))
        try Self.check(symlink(album.string, inbox.appending("album-at-start").string))
        try await scenario.start()

        var moved: [String] = []
        for (name, destination) in [
            ("evil.jpg", target.string),
            (
                "relative.png",
                "../../\(scenario.outside.path.lastComponent!)/\(HostileScenario.Marker.linkTarget.rawValue)"
            ),
            ("album", album.string),
            ("album.mp4", album.string),
            ("proc.jpg", "/proc/self/root\(target)"),
            ("dangling.png", "/nonexistent/\(UUID())"),
        ] {
            try scenario.dropMade(name) { try Self.check(symlink(destination, $0.string)) }
            moved.append(name)
        }
        try Self.check(symlink(target.string, inbox.appending("inplace.jpg").string))
        let holiday = try scenario.harness.directory.makeDirectory("staging/holiday")
        try Self.check(symlink(target.string, holiday.appending("link.jpg").string))
        try Self.check(symlink(album.string, holiday.appending("album").string))
        try Fixtures.makeImage(at: holiday.appending("real.png"), width: 16, height: 16)
        try scenario.rename(holiday, to: inbox.appending("holiday"))

        try await waitUntil("skip records for \(moved)") {
            moved.allSatisfy { !scenario.skippedLines(Array($0.utf8), link: true).isEmpty } ? true : nil
        }
        try await scenario.waitForSidecars(1)
        scenario.expectCompleted("holiday/real.jpg")
        #expect(scenario.sidecarFiles() == ["holiday/real.jpg.chute.json"])
        let others = ["at-start.jpg", "album-at-start", "inplace.jpg", "holiday/link.jpg", "holiday/album"]
        try await waitUntil("skip records for \(others)") {
            others.allSatisfy { !scenario.skippedLines(Array($0.utf8), link: true).isEmpty } ? true : nil
        }
        for name in moved + others {
            #expect(scenario.skippedLines(Array(name.utf8), link: true).count == 1, "\(name)")
        }
        try await scenario.finish("symbolic links", note: "\(moved.count + 5) links, each logged as skipped once")
    }

    /// A sub-folder is swapped for a symbolic link to a folder outside the tree after a file in it was reported, and
    /// before its quiet period ended: the daemon must not follow the link to the outside file of the same name.
    ///
    /// Every step after the event (the intake's `lstat`, sniff and readiness checks, the hash, the worker's `open`)
    /// looks the path up beneath the watched folder with `openat2` and `RESOLVE_NO_SYMLINKS`, so the swapped folder
    /// leads nowhere; without that, `O_NOFOLLOW` guards only the last component and the outside file was converted.
    ///
    /// Its own marker and watch (not the scenario's), so that the scenario's checks still hold either way.
    @Test func folderSwappedForASymbolicLinkIsNotFollowed() async throws {
        let scenario = try HostileScenario()
        defer { scenario.stop() }
        let elsewhere = try TemporaryDirectory(prefix: "elsewhere")
        defer { elsewhere.remove() }
        try Fixtures.makeImage(at: elsewhere.appending("photo.png"), width: 24, height: 24)
        // Watched from the start, so that the file's event is queued for `upload` before the swap below.
        let upload = try scenario.harness.directory.makeDirectory("inbox/upload")
        try await scenario.start()
        let watch = try AccessWatch(watching: [elsewhere.appending("photo.png"), elsewhere.path])
        let inbox = scenario.harness.inbox
        try scenario.drop("upload/photo.png", try scenario.makePNG())
        // Well within the 300 ms quiet period that has not even begun: swap the folder for a link to the outside one.
        try scenario.rename(upload, to: inbox.appending("upload-old"))
        try Self.check(symlink(elsewhere.path.string, inbox.appending("upload").string))

        // The real file is found again under its folder's new name.
        _ = try await waitUntil("upload-old/photo.jpg", timeout: 60) { scenario.sidecar("upload-old/photo.jpg") }
        try await scenario.finish("folder swapped for a symlink", note: "upload-old/photo.png converted")
        print(
            "hostile: swapped folder: outside file converted: "
                + "\(scenario.sidecar("upload/photo.jpg")?.status == .completed), opened \(watch.events().count) times"
        )
        let converted = scenario.sidecar("upload/photo.jpg")
        #expect(converted?.status != .completed, "the outside file was converted: \(String(describing: converted))")
        #expect(watch.events().isEmpty, "the outside file was opened: \(watch.events())")
    }

    /// A hard link in the inbox to a file outside the tree (made by someone who can write both places, on the same
    /// file system) is a second name for the outside file: reading it reads the outside inode.
    ///
    /// Decision, as `security.md` §6 says: a regular file with more than one link is refused from its `lstat`,
    /// before it is opened, with a clear log line, and the inode is never read; the worker's `fstat` refuses one too
    /// (a link made later). A watch's `allowHardLinks` takes them, for tools that hard-link downloads on purpose.
    ///
    /// Its own marker and watch (not the scenario's), since the link's inode *is* the marker's.
    @Test func hardLinkToAFileOutsideTheRootIsRefusedUnread() async throws {
        let scenario = try HostileScenario()
        defer { scenario.stop() }
        let victims = try TemporaryDirectory(prefix: "victims")
        defer { victims.remove() }
        let victim = victims.appending("victim.png")
        try Fixtures.makeImage(at: victim, width: 24, height: 24)
        try await scenario.start()
        let watch = try AccessWatch(watching: [victim])
        let staged = scenario.nextStagingPath()
        try Self.check(link(victim.string, staged.string))
        try scenario.rename(staged, to: scenario.harness.inbox.appending("copy.png"))

        try await waitUntil("the hard link to be converted, refused or skipped") {
            scenario.sidecar("copy.jpg") != nil || !scenario.daemon.logLines(containing: "copy.png", "Skipped").isEmpty
                ? true : nil
        }
        try await scenario.finish("hard link")
        print(
            "hostile: hard link: converted: \(scenario.sidecar("copy.jpg")?.status == .completed), "
                + "outside inode opened or read \(watch.events().count) times"
        )
        let converted = scenario.sidecar("copy.jpg")
        #expect(converted == nil, "the hard link was converted: \(String(describing: converted))")
        #expect(!scenario.daemon.logLines(containing: "copy.png", "Skipped: a hard link").isEmpty)
        #expect(watch.events().isEmpty, "the outside inode was read: \(watch.events())")
    }

    /// Valid images under hostile names convert, each to an output whose name has its control characters
    /// replaced and no leading dash, capped at 200 bytes; each is one log record with the name escaped, and a name
    /// that carries a whole fake log record after a newline cannot start a line. `%` patterns, coder prefixes
    /// (`ephemeral:`, `msl:`), a leading `|` and shell syntax are inert, since no library sees a name.
    @Test func hostileNamesConvertUnderSafeNamesWithEscapedLogs() async throws {
        let scenario = try HostileScenario()
        defer { scenario.stop() }
        try await scenario.start()
        let forged = "2026-01-01T00:00:00+0000 critical chute: [ChuteRuntime] FORGED"
        let long = String(repeating: "a", count: 251)
        // (name's bytes, expected output name's bytes)
        var cases: [([UInt8], [UInt8])] = [
            ("line\nbreak.png", "line_break.jpg"),
            ("x\n\(forged).png", "x_\(forged).jpg"),
            ("\u{1b}[31mred\u{1b}[0m.png", "_[31mred_[0m.jpg"),
            ("carriage\rreturn.png", "carriage_return.jpg"),
            ("tab\there.jpg", "tab_here.jpg"),
            ("bell\u{7}del\u{7f}.png", "bell_del_.jpg"),
            ("-rf.jpg", "_rf.jpg"),
            ("--help.png", "_-help.jpg"),
            ("%d.png", "%d.jpg"),
            ("seq%03d.png", "seq%03d.jpg"),
            ("%s%s%n%x.jpg", "%s%s%n%x.jpg"),
            ("ephemeral:photo.jpg", "ephemeral:photo.jpg"),
            ("msl:thumb.png", "msl:thumb.jpg"),
            ("|touch pwned.jpg", "|touch pwned.jpg"),
            ("$(reboot) `id`;.png", "$(reboot) `id`;.jpg"),
            ("photo[0].png", "photo[0].jpg"),
            ("..png", "..jpg"),
            ("\(long).png", String(repeating: "a", count: 196) + ".jpg"),
            // A right-to-left override would make a listing show this output's name as "invoicegpj.png".
            ("invoice\u{202E}gnp.jpg", "invoice_gnp.jpg"),
            // Canonically equivalent twins (NFC and NFD): two files, two outputs, neither overwrites the other.
            ("caf\u{E9}.png", "caf\u{E9}.jpg"),
            ("cafe\u{301}.png", "cafe\u{301}.jpg"),
        ].map { (Array($0.0.utf8), Array($0.1.utf8)) }
        // Bytes that are not UTF-8 are kept as they are, not replaced with U+FFFD.
        cases.append(
            (
                Array("bad".utf8) + [0xFF, 0xFE] + Array("utf8.png".utf8),
                Array("bad".utf8) + [0xFF, 0xFE] + Array("utf8.jpg".utf8)
            )
        )
        cases.append(
            (
                Array("overlong".utf8) + [0xC0, 0xAF] + Array(".png".utf8),
                Array("overlong".utf8) + [0xC0, 0xAF] + Array(".jpg".utf8)
            )
        )
        #expect(cases.first { $0.1.starts(with: Array("aaaa".utf8)) }?.0.count == 255)
        for (name, _) in cases {
            try scenario.dropImage(name)
        }
        try await scenario.waitForSidecars(cases.count)

        for (name, outputName) in cases {
            let output = scenario.harness.outbox.appending(FilePath.Component(bytes: outputName)!)
            let sidecar = scenario.expectCompleted(at: output)
            let source = scenario.inboxPath(name)
            #expect(sidecar?.source.filePath == source, "\(LogText.escaped(output))")
            let escaped = LogText.escaped(source)
            let lines = scenario.records(message: "Job completed", inputPath: escaped)
            #expect(lines.count == 1, "\(LogText.escaped(output)): \(lines)")
            // The sidecar is JSON: control characters in the name are escaped there too.
            let data = try? SystemCall.contents(of: output.appendingToLastComponent(Sidecar.fileSuffix))
            #expect(data?.contains(0x1B) == false && data?.contains(0x0D) == false, "\(LogText.escaped(output))")
        }
        #expect(
            scenario.daemon.log.contains { line in
                Logfmt.parse(line)?["input.path"] == "\(scenario.harness.inbox)/line\\u{a}break.png"
            }
        )
        #expect(!scenario.daemon.log.contains { $0.hasPrefix(forged) })
        try await scenario.finish(
            "hostile names",
            note: "\(cases.count) files, each under its safe name with one escaped log record"
        )
    }

    /// A tree 60 folders deep converts, keeping its structure in the outbox; the watcher enters folders down to 64
    /// levels below the root, so a file 100 levels down is not converted (nothing is read there), and the daemon
    /// says which folder it did not enter.
    @Test func deepTreesAreConvertedDownToTheDepthLimit() async throws {
        let scenario = try HostileScenario()
        defer { scenario.stop() }
        try await scenario.start()
        let png = try scenario.makePNG()
        for depth in [60, 100] {
            let relative = ["deep\(depth)"] + Array(repeating: "d", count: depth - 1)
            let folder = try scenario.harness.directory.makeDirectory("staging/" + relative.joined(separator: "/"))
            try png.write(to: URL(fileURLWithPath: folder.appending("photo.png").string))
            try scenario.rename(
                scenario.staging.appending("deep\(depth)"),
                to: scenario.harness.inbox.appending("deep\(depth)")
            )
        }
        let shallow = (["deep60"] + Array(repeating: "d", count: 59)).joined(separator: "/") + "/photo.jpg"
        try await scenario.waitForSidecars(1)
        scenario.expectCompleted(shallow)
        // Below level 64 nothing is watched or listed: the daemon says so once, for the first folder it leaves out.
        let beyond = (["deep100"] + Array(repeating: "d", count: 64)).joined(separator: "/")
        try await scenario.daemon.waitForLog("Folder not entered", beyond, timeout: 10)
        try await scenario.finish(
            "deep trees",
            note: "60 levels converted with their structure, 100 levels logged and left at level 64"
        )
        #expect(scenario.sidecarFiles().filter { $0.hasPrefix("deep100") }.isEmpty)
    }

    /// A file dated past the year 2262 (`touch -d`, an SMB client or `rsync -t` can set any date) does not overflow
    /// its fingerprint's nanoseconds, which used to crash the daemon at every start as it found the file again: it is
    /// converted, and the daemon goes on to the sentinel.
    @Test func aFileDatedPastTheYear2262IsConverted() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("future.png"))
        var times = [timespec(tv_sec: 9_300_000_000, tv_nsec: 0), timespec(tv_sec: 9_300_000_000, tv_nsec: 0)]
        try Self.check(utimensat(AT_FDCWD, staging.appending("future.png").string, &times, 0))
        try harness.moveIn(["future.png"], from: staging)
        let sidecars = try await harness.waitForSidecars(1)
        #expect(sidecars["future.jpg" + Sidecar.fileSuffix]?.status == .completed)
    }

    private static func check(_ result: Int32) throws {
        guard result >= 0 else { throw Errno(rawValue: errno) }
    }

    /// Binds a Unix socket at `path` (which must be short) and closes it; the socket file stays.
    private static func makeSocket(at path: FilePath) throws {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try Self.check(descriptor)
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.string.utf8)
        precondition(bytes.count < MemoryLayout.size(ofValue: address.sun_path), "socket path too long")
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
        }
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try Self.check(result)
    }
}
