import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The Debian package that `scripts/build-deb.sh` makes, installed on this machine with `dpkg -i`, run as its systemd
/// unit says, removed and purged.
///
/// The package is built from the debug binary that `swift test` built (`--binary`), not from the release build the
/// script makes by default: a release build with `--static-swift-stdlib` would add about 15 minutes to the run. The
/// debug binary loads the Swift runtime from the toolchain (hence `--allow-unpackaged-libraries`), which this machine
/// has; everything else the package holds (files, conffile, user, maintainer scripts, man page, Depends) is made the
/// same way for both.
///
/// systemd does not run here, so the test starts the daemon itself from the installed unit's `ExecStartPre=` and
/// `ExecStart=` lines, as the unit's `User=` and `Group=` (`setpriv`); the unit's sandboxing is not applied. It
/// installs software as root: it refuses to start where a chute package or its files are present, and it purges
/// the package and deletes the user it made even when it fails.
@Suite(
    .enabled(if: geteuid() == 0, "installing a package needs root (CI runs the tests as root)"),
    .timeLimit(.minutes(20))
)
struct DebianPackageEndToEndTests {
    private static let repository = FilePath(#filePath).removingLastComponent().removingLastComponent()
        .removingLastComponent()

    /// The engines' worker executables, beside `chute` in the build and in /usr/lib/chute in the package.
    private static let workers = [
        "chute-image-worker", "chute-media-worker", "chute-pdf-worker", "chute-document-worker",
    ]

    /// The files the package installs.
    private static let packagedFiles =
        Self.workers.map { "/usr/lib/chute/" + $0 } + [
            "/usr/bin/chute", "/lib/systemd/system/chute.service", "/etc/chute/rules.yaml",
            "/usr/share/man/man1/chute.1.gz", "/usr/share/doc/chute/README.md", "/usr/share/doc/chute/rules.md",
            "/usr/share/doc/chute/guide.md", "/usr/share/doc/chute/copyright",
        ]

    /// What the maintainer scripts make: the state folder, and the service's enablement by deb-systemd-helper.
    private static let madeFiles = [
        "/etc/chute", "/var/lib/chute", "/etc/systemd/system/multi-user.target.wants/chute.service",
        "/var/lib/systemd/deb-systemd-helper-enabled/chute.service.dsh-also",
        "/var/lib/systemd/deb-systemd-helper-enabled/multi-user.target.wants/chute.service",
    ]

    @Test func installsRunsFromItsUnitAndPurgesCleanly() async throws {
        let present = Self.leftovers()
        try #require(
            present.isEmpty,
            "this machine already has Chute's package or files, which the test would remove: \(present)"
        )
        let userExisted = Self.account("passwd", "chute") != nil
        let groupExisted = Self.account("group", "chute") != nil
        let directory = try TemporaryDirectory(prefix: "deb")
        var daemon: ChuteProcess?
        defer {
            daemon?.terminate()
            _ = try? Self.dpkg(["--purge", "chute"])
            if !userExisted { _ = try? CommandLineTool.run(["userdel", "chute"], check: false) }
            if !groupExisted { _ = try? CommandLineTool.run(["groupdel", "chute"], check: false) }
            directory.remove()
        }

        // Build, and look at the package before installing it.
        let built = try CommandLineTool.run([
            "bash", Self.repository.appending("scripts/build-deb.sh").string, "--binary",
            ChuteProcess.executable.string, "--out", directory.path.string, "--compression", "none",
            "--allow-unpackaged-libraries",
        ])
        let package = try #require(built.standardOutput.split(separator: "\n").last.map(String.init))
        let architecture = try Self.output(["dpkg", "--print-architecture"])
        let version = try Self.output([ChuteProcess.executable.string, "--version"])
        #expect(package.hasPrefix(directory.path.string + "/chute_\(version)"), "\(package)")
        #expect(package.hasSuffix("_\(architecture).deb"), "\(package)")
        #expect(try Self.output(["dpkg-deb", "--field", package, "Package"]) == "chute")
        #expect(try Self.output(["dpkg-deb", "--field", package, "Version"]).hasPrefix(version))
        try Self.expectDependsCoverTheLibraries(
            depends: try Self.output(["dpkg-deb", "--field", package, "Depends"]),
            warnings: built.standardError
        )
        let contents = try Self.output(["dpkg-deb", "--contents", package]).split(separator: "\n")
        for file in Self.packagedFiles {
            let line = contents.first { $0.hasSuffix(" .\(file)") }
            #expect(line?.contains("root/root") == true, "\(file) in the package: \(line ?? "missing")")
        }
        for executable in ["/usr/bin/chute"] + Self.workers.map({ "/usr/lib/chute/" + $0 }) {
            #expect(
                contents.first { $0.hasSuffix(" .\(executable)") }?.hasPrefix("-rwxr-xr-x") == true,
                "\(executable)"
            )
        }

