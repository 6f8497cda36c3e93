import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// `chute check`, `chute explain` and `chute convert`, run as a user would.
@Suite(.timeLimit(.minutes(2)))
struct CommandLineTests {
    /// Runs `chute` to completion and returns its status and both outputs.
    private func chute(
        _ arguments: [String],
        executable: FilePath = ChuteProcess.executable
    ) async throws -> (status: Int32, output: String, error: String) {
        let process = try ChuteProcess(arguments, executable: executable)
        let exit = try await process.waitForExit()
        return (exit.status, process.output.joined(separator: "\n"), process.log.joined(separator: "\n"))
    }

    private func writeConfig(_ yaml: String, in directory: TemporaryDirectory) throws -> FilePath {
        let path = directory.appending("rules.yaml")
        try yaml.write(toFile: path.string, atomically: true, encoding: .utf8)
        return path
    }

    @Test(arguments: [
        (
            "bad syntax",
            "watch:\n  - path: ./in\nrules:\n  - name: a\n    match: \"*.png\n", ":6:1: "
        ),
        (
            "wrong type",
            "watch:\n  - path: ./in\nrules:\n  - name: a\n    match: \"*.png\"\n    to: jpg\n    output: ./out\n"
                + "    quality: high\n", ":8:14: "
        ),
        (
            "unknown key",
            "watch:\n  - path: ./in\nrules:\n  - name: a\n    match: \"*.png\"\n    to: jpg\n    output: ./out\n"
                + "    qualty: 0.8\n", ":8:5: "
        ),
        (
            "unknown target format",
            "watch:\n  - path: ./in\nrules:\n  - name: a\n    match: \"*.png\"\n    to: jpg2000x\n    output: ./out\n",
            ":6:9: "
        ),
    ])
    func checkReportsEachProblemWithItsPosition(_ name: String, _ yaml: String, _ position: String) async throws {
        let directory = try TemporaryDirectory(prefix: "check")
        defer { directory.remove() }
        let config = try self.writeConfig(yaml, in: directory)
        let result = try await self.chute(["check", config.string])
        #expect(result.status != 0, "\(name)")
        let lines = result.error.split(separator: "\n").map(String.init)
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { $0.hasPrefix(config.string + ":") }, "\(name): \(lines)")
        #expect(lines.contains { $0.hasPrefix(config.string + position) }, "\(name): \(lines)")
    }

    /// `start: 2s` and `duration: 3s` are taken as every other duration key takes `2s`; a `groupBy` rule's summary
    /// says its outputs go directly into `output` (not that it keeps sub-folders).
    @Test func checkTakesDurationsWithUnitsForTimesAndSaysWhereGroupsGo() async throws {
        let directory = try TemporaryDirectory(prefix: "check")
        defer { directory.remove() }
        try directory.makeDirectory("in")
        let config = try self.writeConfig(
            """
            watch:
              - path: ./in
            rules:
              - name: sticker
                match: "*.mp4"
                to: gif
                start: 2s
                duration: 3s
                output: ./out
              - name: merge
                match: "*.pdf"
                to: pdf
                groupBy: folder
                output: ./merged
            """,
            in: directory
        )
        let result = try await self.chute(["check", config.string])
        print("check: \(result.output.split(separator: "\n").filter { $0.contains("output:") })")
        #expect(result.status == 0, "\(result.error)")
        let merge = result.output.split(separator: "\n").first { $0.contains("output:") && $0.contains("merged") }
        #expect(merge?.contains("directly in it") == true, "\(String(describing: merge))")
        #expect(merge?.contains("keeping sub-folders") == false, "\(String(describing: merge))")
    }

    @Test func checkAcceptsTheExampleAndSummarisesIt() async throws {
        let example = FilePath(#filePath).removingLastComponent().removingLastComponent().removingLastComponent()
            .appending("rules.example.yaml")
        let result = try await self.chute(["check", example.string])
        #expect(result.status == 0)
        #expect(result.output.contains("heic-to-jpg"))
        #expect(result.output.contains("mkv-to-mp4"))
        // As the other commands take it.
        let option = try await self.chute(["check", "--config", example.string])
        #expect(option.status == 0 && option.output == result.output)
        let both = try await self.chute(["check", example.string, "--config", example.string])
        #expect(both.status != 0 && both.error.contains("give the rules file once"), "\(both.error)")
    }

    @Test func checkShowsEveryOptionARuleSets() async throws {
        let directory = try TemporaryDirectory(prefix: "check")
        defer { directory.remove() }
        let config = try self.writeConfig(
            """
            watch:
              - path: ./in
            rules:
              - name: clips
                match: "*.mkv"
                to: mp4
                videoCodec: hevc
                crf: 19
                preset: slow
                maxFrameRate: 30
                audioCodec: aac
                audioBitrate: 96k
                channels: 1
                sampleRate: 44100
                allAudio: true
                jobTimeout: 5m
                output: ./out
            settings:
              retryDelay: 45s
              incompleteTimeout: 2m
            """,
            in: directory
        )
        let result = try await self.chute(["check", config.string])
        #expect(result.status == 0, "\(result.error)")
        for shown in [
            "videoCodec hevc", "crf 19", "preset slow", "maxFrameRate 30", "audioCodec aac", "audioBitrate 96k",
            "channels 1", "sampleRate 44100", "allAudio", "timeout 5m", "retry delay 45s", "waited for 2m",
        ] {
            #expect(result.output.contains(shown), "'\(shown)' missing from:\n\(result.output)")
        }
    }

    /// `chute` installed without its workers: `check` names each missing worker and the rules whose jobs it would run,
    /// and still exits 0, since the rules file itself is valid. Beside its workers, it says nothing of them.
    @Test func checkWarnsAboutMissingWorkers() async throws {
        let directory = try TemporaryDirectory(prefix: "cli")
        defer { directory.remove() }
        let config = try self.writeConfig(
            """
            watch:
              - path: ./in
            rules:
              - name: photos
                match: "*.heic"
                to: jpg
                output: ./out
              - name: posters
                match: "*.mkv"
                to: jpg
                output: ./out
              - name: anything
                match: "*"
                to: png
                output: ./out
            """,
            in: directory
        )
        // A second name for the test build's `chute` (a copy where a link cannot be made), in a folder of its own.
        let alone = try directory.makeDirectory("bin").appending("chute")
        if link(ChuteProcess.executable.string, alone.string) != 0 {
            try FileManager.default.copyItem(atPath: ChuteProcess.executable.string, toPath: alone.string)
        }
        let result = try await self.chute(["check", config.string], executable: alone)
        let warnings = result.output.split(separator: "\n").filter { $0.contains("worker is missing") }
        print(warnings.joined(separator: "\n"))
        #expect(result.status == 0)
        #expect(warnings.count == 3, "\(result.output)")
        let image = try #require(warnings.first { $0.contains("the image engine's worker") })
        #expect(image.contains(directory.appending("bin/chute-image-worker").string))
        // A poster of a clip is the video engine's job, not the image engine's; a rule that takes anything may need
        // each engine that writes its target (PNG: the image, video and PDF engines).
        #expect(
            image.contains("of rules 'photos', 'anything' that need it would fail as engineUnavailable"),
            "\(image)"
        )
        let video = try #require(warnings.first { $0.contains("the video engine's worker") })
        #expect(
            video.contains("of rules 'posters', 'anything' that need it would fail as engineUnavailable"),
            "\(video)"
        )
        let pdf = try #require(warnings.first { $0.contains("the pdf engine's worker") })
        #expect(pdf.contains("of rule 'anything' that need it would fail as engineUnavailable"), "\(pdf)")

        let installed = try await self.chute(["check", config.string])
        #expect(installed.status == 0 && !installed.output.contains("worker is missing"), "\(installed.output)")
    }

    /// A placeholder in a folder is not expanded: `output: ./photos/{date}` makes a folder named `{date}`, which
    /// `check` says before the daemon does it.
    @Test func checkWarnsAboutPlaceholdersInFolders() async throws {
        let directory = try TemporaryDirectory(prefix: "cli")
        defer { directory.remove() }
        _ = try directory.makeDirectory("in")
        let config = try self.writeConfig(
            """
            watch:
              - path: ./in
            rules:
              - name: photos
                match: "*.heic"
                to: jpg
                output: ./photos/{date}
            """,
            in: directory
        )
        let result = try await self.chute(["check", config.string])
        #expect(result.status == 0, "\(result.error)")
        let warnings = result.output.split(separator: "\n").filter { $0.hasPrefix("warning:") }
        #expect(warnings.count == 1, "\(result.output)")
        #expect(warnings.first?.contains("rule 'photos'") == true && warnings.first?.contains("/photos/{date}") == true)
        #expect(warnings.first?.contains("rename: \"{date}-{stem}.{ext}\"") == true, "\(warnings)")
    }

    @Test func checkWarnsWhenAPatternNamesFilesTheEngineCannotRead() async throws {
        let directory = try TemporaryDirectory(prefix: "check")
        defer { directory.remove() }
        let config = try self.writeConfig(
            """
            watch:
              - path: ./in
            rules:
              - name: scans
                match: ["*.docx", "*.pdf", "*.png", "scan-*"]
                to: jpg
                output: ./out
              - name: voice
                match: "*.mp3"
                to: m4a
                output: ./out
            """,
            in: directory
        )
        // The watched folder exists, so that the only warning is the one about the pattern.
        _ = try directory.makeDirectory("in")
        let result = try await self.chute(["check", config.string])
        #expect(result.status == 0, "\(result.error)")
        let warnings = result.output.split(separator: "\n").filter { $0.hasPrefix("warning:") }
        #expect(warnings.count == 1, "\(result.output)")
        // A PDF's pages are drawn by the PDF engine; a DOCX nothing makes a JPEG of.
        #expect(warnings.first?.contains("rule 'scans'") == true && warnings.first?.contains("*.docx") == true)
        #expect(warnings.first?.contains("image engine cannot read") == true, "\(warnings)")
    }

    /// Given the watched folder itself, `chute explain` is a dry run over its files: one line each with its output or
    /// why none, then a summary by rule; several paths are explained the same way.
    @Test func explainDryRunsAWatchedFolderAndSeveralPaths() async throws {
        let directory = try TemporaryDirectory(prefix: "explain")
        defer { directory.remove() }
        try directory.makeDirectory("in/trip")
        let config = try self.writeConfig(
            """
            watch:
              - path: ./in
            rules:
              - name: photos
                match: "*.png"
                to: jpg
                output: ./out
            """,
            in: directory
        )
        for name in ["in/a.png", "in/trip/b.png"] {
            try Fixtures.makeImage(at: directory.appending(name), width: 16, height: 16)
        }
        try "notes\n".write(toFile: directory.appending("in/notes.txt").string, atomically: true, encoding: .utf8)
        let folder = try await self.chute(["explain", "--config", config.string, directory.appending("in").string])
        print("explain: folder: \(folder.output)")
        #expect(folder.status == 0, "\(folder.output) \(folder.error)")
        let lines = folder.output.split(separator: "\n").map(String.init)
        let first = "\(directory.appending("in/a.png")): → \(directory.appending("out/a.jpg")) (rule 'photos')"
        #expect(lines.contains(first), "\(lines)")
        #expect(lines.contains { $0.hasPrefix(directory.appending("in/trip/b.png").string + ": → ") }, "\(lines)")
        #expect(lines.contains("\(directory.appending("in/notes.txt")): no rule matches"), "\(lines)")
        #expect(lines.last == "3 file(s). rule 'photos': 2, no rule matches: 1", "\(lines)")

        let several = try await self.chute([
            "explain", "--config", config.string, directory.appending("in/notes.txt").string,
            directory.appending("in/trip").string,
        ])
        #expect(several.output.split(separator: "\n").last == "2 file(s). rule 'photos': 1, no rule matches: 1")
    }

    /// `chute check` and `chute explain` take `{taken}` and say what it will be: the capture time in the daemon's zone,
    /// shown by `explain` with the file's modification time, which it falls back to.
    @Test func checkAndExplainDescribeTheCaptureTime() async throws {
        let directory = try TemporaryDirectory(prefix: "explain")
        defer { directory.remove() }
        try directory.makeDirectory("in")
        let config = try self.writeConfig(
            """
            watch:
              - path: ./in
            rules:
              - name: photos
                match: "*.png"
                to: jpg
                rename: "{taken:yyyyMMdd-HHmm}-{stem}.{ext}"
                output: ./out
            """,
            in: directory
        )
        let photo = directory.appending("in/a.png")
        try Fixtures.makeImage(at: photo, width: 16, height: 16)
        // 2020-02-03 04:05:06 UTC, 05:05 in Paris.
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: 1_580_702_706)],
            ofItemAtPath: photo.string
        )
        var results: [(status: Int32, output: String)] = []
        for arguments in [["check", config.string], ["explain", "--config", config.string, photo.string]] {
            let process = try ChuteProcess(arguments, environment: ["TZ": "Europe/Paris"])
            let exit = try await process.waitForExit()
            results.append((exit.status, process.output.joined(separator: "\n")))
        }
        print("check: \(results[0].output)\nexplain: \(results[1].output)")
        #expect(results.allSatisfy { $0.status == 0 }, "\(results)")
        #expect(results[0].output.contains("{taken} the capture time in Europe/Paris (else the modification time)"))
        #expect(results[1].output.contains("output: \(directory.appending("out/20200203-0505-a.jpg"))"))
        #expect(results[1].output.contains("name: {taken} is when it was taken"))
    }

    @Test func explainWarnsWhenTheEngineCannotReadTheContent() async throws {
        let directory = try TemporaryDirectory(prefix: "explain")
        defer { directory.remove() }
        try directory.makeDirectory("in")
        let config = try self.writeConfig(
            """
            watch:
              - path: ./in
            rules:
              - name: anything
                match: "*"
                to: jpg
                output: ./out
            """,
            in: directory
        )
        try Data("%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\n%%EOF\n".utf8)
            .write(to: URL(fileURLWithPath: directory.appending("in/scan.pdf").string))
        try CommandLineTool.run([
            "ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "sine=duration=1",
            directory.appending("in/memo.mp3").string,
        ])
        try Fixtures.makeImage(at: directory.appending("in/photo.png"))
        var warnings: [String: [String]] = [:]
        for name in ["scan.pdf", "memo.mp3", "photo.png"] {
            let result = try await self.chute([
                "explain", "--config", config.string, directory.appending("in/\(name)").string,
            ])
            #expect(result.status == 0, "\(name): \(result.output)")
            warnings[name] = result.output.split(separator: "\n").filter { $0.hasPrefix("warning:") }.map(String.init)
        }
        // The PDF engine draws a PDF's pages as JPEGs: no warning.
        #expect(warnings["scan.pdf"] == [], "\(warnings)")
        #expect(warnings["memo.mp3"]?.first?.contains("cannot read mp3 content") == true, "\(warnings)")
        #expect(warnings["photo.png"] == [], "\(warnings)")
    }

    @Test func theUnitsDocumentationIsInstalled() throws {
        let repository = FilePath(#filePath).removingLastComponent().removingLastComponent().removingLastComponent()
        let unit = try String(contentsOfFile: repository.appending("deploy/chute.service").string, encoding: .utf8)
        let install = try String(contentsOfFile: repository.appending("scripts/install.sh").string, encoding: .utf8)
        // What install.sh installs: each `install … SOURCE DESTINATION` line, SOURCE a file of the repository.
        var installed: [String: String] = [:]
        for line in install.split(separator: "\n") where line.hasPrefix("install ") {
            let words = line.split(separator: " ").map(String.init)
            guard words.count >= 3 else { continue }
            installed[words[words.count - 1]] = words[words.count - 2]
        }
        let documents = unit.split(separator: "\n").filter { $0.hasPrefix("Documentation=") }
            .flatMap { $0.dropFirst("Documentation=".count).split(separator: " ").map(String.init) }
        #expect(!documents.isEmpty)
        for document in documents {
            if document.hasPrefix("file://") {
                let path = String(document.dropFirst("file://".count))
                let source = try #require(installed[path], "install.sh does not install \(path)")
                #expect(FileManager.default.fileExists(atPath: repository.appending(source).string), "\(source)")
            } else {
                #expect(document.hasPrefix("man:") || document.hasPrefix("https://"), "\(document)")
            }
        }
    }

    @Test func explainNamesTheRuleAndTheOutput() async throws {
        let directory = try TemporaryDirectory(prefix: "explain")
        defer { directory.remove() }
        try directory.makeDirectory("in/trip")
        let config = try self.writeConfig(
            """
            watch:
              - path: ./in
            rules:
              - name: small
                match: "*.heic"
                to: jpg
                maxSize: 100
                output: ./out/small
              - name: photos
                match: "*.heic"
                to: jpg
                output: ./out/photos
                strip: true
                quality: 80
                height: 1080
            """,
            in: directory
        )
        try Fixtures.makeImage(at: directory.appending("in/trip/IMG_1.heic"))
        let matched = try await self.chute([
            "explain", "--config", config.string, directory.appending("in/trip/IMG_1.heic").string,
        ])
        #expect(matched.status == 0)
        #expect(matched.output.contains("rule 'photos' matches"))
        #expect(matched.output.contains("rule 'small': size"))
        #expect(matched.output.contains("output: \(directory.appending("out/photos/trip/IMG_1.jpg"))"))
        // The steps in the engine's order, not the order the rule wrote its keys in.
        #expect(
            matched.output.contains(
                "steps, in this order: height ≤ 1080 (resize) → strip metadata (metadata) → quality 80% (encode)"
            ),
            "\(matched.output)"
        )
        let ignored = try await self.chute([
            "explain", "--config", config.string, directory.appending("in/._IMG_1.heic").string,
        ])
        #expect(ignored.status == 1)
        #expect(ignored.output.contains("ignored:"))
        let none = try await self.chute([
            "explain", "--config", config.string, directory.appending("in/notes.txt").string,
        ])
        #expect(none.status == 1)
        #expect(none.output.contains("no rule matches"))
    }

    @Test func convertUsesTheEngineAndNeverOverwrites() async throws {
        let directory = try TemporaryDirectory(prefix: "convert")
        defer { directory.remove() }
        try Fixtures.makeImage(at: directory.appending("in.png"), width: 1600, height: 1200)
        let output = directory.appending("out.webp")
        let first = try await self.chute([
            "convert", directory.appending("in.png").string, output.string, "--quality", "0.7", "--width", "800",
        ])
        #expect(first.status == 0, "\(first.error)")
        let info = try Fixtures.identify(output)
        #expect(info.format == "WEBP")
        #expect(info.width == 800 && info.height == 600)
        let again = try await self.chute(["convert", directory.appending("in.png").string, output.string])
        #expect(again.status != 0)
        print("convert: existing output: \(again.error)")
        #expect(again.error.contains("already exists; give --overwrite to replace it"), "\(again.error)")
        #expect(!again.error.contains("onConflict"), "\(again.error)")
        #expect(try Fixtures.identify(output).width == 800)
        let broken = try await self.chute([
            "convert", directory.appending("rules-missing.png").string, directory.appending("x.jpg").string,
        ])
        #expect(broken.status != 0)
        #expect(!broken.error.isEmpty)
    }

    @Test func convertCutsTilesAndWritesNoneWhenOneNameIsTaken() async throws {
        let directory = try TemporaryDirectory(prefix: "convert")
        defer { directory.remove() }
        try Fixtures.makeImage(at: directory.appending("in.png"), width: 90, height: 61)
        let output = directory.appending("out.png")
        let tiles = ["out-r1c1.png", "out-r1c2.png", "out-r2c1.png", "out-r2c2.png"]

        let first = try await self.chute([
            "convert", directory.appending("in.png").string, output.string, "--tiles", "2x2",
        ])

        #expect(first.status == 0, "\(first.error)")
        #expect(directory.files().filter { $0.hasPrefix("out") }.sorted() == tiles)
        #expect(try tiles.map { try Fixtures.identify(directory.appending($0)).height } == [30, 30, 31, 31])
        // One name of the set taken: nothing is written, the existing file is untouched.
        for name in tiles where name != "out-r2c1.png" {
            try FileManager.default.removeItem(atPath: directory.appending(name).string)
        }
        let again = try await self.chute([
            "convert", directory.appending("in.png").string, output.string, "--tiles", "2x2",
        ])
        #expect(again.status != 0)
        #expect(again.error.contains("already exists; give --overwrite to replace it"), "\(again.error)")
        #expect(directory.files().filter { $0.hasPrefix("out") } == ["out-r2c1.png"])
        #expect(directory.files().filter { $0.hasPrefix(".chute-") }.isEmpty)
    }

    @Test func convertTakesMediaOptionsUnderTheirRuleKeys() async throws {
        let directory = try TemporaryDirectory(prefix: "convert")
        defer { directory.remove() }
        let input = directory.appending("in.mkv")
        try MediaFixtures.makeClip(
            at: input,
            width: 640,
            height: 480,
            seconds: 2,
            codecArguments: MediaFixtures.h264AAC
        )
        let output = directory.appending("out.mp4")

        let result = try await self.chute([
            "convert", input.string, output.string, "--height", "240", "--crf", "30", "--preset", "veryfast",
            "--audioBitrate", "64k", "--sampleRate", "44100", "--channels", "1",
        ])

        #expect(result.status == 0, "\(result.error)")
        #expect(try MediaFixtures.entries("stream=codec_name,width,height", of: output) == "h264|320|240\naac")
        #expect(try MediaFixtures.entries("stream=sample_rate,channels", of: output).hasSuffix("44100|1"))
    }

    @Test func convertChecksOptionsAsARuleWould() async throws {
        let directory = try TemporaryDirectory(prefix: "convert")
        defer { directory.remove() }
        let input = directory.appending("in.mkv")
        try MediaFixtures.makeClip(at: input, seconds: 1, codecArguments: MediaFixtures.h264AAC)

        let tooHigh = try await self.chute([
            "convert", input.string, directory.appending("a.mp4").string, "--crf", "60",
        ])
        let wrongEngine = try await self.chute([
            "convert", input.string, directory.appending("b.mp4").string, "--quality", "0.8",
        ])
        let wrongCodec = try await self.chute([
            "convert", input.string, directory.appending("c.webm").string, "--videoCodec", "h264",
        ])

        #expect(tooHigh.status != 0)
        #expect(tooHigh.error.contains("'crf' must be between 0 and 51 for h264"), "\(tooHigh.error)")
        #expect(wrongEngine.status != 0)
        #expect(wrongEngine.error.contains("'quality' does not apply to video target 'mp4'"), "\(wrongEngine.error)")
        #expect(wrongCodec.status != 0)
        #expect(wrongCodec.error.contains("webm cannot hold h264 video"), "\(wrongCodec.error)")
        let written = try FileManager.default.contentsOfDirectory(atPath: directory.path.string)
        #expect(written == ["in.mkv"])
    }

    /// `chute schema` is a JSON Schema that a validator (python3-jsonschema) accepts, that the example rules file
    /// passes, and that refuses a misspelt key, an unknown format and a value out of range.
    @Test func theSchemaValidatesRulesFiles() async throws {
        let directory = try TemporaryDirectory(prefix: "schema")
        defer { directory.remove() }
        let schema = try await self.chute(["schema"])
        #expect(schema.status == 0)
        let schemaPath = directory.appending("chute.schema.json")
        try schema.output.write(toFile: schemaPath.string, atomically: true, encoding: .utf8)
        let validator = """
            import json, sys, yaml, jsonschema
            schema = json.load(open(sys.argv[1]))
            jsonschema.Draft7Validator.check_schema(schema)
            errors = list(jsonschema.Draft7Validator(schema).iter_errors(yaml.safe_load(open(sys.argv[2]))))
            for error in errors: print(error.message)
            sys.exit(1 if errors else 0)
            """
        let script = directory.appending("validate.py")
        try validator.write(toFile: script.string, atomically: true, encoding: .utf8)
        let root = FilePath(#filePath).removingLastComponent().removingLastComponent().removingLastComponent()

        let example = try CommandLineTool.run(
            ["python3", script.string, schemaPath.string, root.appending("rules.example.yaml").string],
            check: false
        )
        #expect(example.status == 0, "rules.example.yaml: \(example.standardOutput + example.standardError)")

        // `on` is quoted: PyYAML reads YAML 1.1, where a bare `on` is the boolean true (Chute reads it as written).
        let notifying = """
            watch: [{path: ./in}]
            rules:
              - {name: a, match: "*.jpg", to: webp, output: ./out, notify: []}
            settings: {digestAt: "07:30", digestEvery: 6h}
            notify:
              - url: http://nas.local:8080/hook
                "on": [failed, completed]
              - ntfy: http://ntfy.local/chute-alerts
                "on": [failed, digest]
            """
        let good = directory.appending("notify.yaml")
        try notifying.write(toFile: good.string, atomically: true, encoding: .utf8)
        let accepted = try CommandLineTool.run(
            ["python3", script.string, schemaPath.string, good.string],
            check: false
        )
        #expect(accepted.status == 0, "notify.yaml: \(accepted.standardOutput + accepted.standardError)")

        let rules = """
            watch: [{path: ./in}]
            rules:
              - {name: a, match: "*.jpg", to: webp, output: ./out, qualty: 0.8}
              - {name: b, match: "*.mkv", to: xlsx, output: ./out}
              - {name: c, match: "*.mkv", to: mp4, output: ./out, crf: 99}
            notify: [{url: "ftp://nas.local/hook"}]
            """
        let bad = directory.appending("bad.yaml")
        try rules.write(toFile: bad.string, atomically: true, encoding: .utf8)
        let refused = try CommandLineTool.run(["python3", script.string, schemaPath.string, bad.string], check: false)
        #expect(refused.status == 1)
        #expect(refused.standardOutput.contains("'qualty' was unexpected"), "\(refused.standardOutput)")
        #expect(refused.standardOutput.contains("'xlsx' is not one of"), "\(refused.standardOutput)")
        #expect(refused.standardOutput.contains("99 is greater than the maximum of 63"), "\(refused.standardOutput)")
        #expect(refused.standardOutput.contains("'ftp://nas.local/hook' does not match"), "\(refused.standardOutput)")
    }

    /// `chute convert` takes the job limits as a rule does, and a refusal names the key that raises it.
    @Test func convertTakesTheJobLimits() async throws {
        let directory = try TemporaryDirectory(prefix: "convert")
        defer { directory.remove() }
        let input = directory.appending("in.png")
        try Fixtures.makeImage(at: input, width: 800, height: 600)

        let side = try await self.chute([
            "convert", input.string, directory.appending("a.jpg").string, "--maxImageSide", "700",
        ])
        let pixels = try await self.chute([
            "convert", input.string, directory.appending("b.jpg").string, "--maxPixels=400000",
        ])
        let zero = try await self.chute([
            "convert", input.string, directory.appending("c.jpg").string, "--maxImageSide", "0",
        ])
        let raised = try await self.chute([
            "convert", input.string, directory.appending("d.jpg").string, "--maxImageSide", "800", "--width", "100",
        ])

        #expect(side.status != 0)
        #expect(side.error.contains("image is 800x600 pixels; maxImageSide is 700"), "\(side.error)")
        #expect(pixels.status != 0)
        #expect(pixels.error.contains("image is 800x600 = 480000 pixels; maxPixels is 400000"), "\(pixels.error)")
        #expect(zero.status != 0)
        #expect(zero.error.contains("maxImageSide"), "\(zero.error)")
        #expect(raised.status == 0, "\(raised.error)")
        #expect(try Fixtures.identify(directory.appending("d.jpg")).width == 100)
    }

    @Test func convertRefusesAnUnknownOption() async throws {
        let result = try await self.chute(["convert", "/nonexistent/in.png", "/nonexistent/out.jpg", "--qualty", "5"])
        #expect(result.status != 0)
        #expect(result.error.contains("unknown option '--qualty'"), "\(result.error)")
        #expect(result.error.contains("--quality"), "\(result.error)")
    }
}