        // Install.
        try Self.dpkg(["--install", package])
        #expect(try Self.output(["dpkg-query", "--show", "--showformat=${Status}", "chute"]) == "install ok installed")
        for file in Self.packagedFiles + Self.madeFiles {
            #expect(Self.exists(file), "\(file) after installing")
        }
        #expect(
            try Self.output(["dpkg-query", "--show", "--showformat=${Conffiles}", "chute"]).contains(
                "/etc/chute/rules.yaml"
            )
        )
        #expect(
            FileManager.default.contents(atPath: "/etc/chute/rules.yaml")
                == FileManager.default.contents(atPath: Self.repository.appending("deploy/rules.yaml").string)
        )
        let user = try #require(Self.account("passwd", "chute"), "the user chute after installing")
        #expect(user.count == 7 && (Int(user[2]) ?? 1000) < 1000, "a system user: \(user)")
        #expect(user.count == 7 && user[5] == "/var/lib/chute" && user[6] == "/usr/sbin/nologin", "\(user)")
        #expect(Self.account("group", "chute") != nil)
        let uid = uid_t(user[2]) ?? 0
        for folder in ["/var/lib/chute", "/var/lib/chute/inbox", "/var/lib/chute/outbox"] {
            #expect(Self.owner(of: folder) == uid, "\(folder) belongs to chute")
        }
        #expect(
            (try? FileManager.default.destinationOfSymbolicLink(
                atPath: "/etc/systemd/system/multi-user.target.wants/chute.service"
            )) == "/lib/systemd/system/chute.service"
        )
        try Self.expectTheManualListsEverySubcommand()

        // The unit: its paths moved to /usr, and its documentation installed.
        let unit = try String(contentsOfFile: "/lib/systemd/system/chute.service", encoding: .utf8)
        #expect(!unit.contains("/usr/local"), "\(unit)")
        for link in Self.values(of: "Documentation", in: unit).flatMap({ $0.split(separator: " ") }) {
            #expect(link.hasPrefix("file://") && Self.exists(String(link.dropFirst("file://".count))), "\(link)")
        }
        // The daemon tells systemd when it is ready and pings its watchdog; only it, not its workers.
        #expect(Self.values(of: "Type", in: unit) == ["notify"])
        #expect(Self.values(of: "NotifyAccess", in: unit) == ["main"])
        #expect(!Self.values(of: "WatchdogSec", in: unit).isEmpty)
        // systemd refuses to start a unit whose ReadWritePaths names a missing folder, unless it starts with `-`.
        for path in Self.values(of: "ReadWritePaths", in: unit).flatMap({ $0.split(separator: " ") }) {
            #expect(path.hasPrefix("-") || Self.exists(String(path)), "ReadWritePaths=\(path) does not exist")
        }

        // Run the daemon as the unit would: ExecStartPre, then ExecStart, as its User and Group. Where systemd runs,
        // postinst has started the service: stopped, so that the test's daemon is the one on the journal.
        if Self.exists("/run/systemd/system") {
            try CommandLineTool.run(["systemctl", "stop", "chute.service"])
        }
        let userName = try #require(Self.values(of: "User", in: unit).last)
        let groupName = try #require(Self.values(of: "Group", in: unit).last)
        let setpriv = try FilePath(Self.output(["sh", "-c", "command -v setpriv"]))
        let asTheUnitsUser = [
            "--reuid=\(userName)", "--regid=\(groupName)", "--init-groups", "--reset-env", "--",
        ]
        for line in Self.values(of: "ExecStartPre", in: unit) {
            try CommandLineTool.run([setpriv.string] + asTheUnitsUser + Self.commandLine(line))
        }
        let start = try #require(Self.values(of: "ExecStart", in: unit).last)
        let started = try ChuteProcess(asTheUnitsUser + Self.commandLine(start), executable: setpriv)
        daemon = started
        try await started.waitForLog("Watcher ready")

        // A photo arrives in the default rules' inbox, as one rename.
        try Fixtures.makeImage(at: directory.appending("packaged.png"), width: 64, height: 48)
        try FileManager.default.copyItem(
            atPath: directory.appending("packaged.png").string,
            toPath: "/var/lib/chute/inbox/packaged.png.part"
        )
        try FileManager.default.moveItem(
            atPath: "/var/lib/chute/inbox/packaged.png.part",
            toPath: "/var/lib/chute/inbox/packaged.png"
        )
        let output = "/var/lib/chute/outbox/photos/packaged.jpg"
        let sidecar = try await waitUntil("the sidecar of \(output)", timeout: 90) {
            FileManager.default.contents(atPath: output + Sidecar.fileSuffix).flatMap {
                try? JSONDecoder().decode(Sidecar.self, from: $0)
            }
        }
        #expect(sidecar.status == .completed, "\(sidecar)")
        #expect(sidecar.rule == "photos")
        #expect(try Fixtures.identify(FilePath(output)).format == "JPEG")
        #expect(Self.owner(of: output) == uid, "written by the unit's user")
        #expect(Self.owner(of: "/var/lib/chute/journal.sqlite") == uid)

        // The installed CLI finds the daemon from the installed rules alone.
        let status = try CommandLineTool.run(["/usr/bin/chute", "status", "--config", "/etc/chute/rules.yaml"])
        #expect(status.standardOutput.contains("completed 1"), "\(status.standardOutput)")

        started.send(SIGTERM)
        let exit = try await started.waitForExit()
        #expect(exit.status == 0 && !exit.signalled, "\(exit)")
        #expect(!started.logLines(containing: "Chute stopped").isEmpty)

        // Remove keeps the rules, the state and the user.
        try Self.dpkg(["--remove", "chute"])
        #expect(
            try Self.output(["dpkg-query", "--show", "--showformat=${Status}", "chute"])
                == "deinstall ok config-files"
        )
        for file in Self.packagedFiles where file != "/etc/chute/rules.yaml" {
            #expect(!Self.exists(file), "\(file) after removing")
        }
        #expect(Self.exists("/etc/chute/rules.yaml") && Self.exists(output))

        // Purge leaves nothing but the user and its group (postrm says why).
        try Self.dpkg(["--purge", "chute"])
        #expect(Self.leftovers().isEmpty, "after purging: \(Self.leftovers())")
        #expect(Self.account("passwd", "chute")?[2] == user[2], "the user chute is kept, with its uid")
    }

    // MARK: - Helpers

    /// Chute's package state and files on this machine, if any.
    private static func leftovers() -> [String] {
        var found = (self.packagedFiles + self.madeFiles).filter(self.exists)
        if let status = try? CommandLineTool.run(["dpkg-query", "--show", "--showformat=${Status}", "chute"]),
            !status.standardOutput.hasSuffix("not-installed")
        {
            found.append("package chute: \(status.standardOutput)")
        }
        return found
    }

    /// Whether a path exists, a dangling symbolic link included.
    private static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    /// The owner's uid of a path.
    private static func owner(of path: String) -> uid_t? {
        var status = stat()
        return lstat(path, &status) == 0 ? status.st_uid : nil
    }

    /// The fields of a `getent` entry (`passwd` or `group`), or `nil` when there is none.
    private static func account(_ database: String, _ name: String) -> [String]? {
        guard let result = try? CommandLineTool.run(["getent", database, name], check: false), result.status == 0
        else { return nil }
        return result.standardOutput.trimmingCharacters(in: .newlines)
            .split(separator: ":", omittingEmptySubsequences: false).map(String.init)
    }

    /// What a command printed, without its final newline.
    private static func output(_ arguments: [String]) throws -> String {
        try CommandLineTool.run(arguments).standardOutput.trimmingCharacters(in: .newlines)
    }

    /// Runs dpkg, trying again for up to two minutes while another dpkg or apt holds its lock.
    @discardableResult
    private static func dpkg(_ arguments: [String]) throws -> CommandLineTool.Result {
        let deadline = ContinuousClock.now + .seconds(120)
        while true {
            let result = try CommandLineTool.run(["dpkg"] + arguments, check: false)
            if result.status == 0 { return result }
            guard result.standardError.contains("lock"), ContinuousClock.now < deadline else {
                throw CommandLineTool.Failure(command: ["dpkg"] + arguments, result: result)
            }
            usleep(500_000)
        }
    }

    /// The values of a key in a unit file, in order.
    private static func values(of key: String, in unit: String) -> [String] {
        unit.split(separator: "\n").compactMap { line in
            line.hasPrefix(key + "=") ? String(line.dropFirst(key.count + 1)) : nil
        }
    }

    /// An `Exec…=` value as arguments: its words, without systemd's prefixes (`-`, `@`, `:`, `+`, `!`).
    private static func commandLine(_ value: String) -> [String] {
        var words = value.split(separator: " ").map(String.init)
        if let first = words.first { words[0] = String(first.drop { "-@:+!".contains($0) }) }
        return words
    }

    /// Each library that `chute` or a worker names belongs to a package in Depends, or is one the script warned that
    /// no package provides (the toolchain's Swift runtime, for these debug binaries).
    private static func expectDependsCoverTheLibraries(depends: String, warnings: String) throws {
        let packages = Set(
            depends.split(separator: ",").compactMap { $0.split(separator: " ").first.map(String.init) }
        )
        let folder = ChuteProcess.executable.removingLastComponent()
        for executable in [ChuteProcess.executable] + Self.workers.map({ folder.appending($0) }) {
            try Self.expectDependsCover(executable, packages: packages, depends: depends, warnings: warnings)
        }
    }

    /// Each library `executable` names belongs to a package of `packages`, or is in the script's `warnings`.
    private static func expectDependsCover(
        _ executable: FilePath,
        packages: Set<String>,
        depends: String,
        warnings: String
    ) throws {
        let libraries = try self.output(["ldd", executable.string]).split(separator: "\n")
            .map { $0.split(whereSeparator: \.isWhitespace).map(String.init) }
        let needed = try self.output(["readelf", "-d", executable.string]).split(separator: "\n")
            .filter { $0.contains("(NEEDED)") }
            .compactMap { $0.split(separator: "[").last?.split(separator: "]").first.map(String.init) }
        #expect(needed.count > 10, "\(needed)")
        for soname in needed {
            // `libfoo.so.1 => /usr/lib/…/libfoo.so.1 (0x…)`, or the loader's `/lib64/ld-linux-x86-64.so.2 (0x…)`.
            let words =
                libraries.first { $0.first == soname }
                ?? libraries.first { $0.first?.hasSuffix("/" + soname) == true } ?? []
            let path = words.count > 2 && words[1] == "=>" ? words[2] : words.first ?? ""
            let owner = try CommandLineTool.run(["dpkg-query", "--search", path], check: false)
            let resolved = try CommandLineTool.run(["realpath", path], check: false).standardOutput
                .trimmingCharacters(in: .newlines)
            let ownerOfTarget = try CommandLineTool.run(["dpkg-query", "--search", resolved], check: false)
            let found = [owner, ownerOfTarget].first { $0.status == 0 }
            if let found {
                let name = String(found.standardOutput.prefix { $0 != ":" && $0 != "," })
                #expect(
                    packages.contains(name),
                    "\(executable.lastComponent?.string ?? "") needs \(soname) (\(path)), \(name)'s, not in Depends: \(depends)"
                )
            } else {
                #expect(warnings.contains(soname), "\(soname) (\(path)) has no package and no warning: \(warnings)")
            }
        }
    }

    /// The man page renders, and names every subcommand that `chute --help` lists, with its summary.
    private static func expectTheManualListsEverySubcommand() throws {
        let help = try self.output(["/usr/bin/chute", "--help"]).split(
            separator: "\n",
            omittingEmptySubsequences: false
        )
        let listed = help.drop { $0 != "SUBCOMMANDS:" }.dropFirst().prefix { !$0.isEmpty }
            .filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }
            .compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(listed.count >= 10, "\(help)")
        let rendered = try CommandLineTool.run(
            ["env", "MANWIDTH=200", "MANPAGER=cat", "man", "-l", "/usr/share/man/man1/chute.1.gz"]
        ).standardOutput
        let lines = rendered.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.first?.hasPrefix("CHUTE(1)") == true, "\(rendered.prefix(400))")
        for subcommand in listed {
            #expect(
                lines.contains { $0 == subcommand || $0.hasPrefix(subcommand + " ") },
                "\(subcommand) is not in the man page:\n\(rendered)"
            )
        }
    }
}
