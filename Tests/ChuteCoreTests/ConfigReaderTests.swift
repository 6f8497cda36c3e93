import ChuteApp
import ChuteCatalog
import ChuteCore
import ChuteFFmpeg
import ChuteMagick
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The folder that relative paths resolve against in these tests.
private let base = FilePath("/srv/chute")

/// A configuration with one watched folder (`inbox`) and one rule named `photos`.
///
/// Line 1 is `watch:`, line 4 is `  - name: photos`, and `rule` lines follow from line 5, indented by four spaces
/// (so a rule key is at column 5). `tail` lines are appended as they are.
private func yaml(rule: [String] = standardRule, tail: [String] = []) -> String {
    let head = ["watch:", "  - path: inbox", "rules:", "  - name: photos"]
    return (head + rule.map { "    " + $0 } + tail).joined(separator: "\n") + "\n"
}

/// ``yaml(rule:tail:)`` with its `watch:` section (lines 1 and 2) replaced by `watchLines`.
private func yaml(watch watchLines: [String]) -> String {
    let rules = yaml().split(separator: "\n").dropFirst(2).map(String.init)
    return (watchLines + rules).joined(separator: "\n") + "\n"
}

/// Lines 5–7 of ``yaml(rule:tail:)`` by default: the required keys. Extra rule keys then start on line 8.
private let standardRule = ["match: \"*.heic\"", "to: jpg", "output: out"]

/// Parses `text` as `rules.yaml` in ``base`` and returns the issues as printed; records a failure when it parses.
private func problems(_ text: String) -> [String] {
    do {
        let config = try ConfigReader.parse(text, file: "rules.yaml", baseDirectory: base, registry: Engines.registry)
        Issue.record("expected issues, but the file parsed: \(config)")
        return []
    } catch {
        return error.issues.map(\.description)
    }
}

/// Parses `text` as `rules.yaml` in ``base``, failing the test with the issues when there are any.
private func parsed(_ text: String) throws -> ChuteConfig {
    do {
        return try ConfigReader.parse(text, file: "rules.yaml", baseDirectory: base, registry: Engines.registry)
    } catch {
        Issue.record("unexpected issues:\n\(error)")
        throw error
    }
}

/// The repository root, found from this file's path (`Tests/ChuteCoreTests/ConfigReaderTests.swift`).
/// Every format name, as the rules reader lists them.
private let knownFormats = Engines.registry.formats.map(\.name).joined(separator: ", ")

private let repositoryRoot = FilePath(#filePath).removingLastComponent().removingLastComponent()
    .removingLastComponent()

/// Broken YAML and the one issue each gives.
private let syntaxErrorCases: [(String, String)] = [
    (
        "watch:\n  - path: inbox\n   recursive: true\n",
        "rules.yaml:3:4: invalid YAML: while parsing a block collection at line 2, column 3, "
            + "did not find expected '-' indicator"
    ),
    (
        "watch:\n\t- path: inbox\n",
        "rules.yaml:2:1: invalid YAML: while scanning for the next token at line 2, column 1, "
            + "found character that cannot start any token; YAML is indented with spaces, not tabs"
    ),
    (
        "watch:\n  - path: \"inbox\nrules: []\n",
        "rules.yaml:4:1: invalid YAML: while scanning a quoted scalar at line 2, column 11, "
            + "found unexpected end of stream"
    ),
    (
        yaml(rule: ["match: *.heic"]),
        "rules.yaml:5:13: invalid YAML: while scanning an alias at line 5, column 12, did not find expected "
            + "alphabetic or numeric character; a value starting with '*' or '&' must be quoted, "
            + "as in match: \"*.heic\""
    ),
    (
        "watch: \u{01}\n",
        "rules.yaml:1:8: invalid YAML: control characters are not allowed"
    ),
    (
        "--- {}\n--- {}\n",
        "rules.yaml:2:1: invalid YAML: expected a single document in the stream at line 1, column 1, "
            + "but found another document"
    ),
]

/// An extra rule line (line 8) with a value of the wrong type, and the issue it gives.
private let wrongTypeCases: [(String, String)] = [
    ("quality: high", "rules.yaml:8:14: expected a number for 'quality', found string 'high'"),
    ("quality: \"0.8\"", "rules.yaml:8:14: expected a number for 'quality', found string '0.8'"),
    ("strip: maybe", "rules.yaml:8:12: expected true or false for 'strip', found string 'maybe'"),
    ("keepStructure: \"true\"", "rules.yaml:8:20: expected true or false for 'keepStructure', found string 'true'"),
    ("width: wide", "rules.yaml:8:12: expected a whole number for 'width', found string 'wide'"),
    ("width: 2.5", "rules.yaml:8:12: expected a whole number for 'width', found number 2.5"),
    ("rename: [a]", "rules.yaml:8:13: expected a name template for 'rename', found a list"),
    ("minSize: {a: 1}", "rules.yaml:8:14: expected a byte size for 'minSize', found a mapping"),
    ("type: {image: true}", "rules.yaml:8:11: expected a value or a list for 'type', found a mapping"),
    ("onConflict:", "rules.yaml:8:16: expected a conflict policy for 'onConflict', found nothing"),
]

/// A video or audio rule (lines 5–7: `match`, `to`, `output`) with option lines from line 8, and the issues.
private let badMediaOptionCases: [([String], [String])] = [
    (
        ["to: mp4", "videoCodec: x264"],
        [
            "rules.yaml:8:17: unknown value 'x264' for 'videoCodec'; expected one of: h264, hevc, vp9, av1, mpeg4, "
                + "mpeg1video, mpeg2video, wmv2, flv1, rv10, theora, amv, copy"
        ]
    ),
    (["to: webm", "videoCodec: h264"], ["rules.yaml:8:17: webm cannot hold h264 video; it holds: vp9, av1"]),
    (["to: mov", "audioCodec: opus"], ["rules.yaml:8:17: mov cannot hold opus audio; it holds: aac, mp3"]),
    (["to: mpg", "crf: 20"], ["rules.yaml:8:5: 'crf' applies to h264, hevc, vp9 and av1, not mpeg1video"]),
    (["to: amr", "sampleRate: 16000"], ["rules.yaml:8:17: amr takes only 8000 Hz, found 16000"]),
    (["to: amv", "channels: 2"], ["rules.yaml:8:15: amv takes only 1 channel, found 2"]),
    (["to: gsm", "audioBitrate: 32k"], ["rules.yaml:8:5: 'audioBitrate' does not apply to gsm, which is always 13k"]),
    (["to: mp4", "crf: 60"], ["rules.yaml:8:10: 'crf' must be between 0 and 51 for h264, found 60"]),
    (["to: webm", "crf: 64"], ["rules.yaml:8:10: 'crf' must be between 0 and 63, found 64"]),
    (["to: mp4", "crf: 20", "videoBitrate: 2M"], ["rules.yaml:9:5: set either 'crf' or 'videoBitrate', not both"]),
    (
        ["to: mp4", "videoBitrate: 2 Mbit"],
        [
            "rules.yaml:8:19: invalid bitrate '2 Mbit' for 'videoBitrate': expected bits per second, as a whole number "
                + "or with k or M, such as 128k or 2.5M"
        ]
    ),
    (["to: mp4", "audioBitrate: 1M"], ["rules.yaml:8:19: 'audioBitrate' must be between 8k and 512k, found 1M"]),
    (["to: webm", "preset: slow"], ["rules.yaml:8:5: 'preset' applies to h264 and hevc video, not vp9"]),
    (
        ["to: mp4", "preset: snappy"],
        [
            "rules.yaml:8:13: unknown value 'snappy' for 'preset'; expected one of: ultrafast, superfast, veryfast, "
                + "faster, fast, medium, slow, slower, veryslow, placebo"
        ]
    ),
    (["to: flac", "audioBitrate: 320k"], ["rules.yaml:8:5: 'audioBitrate' does not apply to lossless flac audio"]),
    (["to: wav", "audioBitrate: 320k"], ["rules.yaml:8:5: 'audioBitrate' does not apply to lossless pcm audio"]),
    (["to: mp3", "channels: 6"], ["rules.yaml:8:15: 'channels' must be between 1 and 2 for mp3, found 6"]),
    (
        ["to: mp4", "maxFileSize: 5MB", "crf: 20"],
        ["rules.yaml:8:5: set either 'maxFileSize' or 'crf'/'videoBitrate', not both"]
    ),
    (
        ["to: mkv", "maxFileSize: 5MB", "videoCodec: vp9"],
        ["rules.yaml:8:5: 'maxFileSize' encodes h264 video in two passes, not vp9"]
    ),
    (["to: webm", "maxFileSize: 5MB"], ["rules.yaml:8:5: 'maxFileSize' does not apply to video target 'webm'"]),
    (["to: jpg", "duration: 2"], ["rules.yaml:8:5: 'duration' does not apply to image target 'jpg'"]),
    (["to: gif", "duration: 11"], ["rules.yaml:8:15: a gif sticker lasts at most 10 s, found 11"]),
    (
        ["to: opus", "sampleRate: 44100"],
        ["rules.yaml:8:17: opus cannot use 44100 Hz; it takes: 8000, 12000, 16000, 24000, 48000"]
    ),
    (
        ["to: mp4", "upscale: true"],
        ["rules.yaml:8:5: 'upscale' needs 'width', 'height', 'shortSide' or 'longSide' to grow towards"]
    ),
    (
        ["to: mp4", "maxFrameRate: 0"],
        ["rules.yaml:8:19: 'maxFrameRate' must be greater than 0 and at most 240, found 0"]
    ),
]

/// Files with one unknown key, and the issue each gives.
private let unknownKeyCases: [(String, String)] = [
    (
        yaml(tail: ["colour: blue"]),
        "rules.yaml:8:1: unknown key 'colour' at the top level; allowed keys: watch, rules, settings, notify"
    ),
    (
        yaml(watch: ["watch:", "  - path: inbox", "    recurse: false"]),
        "rules.yaml:3:5: unknown key 'recurse' in watch entry 1 (did you mean 'recursive'?); "
            + "allowed keys: path, recursive, ignore, poll, pollInterval, doneSuffix, lockSuffix, allowHardLinks, "
            + "incompleteTimeout"
    ),
    (
        yaml(rule: standardRule + ["qualty: 0.5"]),
        "rules.yaml:8:5: unknown key 'qualty' in rule 'photos' (did you mean 'quality'?); allowed keys: "
            + ConfigReader.schemaKeys(registry: Engines.registry).rule.joined(separator: ", ")
    ),
    (
        yaml(tail: ["settings:", "  quietTime: 1s"]),
        "rules.yaml:9:3: unknown key 'quietTime' in settings; allowed keys: quietPeriod, incompleteTimeout, "
            + "retryDelay, retryLimit, gracePeriod, workerJobs, workerIdle, concurrency, niceness, ioPriority, cpuBudget, memoryBudget, "
            + "agingLimit, jobTimeout, memoryLimit, cpuTimeLimit, maxOutputSize, maxPixels, maxImageSide, maxFrames, "
            + "maxDuration, "
            + "historyRetention, uploadRetention, maxUploadSize, maxUploads, maxQueued, requestTimeout, api, digestAt, digestEvery, store, storePasswordFile, agent, agentLease, watch, agentURL, hookConcurrency"
    ),
    (
        yaml(tail: ["settings:", "  concurrency: {image: 2, gpu: 1}"]),
        "rules.yaml:9:27: unknown key 'gpu' in 'concurrency'; allowed keys: image, video, audio, document, pdf"
    ),
]

/// An extra rule line (line 8) with a value of the right type but out of range, and the issue it gives.
private let badRuleValueCases: [(String, String)] = [
    (
        "quality: 150",
        "rules.yaml:8:14: 'quality' must be a fraction (0 < q <= 1) or a percentage (1 < q <= 100), found 150"
    ),
    (
        "quality: 0",
        "rules.yaml:8:14: 'quality' must be a fraction (0 < q <= 1) or a percentage (1 < q <= 100), found 0"
    ),
    (
        "quality: .nan",
        "rules.yaml:8:14: 'quality' must be a finite number, found .nan"
    ),
    ("height: -5", "rules.yaml:8:13: 'height' must be a whole number greater than 0, found -5"),
    ("rawFormat: rgb", "rules.yaml:8:5: 'rawFormat' needs 'rawSize', the raw image's width and height"),
    ("rawSize: 640x480", "rules.yaml:8:5: 'rawSize' is only used with 'rawFormat'"),
    ("rawSize: big", "rules.yaml:8:14: invalid value 'big' for 'rawSize': expected WIDTHxHEIGHT, such as 640x480"),
    ("concurrency: 0", "rules.yaml:8:18: 'concurrency' must be a whole number greater than 0, found 0"),
    (
        "minAge: 5 parsecs",
        "rules.yaml:8:13: invalid duration '5 parsecs' for 'minAge': expected a number and a unit "
            + "(ms, s, m, h or d), such as 500ms, 2s, 1.5m or 30d"
    ),
    (
        "maxSize: 10XB",
        "rules.yaml:8:14: invalid byte size '10XB' for 'maxSize': expected a number and a unit "
            + "(B, KB, MB, GB, TB, KiB, MiB, GiB or TiB), such as 10KB, 2.5MB or 1GiB"
    ),
    (
        "onConflict: replace",
        "rules.yaml:8:17: unknown value 'replace' for 'onConflict'; expected one of: rename, skip, overwrite"
    ),
    (
        "type: photo",
        "rules.yaml:8:11: unknown type 'photo' for 'type'; known types: image, video, audio, document, pdf"
    ),
    (
        "rename: \"{stem}.{extension}\"",
        "rules.yaml:8:13: invalid name template '{stem}.{extension}': unknown placeholder {extension}; "
            + "known: {stem}, {ext}, {name}, {sourceExt}, {rule}, {date}, {taken}"
    ),
    ("rename: \"\"", "rules.yaml:8:13: 'rename' must not be empty"),
    ("watch: []", "rules.yaml:8:12: 'watch' must not be an empty list"),
]

/// A `settings:` line (line 9) with an unusable value, and the issue it gives.
private let badSettingsValueCases: [(String, String)] = [
    ("  jobTimeout: 0s", "rules.yaml:9:15: 'jobTimeout' must be longer than 0"),
    (
        "  quietPeriod: -1s",
        "rules.yaml:9:16: invalid duration '-1s' for 'quietPeriod': expected a number and a unit "
            + "(ms, s, m, h or d), such as 500ms, 2s, 1.5m or 30d"
    ),
    ("  workerJobs: 0", "rules.yaml:9:15: 'workerJobs' must be a whole number greater than 0, found 0"),
    ("  concurrency: {video: -1}", "rules.yaml:9:24: 'video' must be a whole number greater than 0, found -1"),
]

@Suite struct ConfigReaderTests {
    @Test func readsEveryKey() throws {
        let config = try parsed(
            """
            watch:
              - path: ./inbox
                recursive: false
                ignore: ["*.nef", "raw-*"]
              - path: /data/scans
            rules:
              - name: photos
                match: ["*.heic", "IMG_????.jpg"]
                to: JPEG
                output: ./outbox/photos
                quality: 85
                width: 1920
                height: 1080
                strip: true
                rename: "{date}-{stem}.{ext}"
                keepStructure: false
                onConflict: overwrite
                concurrency: 2
                watch: inbox
                minSize: 10KB
                maxSize: 2GiB
                type: [image, Document]
                minAge: 10s
                maxAge: 30d
            settings:
              quietPeriod: 500ms
              gracePeriod: 1m
              jobTimeout: 1.5h
              workerJobs: 50
              workerIdle: 5s
              historyRetention: 7d
              concurrency: {image: 3, video: 1}
            """
        )
        #expect(
            config.watches == [
                WatchConfig(
                    path: "/srv/chute/inbox",
                    recursive: false,
                    ignore: [try GlobPattern("*.nef"), try GlobPattern("raw-*")]
                ),
                WatchConfig(path: "/data/scans"),
            ]
        )
        let rule = try #require(config.rules.first)
        #expect(config.rules.count == 1)
        #expect(rule.name == "photos")
        #expect(rule.match == [try GlobPattern("*.heic"), try GlobPattern("IMG_????.jpg")])
        #expect(rule.to == Engines.registry.format(named: "jpg"))
        #expect(rule.output == "/srv/chute/outbox/photos")
        #expect(rule.options == ConversionOptions(["quality": 85.0, "width": 1920, "height": 1080, "strip": true]))
        #expect(rule.rename == (try NameTemplate("{date}-{stem}.{ext}")))
        #expect(rule.keepStructure == false)
        #expect(rule.onConflict == .overwrite)
        #expect(rule.concurrency == 2)
        #expect(rule.watches == ["/srv/chute/inbox"])
        #expect(
            rule.filters
                == RuleFilters(
                    minSize: 10_000,
                    maxSize: 2 << 30,
                    types: [.image, .document],
                    minAge: .seconds(10),
                    maxAge: .seconds(30 * 86_400)
                )
        )
        #expect(config.settings.quietPeriod == .milliseconds(500))
        #expect(config.settings.gracePeriod == .seconds(60))
        #expect(config.settings.limits.timeout == .seconds(5400))
        #expect(config.settings.workerJobs == 50)
        #expect(config.settings.workerIdle == .seconds(5))
        #expect(config.settings.historyRetention == .seconds(7 * 86_400))
        #expect(config.settings.concurrency == [.image: 3, .video: 1])
    }

    @Test func leftOutKeysTakeTheirDefaults() throws {
        let config = try parsed(yaml())
        #expect(config.watches == [WatchConfig(path: "/srv/chute/inbox", recursive: true, ignore: [])])
        let expected = Rule(
            name: "photos",
            match: [try GlobPattern("*.heic")],
            to: try #require(Engines.registry.format(named: "jpg")),
            output: "/srv/chute/out",
            options: ConversionOptions(),
            filters: RuleFilters(),
            rename: .default,
            keepStructure: true,
            onConflict: .rename,
            concurrency: nil,
            watches: []
        )
        #expect(config.rules == [expected])
        #expect(config.settings == Settings())
        #expect(try parsed(yaml(tail: ["settings:"])).settings == Settings())
    }

    @Test func exampleFileAtTheRepositoryRootIsValid() throws {
        let path = repositoryRoot.appending("rules.example.yaml")
        let config: ChuteConfig
        do {
            config = try ConfigReader.read(contentsOf: path, registry: Engines.registry)
        } catch {
            Issue.record("rules.example.yaml has issues:\n\(error)")
            return
        }
        #expect(config.watches == [WatchConfig(path: repositoryRoot.appending("demo/inbox"))])
        #expect(config.rules.map(\.name) == ["heic-to-jpg", "mkv-to-mp4", "audio-to-mp3"])
        let photos = config.rules[0]
        #expect(photos.match == [try GlobPattern("*.heic")])
        #expect(photos.to.name == "jpg")
        #expect(photos.options == ConversionOptions(["quality": 0.85]))
        #expect(photos.output == repositoryRoot.appending("demo/outbox/photos"))
        let videos = config.rules[1]
        #expect(videos.match == [try GlobPattern("*.mkv"), try GlobPattern("*.avi")])
        #expect(videos.to.name == "mp4")
        #expect(videos.to.engine == .video)
        #expect(videos.options == ConversionOptions(["height": 720]))
        #expect(videos.output == repositoryRoot.appending("demo/outbox/videos"))
        let music = config.rules[2]
        #expect(music.to.engine == .audio)
        #expect(music.options == ConversionOptions())
        #expect(music.output == repositoryRoot.appending("demo/outbox/music"))
        #expect(config.settings.quietPeriod == .seconds(1))
    }

    @Test(arguments: syntaxErrorCases)
    func syntaxErrorIsReportedAtLibyamlsPosition(text: String, expected: String) {
        #expect(problems(text) == [expected])
    }

    @Test func duplicateKeyIsReportedWhereItRepeats() {
        #expect(
            problems("watch:\n  - path: inbox\nrules: []\n# again\nrules: []\n") == [
                "rules.yaml:5:1: duplicate key 'rules' (first at line 3); a key may appear only once in a mapping"
            ]
        )
        #expect(
            problems(yaml(rule: standardRule + ["to: png"])) == [
                "rules.yaml:8:5: duplicate key 'to' (first at line 6); a key may appear only once in a mapping"
            ]
        )
        #expect(
            problems("watch:\n  - {path: a, path: b}\nrules: []\n") == [
                // Flow mappings are not searched for the repetition: the issue points at the first occurrence.
                "rules.yaml:2:6: duplicate key 'path' (first at line 2); a key may appear only once in a mapping"
            ]
        )
    }

    @Test(arguments: wrongTypeCases)
    func wrongTypeInARule(line: String, expected: String) {
        #expect(problems(yaml(rule: standardRule + [line])) == [expected])
    }

    @Test func wrongTypeOfASection() {
        #expect(
            problems("watch: inbox\nrules:\n  - name: a\n    match: x\n    to: jpg\n    output: o\n") == [
                "rules.yaml:1:8: expected a list of folders to watch for 'watch', found string 'inbox'"
            ]
        )
        #expect(
            problems(yaml(tail: ["settings: fast"])) == [
                "rules.yaml:8:11: expected a mapping for 'settings', found string 'fast'"
            ]
        )
        #expect(
            problems(yaml(tail: ["settings:", "  quietPeriod: [1s]"])) == [
                "rules.yaml:9:16: expected a duration for 'quietPeriod', found a list"
            ]
        )
        #expect(problems("- watch\n") == ["rules.yaml:1:1: expected a mapping at the top level, found a list"])
        #expect(
            problems("watch:\n  - inbox\nrules: []\n") == [
                "rules.yaml:2:5: expected a mapping for 'watch', found string 'inbox'",
                "rules.yaml:3:8: 'rules' must list at least one rule",
            ]
        )
    }

    @Test(arguments: unknownKeyCases)
    func unknownKeyIsNamedWithTheAllowedOnes(text: String, expected: String) {
        #expect(problems(text) == [expected])
    }

    @Test func misspeltKeyGetsASuggestion() {
        #expect(
            problems("watch:\n  - path: inbox\nrule:\n  - name: a\n") == [
                "rules.yaml:1:1: missing required key 'rules' at the top level (the list of conversion rules)",
                "rules.yaml:3:1: unknown key 'rule' at the top level (did you mean 'rules'?); "
                    + "allowed keys: watch, rules, settings, notify",
            ]
        )
    }

    @Test func unknownTargetFormatListsTheKnownOnes() {
        #expect(
            problems(yaml(rule: ["match: \"*.heic\"", "to: jpgg", "output: out"])) == [
                "rules.yaml:6:9: unknown target format 'jpgg' for 'to'; known formats: " + knownFormats
            ]
        )
    }

    @Test(arguments: badRuleValueCases)
    func badValueInARule(line: String, expected: String) {
        #expect(problems(yaml(rule: standardRule + [line])) == [expected])
    }

    @Test func badGlobAndEmptyPathAreReportedAtTheValue() {
        #expect(
            problems(yaml(rule: ["match: [\"*.heic\", \"IMG[0-9\"]", "to: jpg", "output: \"\""])) == [
                "rules.yaml:5:23: invalid glob 'IMG[0-9': '[' is never closed",
                "rules.yaml:7:13: 'output' must not be empty",
            ]
        )
    }

    @Test(arguments: badSettingsValueCases)
    func badValueInSettings(line: String, expected: String) {
        #expect(problems(yaml(tail: ["settings:", line])) == [expected])
    }

    @Test func missingRequiredKeysAreReportedAtTheirMapping() {
        #expect(
            problems(yaml(rule: ["to: jpg"])) == [
                "rules.yaml:4:5: missing required key 'match' in rule 'photos'",
                "rules.yaml:4:5: missing required key 'output' in rule 'photos'",
            ]
        )
        #expect(
            problems("watch:\n  - path: inbox\n") == [
                "rules.yaml:1:1: missing required key 'rules' at the top level (the list of conversion rules)"
            ]
        )
        #expect(
            problems(yaml(watch: ["watch:", "  - recursive: false"]))
                == ["rules.yaml:2:5: missing required key 'path' in watch entry 1"]
        )
        #expect(
            problems(yaml(tail: ["  - match: \"*.png\"", "    to: jpg", "    output: out"])) == [
                "rules.yaml:8:5: missing required key 'name' in rule 2"
            ]
        )
    }

    @Test func duplicateRuleNameIsReportedAtTheSecond() {
        let second = ["  - name: photos", "    match: \"*.png\"", "    to: webp", "    output: out"]
        #expect(
            problems(yaml(tail: second)) == [
                "rules.yaml:8:11: duplicate rule name 'photos' (first used at line 4); rule names must be unique"
            ]
        )
    }

    @Test func aRulesWatchMustBeAWatchedFolder() throws {
        #expect(
            problems(yaml(rule: standardRule + ["watch: ./other"])) == [
                "rules.yaml:8:12: './other' (/srv/chute/other) is not a watched folder; a rule's 'watch' must name "
                    + "one of: /srv/chute/inbox"
            ]
        )
        #expect(
            problems(yaml(rule: standardRule + ["watch: [inbox, /srv/other]"])) == [
                "rules.yaml:8:20: '/srv/other' is not a watched folder; a rule's 'watch' must name one of: "
                    + "/srv/chute/inbox"
            ]
        )
        let config = try parsed(yaml(rule: standardRule + ["watch: ./x/../inbox/"]))
        #expect(config.rules[0].watches == ["/srv/chute/inbox"])
    }

    @Test func optionsMustApplyToTheTarget() {
        let video = ["match: \"*.mkv\"", "to: mp4", "output: out", "tiles: 2x3", "quality: 80", "height: 720"]
        #expect(
            problems(yaml(rule: video)) == [
                "rules.yaml:8:5: 'tiles' does not apply to video target 'mp4'",
                "rules.yaml:9:5: 'quality' does not apply to video target 'mp4'",
            ]
        )
        let audio = ["match: \"*.wav\"", "to: mp3", "output: out", "width: 100"]
        #expect(problems(yaml(rule: audio)) == ["rules.yaml:8:5: 'width' does not apply to audio target 'mp3'"])
    }

    @Test func readsVideoAndAudioOptions() throws {
        let video = [
            "match: \"*.mkv\"", "to: mp4", "output: out", "height: 720", "upscale: true", "videoCodec: hevc",
            "crf: 26", "preset: slow", "maxFrameRate: 29.97", "audioCodec: mp3", "audioBitrate: 160k",
            "channels: 2", "sampleRate: 48000", "allAudio: true",
        ]
        let config = try parsed(yaml(rule: video))
        #expect(
            config.rules[0].options
                == ConversionOptions([
                    "height": 720, "upscale": true, "videoCodec": "hevc", "crf": 26, "preset": "slow",
                    "maxFrameRate": 29.97, "audioCodec": "mp3", "audioBitrate": 160_000, "channels": 2,
                    "sampleRate": 48000, "allAudio": true,
                ])
        )
        let bitrate = try parsed(yaml(rule: ["match: \"*.mov\"", "to: webm", "output: out", "videoBitrate: 2.5M"]))
        #expect(bitrate.rules[0].options == ConversionOptions(["videoBitrate": 2_500_000]))
        let audio = try parsed(yaml(rule: ["match: \"*.wav\"", "to: mp3", "output: out", "audioBitrate: 192000"]))
        #expect(audio.rules[0].options == ConversionOptions(["audioBitrate": 192_000]))
    }

    @Test func groupByTakesTargetsThatJoinAndTheOptionsOfAJoin() throws {
        let joined = try parsed(
            yaml(rule: ["match: \"*.mp4\"", "to: mp4", "output: out", "groupBy: folder", "height: 720", "crf: 23"])
        )
        #expect(joined.rules[0].grouping == .folder)
        let track = try parsed(yaml(rule: ["match: \"*.wav\"", "to: mp3", "output: out", "groupBy: folder"]))
        #expect(track.rules[0].grouping == .folder)
        let sheet = try parsed(
            yaml(rule: ["match: \"*.png\"", "to: jpg", "output: out", "groupBy: folder", "tiles: 4x3"])
        )
        #expect(sheet.rules[0].grouping == .folder)
        #expect(
            problems(yaml(rule: ["match: \"*.png\"", "to: jpg", "output: out", "groupBy: folder"])) == [
                "rules.yaml:8:14: images joined into one jpg (groupBy) make a contact sheet, which needs 'tiles' "
                    + "(COLUMNSxROWS, such as 4x3); only gif and webp make an animation without it"
            ]
        )
        let trimmed = ["match: \"*.mp4\"", "to: mp4", "output: out", "groupBy: folder", "start: 5", "crop: 1:1"]
        #expect(
            problems(yaml(rule: trimmed)) == [
                "rules.yaml:8:14: clips joined into one mp4 (groupBy) take only the options that set the output "
                    + "(audioBitrate, audioCodec, channels, crf, height, longSide, metadata, preset, sampleRate, "
                    + "shortSide, strip, upscale, videoBitrate, videoCodec, width), not crop, start"
            ]
        )
        #expect(
            problems(yaml(rule: ["match: \"*.docx\"", "to: odt", "output: out", "groupBy: folder"])) == [
                "rules.yaml:8:14: 'groupBy' makes one output of several files, which 'to: odt' does not; a group "
                    + "becomes a PDF, an animated gif or webp, a contact sheet (an image target with 'tiles'), or one "
                    + "video or sound file"
            ]
        )
    }

    @Test func aPDFsDPIIsTheResolutionCompressResamplesTo() throws {
        let resampled = try parsed(
            yaml(rule: ["match: \"*.pdf\"", "to: pdf", "output: out", "compress: true", "dpi: 150", "quality: 70"])
        )
        #expect(resampled.rules[0].options == ConversionOptions(["compress": true, "dpi": 150.0, "quality": 70.0]))
        #expect(
            problems(yaml(rule: ["match: \"*.pdf\"", "to: pdf", "output: out", "dpi: 150"])) == [
                "rules.yaml:8:5: 'dpi' on a pdf target is the resolution 'compress: true' resamples images to; the "
                    + "rule does not compress"
            ]
        )
    }

    @Test func mediaOptionsApplyOnlyToTheirTargets() {
        let image = ["match: \"*.png\"", "to: jpg", "output: out", "crf: 20", "sampleRate: 44100"]
        #expect(
            problems(yaml(rule: image)) == [
                "rules.yaml:8:5: 'crf' does not apply to image target 'jpg'",
                "rules.yaml:9:5: 'sampleRate' does not apply to image target 'jpg'",
            ]
        )
        let audio = [
            "match: \"*.wav\"", "to: m4a", "output: out", "videoCodec: h264", "audioCodec: aac", "allAudio: true",
        ]
        #expect(
            problems(yaml(rule: audio)) == [
                "rules.yaml:8:5: 'videoCodec' does not apply to audio target 'm4a'",
                "rules.yaml:9:5: 'audioCodec' does not apply to audio target 'm4a'",
                "rules.yaml:10:5: 'allAudio' does not apply to audio target 'm4a'",
            ]
        )
    }

    @Test(arguments: badMediaOptionCases)
    func badMediaOptionIsReportedWhereItIs(lines: [String], expected: [String]) {
        let rule = ["match: \"*.mkv\"", lines[0], "output: out"] + lines.dropFirst()
        #expect(problems(yaml(rule: rule)) == expected)
    }

    @Test func emptyRangesAreErrors() {
        #expect(
            problems(yaml(rule: standardRule + ["minSize: 10MB", "maxSize: 1MB", "minAge: 1h", "maxAge: 30m"])) == [
                "rules.yaml:8:14: 'minSize' (10MB) is larger than 'maxSize' (1MB); no file could match",
                "rules.yaml:10:13: 'minAge' (1h) is longer than 'maxAge' (30m); no file could match",
            ]
        )
    }

    @Test func duplicateWatchedFolderIsAnError() {
        #expect(
            problems(yaml(watch: ["watch:", "  - path: inbox", "  - path: ./inbox/"]))
                == ["rules.yaml:3:11: folder '/srv/chute/inbox' is already watched (line 2)"]
        )
    }

    @Test func everyProblemInAFileIsReportedInFileOrder() {
        let text = """
            watch:
              - path: inbox
                recursive: sometimes
            rules:
              - name: photos
                match: "*.heic"
                to: jpg
                output: out
                quality: 150
                minSize: 2MB
                maxSize: 1MB
              - name: videos
                match: "*.mkv"
                to: mp5
                output: out
                onConflict: never
              - name: photos
                match: "*.png"
                output: out
            settings:
              quietPeriod: soon
              colour: blue
            """
        #expect(
            problems(text) == [
                "rules.yaml:3:16: expected true or false for 'recursive', found string 'sometimes'",
                "rules.yaml:9:14: 'quality' must be a fraction (0 < q <= 1) or a percentage (1 < q <= 100), found 150",
                "rules.yaml:10:14: 'minSize' (2MB) is larger than 'maxSize' (1MB); no file could match",
                "rules.yaml:14:9: unknown target format 'mp5' for 'to'; known formats: " + knownFormats,
                "rules.yaml:16:17: unknown value 'never' for 'onConflict'; expected one of: rename, skip, overwrite",
                "rules.yaml:17:5: missing required key 'to' in rule 'photos'",
                "rules.yaml:17:11: duplicate rule name 'photos' (first used at line 5); rule names must be unique",
                "rules.yaml:21:16: invalid duration 'soon' for 'quietPeriod': expected a number and a unit "
                    + "(ms, s, m, h or d), such as 500ms, 2s, 1.5m or 30d",
                "rules.yaml:22:3: unknown key 'colour' in settings; allowed keys: quietPeriod, incompleteTimeout, "
                    + "retryDelay, retryLimit, gracePeriod, workerJobs, workerIdle, concurrency, niceness, ioPriority, cpuBudget, memoryBudget, "
                    + "agingLimit, jobTimeout, memoryLimit, cpuTimeLimit, maxOutputSize, maxPixels, maxImageSide, maxFrames, "
                    + "maxDuration, "
                    + "historyRetention, uploadRetention, maxUploadSize, maxUploads, maxQueued, requestTimeout, api, digestAt, digestEvery, store, storePasswordFile, agent, agentLease, watch, agentURL, hookConcurrency",
            ]
        )
    }

    @Test func relativePathsResolveAgainstTheBaseDirectory() throws {
        let config = try parsed(
            """
            watch:
              - path: inbox
              - path: ../shared/drop/
              - path: /abs/./path/x
            rules:
              - name: photos
                match: "*.heic"
                to: jpg
                output: ./out/../photos
            """
        )
        #expect(config.watches.map(\.path) == ["/srv/chute/inbox", "/srv/shared/drop", "/abs/path/x"])
        #expect(config.rules[0].output == "/srv/chute/photos")

        let relativeBase = try ConfigReader.parse(
            yaml(),
            file: "rules.yaml",
            baseDirectory: "conf/./sub/..",
            registry: Engines.registry
        )
        let cwd = FilePath(FileManager.default.currentDirectoryPath)
        #expect(relativeBase.watches[0].path == cwd.appending("conf/inbox"))
        #expect(relativeBase.rules[0].output == cwd.appending("conf/out"))
    }

    @Test func aSingleValueAndAListOfOneAreTheSame() throws {
        let scalars = try parsed(
            """
            watch:
              - path: inbox
                ignore: "*.nef"
            rules:
              - name: photos
                match: "*.heic"
                to: jpg
                output: out
                type: image
                watch: inbox
            """
        )
        let lists = try parsed(
            """
            watch:
              - path: inbox
                ignore:
                  - "*.nef"
            rules:
              - name: photos
                match: ["*.heic"]
                to: jpg
                output: out
                type: [image]
                watch:
                  - inbox
            """
        )
        #expect(scalars == lists)
        #expect(scalars.watches[0].ignore == [try GlobPattern("*.nef")])
        #expect(scalars.rules[0].match == [try GlobPattern("*.heic")])
        #expect(scalars.rules[0].filters.types == [.image])
        #expect(scalars.rules[0].watches == ["/srv/chute/inbox"])
    }

    @Test func emptyFileNeedsWatchAndRules() {
        #expect(problems("") == ["rules.yaml:1:1: the file is empty; it needs a 'watch' list and a 'rules' list"])
        #expect(
            problems("# nothing yet\n") == [
                "rules.yaml:1:1: the file is empty; it needs a 'watch' list and a 'rules' list"
            ]
        )
    }

    @Test func issuesPrintAsFileLineColumnMessage() {
        let issue = ConfigIssue(file: "r.yaml", line: 3, column: 7, message: "wrong")
        #expect(issue.description == "r.yaml:3:7: wrong")
        let second = ConfigIssue(file: "r.yaml", line: 9, column: 1, message: "also wrong")
        #expect(ConfigError(issues: [issue, second]).description == "r.yaml:3:7: wrong\nr.yaml:9:1: also wrong")
    }
}

@Suite struct ConfigReaderFileTests {
    @Test func missingFileIsOneIssueAtTheStart() {
        do {
            _ = try ConfigReader.read(contentsOf: "/nonexistent-chute-test/rules.yaml", registry: Engines.registry)
            Issue.record("a missing file was read")
        } catch {
            #expect(
                error.issues == [
                    ConfigIssue(
                        file: "/nonexistent-chute-test/rules.yaml",
                        line: 1,
                        column: 1,
                        message: "cannot read the file: No such file or directory"
                    )
                ]
            )
        }
    }

    @Test func aFolderIsNotAFile() throws {
        let directory = try TemporaryDirectory(prefix: "config")
        defer { directory.remove() }
        do {
            _ = try ConfigReader.read(contentsOf: directory.path, registry: Engines.registry)
            Issue.record("a folder was read as a file")
        } catch {
            #expect(error.description == "\(directory.path):1:1: cannot read the file: Is a directory")
        }
    }

    @Test func relativePathsResolveAgainstTheFilesFolder() throws {
        let directory = try TemporaryDirectory(prefix: "config")
        defer { directory.remove() }
        let folder = try directory.makeDirectory("conf")
        let file = folder.appending("rules.yaml")
        try Data(yaml().utf8).write(to: URL(fileURLWithPath: file.string))
        let config = try ConfigReader.read(contentsOf: file, registry: Engines.registry)
        #expect(config.watches.map(\.path) == [folder.appending("inbox")])
        #expect(config.rules[0].output == folder.appending("out"))
    }

    @Test func invalidUTF8IsReportedWhereItStarts() throws {
        let directory = try TemporaryDirectory(prefix: "config")
        defer { directory.remove() }
        let file = directory.appending("rules.yaml")
        try Data(Array("watch:\n  - path: in".utf8) + [0xFF] + Array("box\n".utf8))
            .write(to: URL(fileURLWithPath: file.string))
        do {
            _ = try ConfigReader.read(contentsOf: file, registry: Engines.registry)
            Issue.record("invalid UTF-8 was read")
        } catch {
            #expect(error.description == "\(file):2:13: the file is not valid UTF-8 text")
        }
    }
}

@Suite struct ConfigSummaryTests {
    @Test func summaryListsWatchesThenRulesInOrderThenSettings() throws {
        let config = try parsed(
            """
            watch:
              - path: inbox
              - path: scans
                recursive: false
                ignore: ["*.nef", "raw-*"]
                doneSuffix: .done
            rules:
              - name: heic-to-jpg
                match: "*.heic"
                to: jpg
                quality: 0.85
                strip: true
                output: out/photos
              - name: big-videos
                match: ["*.mkv", "*.avi"]
                to: mp4
                height: 720
                output: out/videos
                rename: "{date}-{stem}"
                keepStructure: false
                onConflict: skip
                concurrency: 1
                watch: scans
                minSize: 2.5MB
                type: [video, image]
                minAge: 90s
                maxAge: 30d
                source: move
                doneFolder: done
                quarantine: failed
                maxDuration: 3h
            settings:
              quietPeriod: 1s
              concurrency: {video: 1}
              memoryLimit: 2GB
            """
        )
        #expect(
            ConfigSummary.render(config, file: "rules.yaml", registry: Engines.registry) == """
                rules.yaml: OK, 2 watched folders, 2 rules

                Watching:
                  /srv/chute/inbox (with sub-folders)
                  /srv/chute/scans (this folder only; also ignoring *.nef, raw-*; a file waits for its .done marker)

                Rules (tried in order, the first match wins):
                  1. heic-to-jpg: *.heic → jpg (image engine; video engine from video; pdf engine from pdf)
                       options: quality 85%, strip metadata
                       output:  /srv/chute/out/photos/{stem}.{ext}, keeping sub-folders, on conflict rename, on duplicate skip
                  2. big-videos: *.mkv, *.avi → mp4 (video engine)
                       options: height ≤ 720
                       output:  /srv/chute/out/videos/{date}-{stem}, flattened, on conflict skip, on duplicate skip, at most 1 at once
                       only:    type image or video; size at least 2.5MB; age 1.5m to 30d; below /srv/chute/scans
                       source:  moved to /srv/chute/done once its output is verified
                       failed:  source moved to /srv/chute/failed, with a reason file
                       limits:  timeout 30m, memory 2GB, duration ≤ 3h

                Settings: quiet period 1s, incomplete files waited for 10m, retry delay 30s for at most 10 tries, grace period 30s, new worker every 200 jobs, an idle one exits after 10s, finished jobs kept in the history for 90d, at most 2 hooks at once
                Concurrency: image auto, video 1, audio auto, document auto, pdf auto
                Budget: CPU auto, memory auto, ageing limit 30s
                Job limits: timeout 30m, memory 2GB
                Workers: niceness 10, I/O priority 7, no network
                Status API: socket .chute/api.sock beside the journal, no TCP, idle connections closed after 1m
                Uploads: at most 8 at once, each at most 16GB, kept for 1d after their jobs, none taken while 1000 jobs wait, a conversion answered within 10m
                Jobs kept in the journal (SQLite)
                Notifications: none
                """
        )
    }
}

/// Every key of the schema, set in one file, shows in `chute check`'s summary: an option the summary forgets fails
/// here, and so does a new key until it is given its line below.
@Suite struct SummaryCompletenessTests {
    private static let file = """
        watch:
          - path: inbox
          - path: scans
            recursive: false
            ignore: ["*.nef"]
            poll: always
            pollInterval: 30s
            doneSuffix: .done
            lockSuffix: .lock
            allowHardLinks: true
            incompleteTimeout: 30s
        rules:
          - name: photos-x
            match: "*.heic"
            to: jpg
            output: out/photos
            notify:
              - url: https://chute:pw@nas.local/hook?token=abc
                on: [completed, failed]
            quality: 0.77
            width: 1234
            height: 987
            strip: true
            crop: 16:9
            gravity: north
            rotate: 33
            flip: true
            grayscale: true
            colorspace: keep
            flop: true
            background: "#102030"
            aspect: 4:5
            aspectMode: pad
            watermark: "© Me"
            watermarkPosition: northwest
            watermarkOpacity: 0.7
            watermarkSize: 0.3
            maxFileSize: 300KB
            rename: "{stem}-small.{ext}"
            keepStructure: false
            onConflict: overwrite
            concurrency: 3
            upload: true
            uploadOutput: folder
            run: {command: [/usr/local/bin/index, --quiet], on: [completed, failed]}
            pre: [/usr/local/bin/triage]
            runTimeout: 2m
            watch: scans
            minSize: 10KB
            maxSize: 2GB
            type: image
            minAge: 90s
            maxAge: 30d
            owner: 1026
            group: 100
            mode: "0640"
            source: move
            doneFolder: done
            quarantine: failed
            onDuplicate: convert
            sidecars: ./meta
            jobTimeout: 5m
            memoryLimit: 3GB
            cpuTimeLimit: 90s
            maxOutputSize: 8GB
            maxPixels: 50000000
            maxImageSide: 20000
            maxFrames: 500
            maxDuration: 3h
          - name: marks
            match: "*.png"
            to: png
            output: out/marks
            # Any readable file passes the rules check; the worker decodes it.
            watermarkImage: /bin/sh
          - name: clips
            match: "*.mkv"
            to: mp4
            output: out/clips
            width: 640
            shortSide: 720
            longSide: 1280
            upscale: true
            videoCodec: hevc
            crf: 19
            preset: slow
            maxFrameRate: 29.97
            audioCodec: mp3
            audioBitrate: 96k
            channels: 1
            sampleRate: 44100
            allAudio: true
            end: "2:00"
            speed: 2
            mute: true
            loudness: -16
          - name: songs
            match: "*.flac"
            to: mp3
            output: out/songs
            coverArt: drop
          - name: talks
            match: "*.avi"
            to: mkv
            output: out/talks
            videoBitrate: 2.5M
            start: "1:30"
            duration: 20
            trimExact: false
          - name: stickers
            match: "*.mov"
            to: gif
            output: out/stickers
            start: 1.5
            duration: 2
          - name: frames
            match: "*.rgb"
            to: png
            output: out/frames
            rawFormat: yuv
            rawSize: 640x480
            rawDepth: 16
            metadata: location
            tiles: 2x3
          - name: papers
            match: "*.pdf"
            to: pdf
            output: out/papers
            pages: "1-3,x2"
            split: "1,2-z"
            compress: true
            lossless: true
            password: open-sesame
            groupBy: folder
            pageSize: a4
            margin: 12mm
            watermark: Copy
            watermarkRotation: 30
          - name: slides
            match: "*.pdf"
            to: png
            output: out/slides
            dpi: 96
          - name: flipbook
            match: "*.png"
            to: gif
            output: out/flipbooks
            groupBy: folder
            frameDelay: 200ms
        settings:
          quietPeriod: 1s
          incompleteTimeout: 2m
          retryDelay: 45s
          retryLimit: 4
          gracePeriod: 20s
          workerJobs: 50
          workerIdle: 2m
          hookConcurrency: 4
          concurrency: {video: 1}
          niceness: 5
          ioPriority: idle
          cpuBudget: 3
          memoryBudget: 600MB
          agingLimit: 45s
          jobTimeout: 2h
          memoryLimit: 2GB
          cpuTimeLimit: 10m
          maxOutputSize: 10GB
          maxPixels: 40000000
          maxImageSide: 30000
          maxFrames: 50
          maxDuration: 4h
          historyRetention: 30d
          uploadRetention: 12h
          maxUploadSize: 2GB
          maxUploads: 3
          maxQueued: 40
          requestTimeout: 90s
          api:
            socket: /run/chute/api.sock
            listen: 127.0.0.1:8750
            tokenFile: /etc/chute/token
            idleTimeout: 45s
          digestAt: "07:45"
          digestEvery: 12h
          store: postgres://chute@db.lan:5433/jobs?sslmode=require
          storePasswordFile: /etc/chute/db.pass
          agent: nas-2
          agentLease: 45s
          watch: false
          agentURL: http://nas-2.lan:8750
        notify:
          - ntfy: http://ntfy.local/chute-alerts
            on: [failed, digest]
        """

    /// What the summary shows for each watch key.
    private static let watchShown: [String: String] = [
        "path": "/srv/chute/scans (", "recursive": "this folder only", "ignore": "also ignoring *.nef",
        "poll": "polled every", "pollInterval": "every 30s", "doneSuffix": "its .done marker",
        "lockSuffix": "its .lock marker", "allowHardLinks": "hard links allowed",
        "incompleteTimeout": "files not ready waited for 30s",
    ]
    /// What the summary's rules show for each rule key.
    private static let ruleShown: [String: String] = [
        "name": "1. photos-x:", "match": "*.heic →",
        "to": "→ jpg (image engine; video engine from video; pdf engine from pdf)",
        "output": "/srv/chute/out/photos/",
        "quality": "quality 77%", "width": "width ≤ 1234", "height": "height ≤ 987", "strip": "strip metadata",
        "crop": "crop 16:9", "gravity": "gravity north",
        "rotate": "rotate 33°", "flip": "flip top to bottom", "grayscale": "grayscale", "colorspace": "colorspace keep",
        "flop": "flop left to right",
        "background": "background #102030", "aspect": "aspect 4:5", "aspectMode": "aspectMode pad",
        "watermark": "watermark \"© Me\"", "watermarkImage": "watermark image /bin/sh",
        "watermarkPosition": "watermark at northwest", "watermarkOpacity": "watermark opacity 0.7",
        "watermarkSize": "watermark size 0.3", "watermarkRotation": "watermark turned 30°",
        "maxFileSize": "at most 300KB",
        "upscale": "upscale", "shortSide": "short side ≤ 720", "longSide": "long side ≤ 1280",
        "videoCodec": "videoCodec hevc", "crf": "crf 19", "videoBitrate": "videoBitrate 2.5M",
        "preset": "preset slow", "maxFrameRate": "maxFrameRate 29.97", "audioCodec": "audioCodec mp3",
        "audioBitrate": "audioBitrate 96k", "channels": "channels 1", "sampleRate": "sampleRate 44100",
        "allAudio": "allAudio", "rawFormat": "raw yuv input", "rawSize": "raw size 640x480",
        "rawDepth": "raw depth 16", "start": "start at 1:30", "end": "end at 2:00", "duration": "lasting 20",
        "trimExact": "trim on keyframes", "metadata": "metadata location", "tiles": "2x3 tiles (columns x rows)",
        "speed": "speed 2×", "mute": "mute", "loudness": "loudness -16 LUFS", "coverArt": "coverArt drop",
        "pages": "pages 1-3,x2", "split": "split into 1,2-z", "compress": "compress",
        "lossless": "images stored losslessly",
        "password": "password given",
        "dpi": "96 dpi", "pageSize": "pages a4 sized", "margin": "margin 12mm", "frameDelay": "each frame 200ms",
        "rename": "{stem}-small.{ext}",
        "keepStructure": "flattened",
        "onConflict": "on conflict overwrite", "concurrency": "at most 3 at once", "watch": "below /srv/chute/scans",
        "minSize": "size 10KB", "maxSize": "to 2GB", "type": "type image", "minAge": "age 1.5m", "maxAge": "to 30d",
        "owner": "owner 1026", "group": "group 100", "mode": "mode 640", "source": "source:  moved to",
        "doneFolder": "/srv/chute/done", "quarantine": "source moved to /srv/chute/failed",
        "onDuplicate": "on duplicate convert", "sidecars": "sidecars: in /srv/chute/meta", "jobTimeout": "timeout 5m",
        "groupBy": "one output per sub-folder (groupBy folder)",
        "notify": "notify:  failed, completed → https://nas.local/hook (webhook)",
        "memoryLimit": "memory 3GB", "cpuTimeLimit": "CPU time 1.5m", "maxOutputSize": "output ≤ 8GB",
        "maxPixels": "pixels ≤ 50000000", "maxImageSide": "image side ≤ 20000", "maxFrames": "frames ≤ 500",
        "maxDuration": "duration ≤ 3h",
        "upload": "uploads: taken through the API", "uploadOutput": "outputs written to the output folder",
        "run": "run:     /usr/local/bin/index --quiet after each job completed, failed",
        "runTimeout": "killed after 2m", "pre": "pre:     /usr/local/bin/triage before each job",
    ]
    /// What the summary's settings show for each settings key.
    private static let settingsShown: [String: String] = [
        "quietPeriod": "quiet period 1s", "incompleteTimeout": "waited for 2m", "retryDelay": "retry delay 45s",
        "retryLimit": "at most 4 tries", "gracePeriod": "grace period 20s", "workerJobs": "every 50 jobs",
        "hookConcurrency": "at most 4 hooks at once",
        "workerIdle": "idle one exits after 2m",
        "concurrency": "video 1",
        "niceness": "niceness 5", "ioPriority": "I/O priority idle", "cpuBudget": "CPU 3",
        "memoryBudget": "memory 600MB", "agingLimit": "ageing limit 45s", "jobTimeout": "timeout 2h",
        "memoryLimit": "memory 2GB", "cpuTimeLimit": "CPU time 10m", "maxOutputSize": "output ≤ 10GB",
        "maxPixels": "pixels ≤ 40000000", "maxImageSide": "image side ≤ 30000", "maxFrames": "frames ≤ 50",
        "maxDuration": "duration ≤ 4h",
        "historyRetention": "kept in the history for 30d",
        "uploadRetention": "kept for 12h after their jobs", "maxUploadSize": "each at most 2GB",
        "maxUploads": "at most 3 at once", "maxQueued": "none taken while 40 jobs wait",
        "requestTimeout": "answered within 1.5m",
        "api": "Status API: socket /run/chute/api.sock, TCP 127.0.0.1:8750 with the token in /etc/chute/token, idle "
            + "connections closed after 45s",
        "digestAt": "from 07:45", "digestEvery": "digest every 12h",
        "store": "Jobs kept in PostgreSQL at chute@db.lan:5433/jobs, encrypted",
        "storePasswordFile": "its password in /etc/chute/db.pass",
        "agent": "as agent nas-2", "agentLease": "leases of 45s", "watch": "watching no folder",
        "agentURL": "fetched by other agents at http://nas-2.lan:8750",
    ]

    @Test func everyKeyTheFileSetsShows() throws {
        let summary = ConfigSummary.render(try parsed(Self.file), file: "rules.yaml", registry: Engines.registry)
        #expect(!summary.contains("open-sesame"), "the summary shows the rule's password")
        #expect(!summary.contains("token=abc") && !summary.contains("pw@"), "the summary shows a notify URL's secrets")
        let parts = summary.components(separatedBy: "\nRules (")
        let settingsStart = try #require(summary.range(of: "\nSettings: "))
        let watches = try #require(parts.first)
        let rules = String(summary[..<settingsStart.lowerBound]).components(separatedBy: "\nRules (").last ?? ""
        let settings = String(summary[settingsStart.lowerBound...])
        let keys = ConfigReader.schemaKeys(registry: Engines.registry)
        for (name, schema, shown, text) in [
            ("watch", keys.watch, Self.watchShown, watches), ("rule", keys.rule, Self.ruleShown, rules),
            ("settings", keys.settings, Self.settingsShown, settings),
        ] {
            #expect(
                Set(schema) == Set(shown.keys),
                "\(name) keys without a line here: \(Set(schema).subtracting(shown.keys))"
            )
            for key in schema {
                guard let fragment = shown[key] else { continue }
                #expect(text.contains(fragment), "\(name) key '\(key)': '\(fragment)' missing from:\n\(text)")
            }
        }
    }
}

/// `onDuplicate` and `sidecars` of a rule.
@Suite struct DuplicateAndSidecarConfigTests {
    @Test func readsOnDuplicateAndSidecars() throws {
        let defaults = try parsed(yaml()).rules[0]
        #expect(defaults.onDuplicate == .skip)
        #expect(defaults.sidecars == .besideOutput)
        let set = try parsed(yaml(rule: standardRule + ["onDuplicate: Convert", "sidecars: ./meta"])).rules[0]
        #expect(set.onDuplicate == .convert)
        #expect(set.sidecars == .folder(FilePath("/srv/chute/meta")))
        #expect(set.writtenFolders.contains(FilePath("/srv/chute/meta")))
        let failedOnly = try parsed(yaml(rule: standardRule + ["sidecars: failed-only"])).rules[0]
        #expect(failedOnly.sidecars == .failedOnly)
        #expect(!failedOnly.writesSidecar(completed: true) && failedOnly.writesSidecar(completed: false))
        #expect(try parsed(yaml(rule: standardRule + ["sidecars: beside"])).rules[0].sidecars == .besideOutput)
    }

    @Test func badValuesAreErrorsAtTheirValue() {
        #expect(
            problems(yaml(rule: standardRule + ["onDuplicate: ignore", "sidecars: [a, b]"]))
                == [
                    "rules.yaml:8:18: unknown value 'ignore' for 'onDuplicate'; expected one of: skip, convert",
                    "rules.yaml:9:15: expected beside, failed-only or a folder for 'sidecars', found a list",
                ]
        )
    }

    @Test func aSidecarFolderKeepsTheOutputsSubFolders() throws {
        let rule = try parsed(yaml(rule: standardRule + ["sidecars: meta"])).rules[0]
        #expect(
            rule.sidecarPath(for: FilePath("/srv/chute/out/trip/IMG_1.jpg"))
                == "/srv/chute/meta/trip/IMG_1.jpg.chute.json"
        )
        let beside = try parsed(yaml()).rules[0]
        #expect(
            beside.sidecarPath(for: FilePath("/srv/chute/out/trip/IMG_1.jpg"))
                == "/srv/chute/out/trip/IMG_1.jpg.chute.json"
        )
    }
}

/// `owner`, `group` and `mode` of a rule, and `poll` and `pollInterval` of a watch entry.
@Suite struct OwnershipAndPollingConfigTests {
    @Test func readsOwnerGroupAndModeByIdOrName() throws {
        let byID = try parsed(yaml(rule: standardRule + ["owner: 1026", "group: 100", "mode: 0640"]))
        #expect(byID.rules[0].ownership == OutputOwnership(owner: 1026, group: 100, mode: 0o640))
        // Every system has root (uid 0) and its group; the mode may be quoted and have three digits.
        let byName = try parsed(yaml(rule: standardRule + ["owner: root", "group: root", "mode: \"664\""]))
        #expect(byName.rules[0].ownership == OutputOwnership(owner: 0, group: 0, mode: 0o664))
        #expect(try parsed(yaml()).rules[0].ownership == OutputOwnership())
    }

    @Test func unknownAccountsAndBadModesAreErrorsAtTheirValue() {
        #expect(
            problems(
                yaml(rule: standardRule + ["owner: no-such-user-here", "group: no-such-group-here", "mode: 0987"])
            )
                == [
                    "rules.yaml:8:12: unknown user 'no-such-user-here' for 'owner'",
                    "rules.yaml:9:12: unknown group 'no-such-group-here' for 'group'",
                    "rules.yaml:10:11: expected octal permissions from 000 to 777 for 'mode', such as \"0640\", found '0987'",
                ]
        )
        #expect(
            problems(yaml(rule: standardRule + ["mode: 4755"]))
                == [
                    "rules.yaml:8:11: expected octal permissions from 000 to 777 for 'mode', such as \"0640\", found '4755'"
                ]
        )
    }

    @Test func readsPollAndPollInterval() throws {
        let config = try parsed(
            yaml(watch: ["watch:", "  - path: inbox", "    poll: always", "    pollInterval: 30s"])
        )
        #expect(config.watches[0].poll == .always)
        #expect(config.watches[0].pollInterval == .seconds(30))
        let defaults = try parsed(yaml())
        #expect(defaults.watches[0].poll == .auto)
        #expect(defaults.watches[0].pollInterval == .seconds(10))
    }

    @Test func badPollValuesAreErrors() {
        #expect(
            problems(yaml(watch: ["watch:", "  - path: inbox", "    poll: sometimes", "    pollInterval: 10ms"]))
                == [
                    "rules.yaml:3:11: unknown value 'sometimes' for 'poll'; expected one of: auto, always, never",
                    "rules.yaml:4:19: 'pollInterval' must be at least 100ms",
                ]
        )
    }
}

/// Job limits, worker priorities, source and failure policies, and marker files.
@Suite struct ReliabilityConfigTests {
    @Test func settingsGiveTheLimitsAndARuleOverridesThem() throws {
        let config = try parsed(
            yaml(
                rule: standardRule + ["maxPixels: 50000000", "cpuTimeLimit: 90s"],
                tail: [
                    "settings:", "  jobTimeout: 1h", "  memoryLimit: 2GB", "  maxOutputSize: 10GB", "  maxFrames: 50",
                    "  maxDuration: 3h", "  niceness: 19", "  ioPriority: idle",
                ]
            )
        )
        var expected = JobLimits()
        expected.timeout = .seconds(3600)
        expected.memory = 2_000_000_000
        expected.outputSize = 10_000_000_000
        expected.frames = 50
        expected.duration = .seconds(3 * 3600)
        #expect(config.settings.limits == expected)
        expected.pixels = 50_000_000
        expected.cpuTime = .seconds(90)
        #expect(config.rules[0].limits == expected)
        #expect(config.settings.niceness == 19)
        #expect(config.settings.ioPriority == .idle)
        let defaults = try parsed(yaml())
        #expect(defaults.rules[0].limits == JobLimits())
        #expect(defaults.settings.niceness == 10)
        #expect(defaults.settings.ioPriority == .bestEffort(7))
    }

    @Test func badLimitsAreErrorsAtTheirValue() {
        #expect(
            problems(
                yaml(
                    rule: standardRule + ["memoryLimit: 10MB", "cpuTimeLimit: 200ms", "maxFrames: 0"],
                    tail: ["settings:", "  niceness: 20", "  ioPriority: realtime"]
                )
            )
                == [
                    "rules.yaml:8:18: 'memoryLimit' must be at least 100MB, which a worker needs for itself",
                    "rules.yaml:9:19: 'cpuTimeLimit' must be at least 1s",
                    "rules.yaml:10:16: 'maxFrames' must be a whole number greater than 0, found 0",
                    "rules.yaml:12:13: 'niceness' must be between 0 and 19, found 20",
                    "rules.yaml:13:15: expected idle or a level from 0 to 7 for 'ioPriority', found 'realtime'",
                ]
        )
    }

    @Test func readsSourcePoliciesAndQuarantine() throws {
        let moved = try parsed(yaml(rule: standardRule + ["source: move", "doneFolder: done", "quarantine: failed"]))
        #expect(moved.rules[0].sourcePolicy == .move(to: base.appending("done")))
        #expect(moved.rules[0].quarantine == base.appending("failed"))
        #expect(try parsed(yaml(rule: standardRule + ["source: delete"])).rules[0].sourcePolicy == .delete)
        let defaults = try parsed(yaml())
        #expect(defaults.rules[0].sourcePolicy == .keep)
        #expect(defaults.rules[0].quarantine == nil)
    }

    @Test func sourcePolicyMistakesAreErrors() {
        #expect(
            problems(yaml(rule: standardRule + ["source: move"]))
                == ["rules.yaml:8:13: 'source: move' needs 'doneFolder', the folder the sources are moved to"]
        )
        #expect(
            problems(yaml(rule: standardRule + ["source: keep", "doneFolder: done"]))
                == ["rules.yaml:9:17: 'doneFolder' is only used with 'source: move'"]
        )
        #expect(
            problems(yaml(rule: standardRule + ["source: shred"]))
                == ["rules.yaml:8:13: unknown value 'shred' for 'source'; expected one of: keep, move, delete"]
        )
    }

    @Test func readsMarkerSuffixes() throws {
        let config = try parsed(
            yaml(
                watch: [
                    "watch:", "  - path: inbox", "    doneSuffix: .done", "    lockSuffix: .lock",
                    "    allowHardLinks: true", "    incompleteTimeout: 30s",
                ]
            )
        )
        #expect(config.watches[0].allowHardLinks)
        #expect(try !parsed(yaml()).watches[0].allowHardLinks)
        #expect(config.watches[0].incompleteTimeout == .seconds(30))
        #expect(try parsed(yaml()).watches[0].incompleteTimeout == nil)
        #expect(config.watches[0].doneSuffix == ".done")
        #expect(config.watches[0].lockSuffix == ".lock")
        #expect(
            problems(yaml(watch: ["watch:", "  - path: inbox", "    doneSuffix: done", "    lockSuffix: a/.b"]))
                == [
                    "rules.yaml:3:17: expected a file name suffix that starts with a dot, such as \".done\", for "
                        + "'doneSuffix', found 'done'",
                    "rules.yaml:4:17: expected a file name suffix that starts with a dot, such as \".done\", for "
                        + "'lockSuffix', found 'a/.b'",
                ]
        )
    }
}

/// `notify:` at the top level and in a rule, `settings.digestAt` and `settings.digestEvery`.
@Suite struct NotifyConfigTests {
    @Test func readsTheListsWithFailedAsTheDefaultEventAndARuleListReplacingTheTopLevelOne() throws {
        let config = try parsed(
            yaml(
                rule: standardRule + ["notify: []"],
                tail: [
                    "  - name: clips", "    match: \"*.mov\"", "    to: mp4", "    output: out",
                    "    notify:", "      - ntfy: https://ntfy.sh/chute-alerts", "        on: [failed, digest]",
                    "notify:", "  - url: http://nas.local:8080/hook", "    on: [Failed, completed]",
                    "  - ntfy: http://ntfy.local/chute", "settings:", "  digestAt: \"7:30\"", "  digestEvery: 6h",
                ]
            )
        )
        let hook = NotifyTarget(kind: .webhook, url: "http://nas.local:8080/hook", events: [.failed, .completed])
        let topic = NotifyTarget(kind: .ntfy, url: "http://ntfy.local/chute", events: [.failed])
        let alerts = NotifyTarget(kind: .ntfy, url: "https://ntfy.sh/chute-alerts", events: [.failed, .digest])
        #expect(config.notify == [hook, topic])
        #expect(config.rules[0].notify == [])
        #expect(config.notifyTargets(forRule: "photos").isEmpty)
        #expect(config.notifyTargets(forRule: "clips") == [alerts])
        #expect(config.notifyTargets(forRule: "a rule since removed") == [hook, topic])
        #expect(config.allNotifyTargets == [hook, topic, alerts])
        #expect(config.settings.digest == DigestSchedule(hour: 7, minute: 30, every: .seconds(6 * 3600)))
        #expect(try parsed(yaml()).settings.digest == DigestSchedule(hour: 8, minute: 0, every: nil))
    }

    @Test func badEntriesAreErrorsAtTheirLine() {
        #expect(
            problems(
                yaml(tail: [
                    "notify:", "  - url: ftp://nas.local/hook", "  - ntfy: http://user:pw@/topic?key=secret",
                    "  - url: http://a.local/x", "    on: [failed, finished]", "  - url: http://a.local/x",
                    "    ntfy: http://b.local/y", "  - on: failed", "  - url: http://a.local/x", "    when: failed",
                    "settings:", "  digestAt: \"25:00\"", "  digestEvery: 0s",
                ])
            ) == [
                "rules.yaml:9:10: invalid URL 'ftp://nas.local/hook' for 'url': expected an http:// or https:// URL, "
                    + "found a 'ftp' URL",
                "rules.yaml:10:11: invalid URL 'http:///topic' for 'ntfy': the URL has no host",
                "rules.yaml:12:18: unknown event 'finished' for 'on'; expected one of: failed, completed, cancelled, "
                    + "digest",
                "rules.yaml:14:5: a notify entry has 'url' (a webhook) or 'ntfy' (a topic), not both",
                "rules.yaml:15:5: missing 'url' (a webhook) or 'ntfy' (a topic) in notify entry 5",
                "rules.yaml:17:5: unknown key 'when' in notify entry 6; allowed keys: url, ntfy, on",
                "rules.yaml:19:13: expected a time of day as HH:MM (24-hour clock), such as \"08:00\", for "
                    + "'digestAt', found '25:00'",
                "rules.yaml:20:16: 'digestEvery' must be at least 1s",
            ]
        )
    }

    @Test func theDigestIsDueAtTheNextDigestAtOrAfterDigestEvery() throws {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "Europe/Paris"))
        func date(_ day: Int, _ hour: Int, _ minute: Int, _ second: Int = 0) throws -> Date {
            try #require(
                calendar.date(
                    from: DateComponents(year: 2026, month: 3, day: day, hour: hour, minute: minute, second: second)
                )
            )
        }
        let daily = DigestSchedule()
        #expect(daily.next(after: try date(10, 7, 59, 30), calendar: calendar) == (try date(10, 8, 0)))
        #expect(daily.next(after: try date(10, 8, 0), calendar: calendar) == (try date(11, 8, 0)))
        // Paris moves its clocks forward at 02:00 on 29 March 2026: a 02:30 digest comes at 03:00 that day.
        let night = DigestSchedule(hour: 2, minute: 30)
        #expect(night.next(after: try date(29, 1, 0), calendar: calendar) == (try date(29, 3, 0)))
        let often = DigestSchedule(every: .seconds(2))
        #expect(often.next(after: try date(10, 7, 0), calendar: calendar) == (try date(10, 7, 0, 2)))
        // Every 5 hours from 08:00: 13:00, 18:00, 23:00, 04:00, then 08:00 again rather than 09:00.
        let fiveHours = DigestSchedule(every: .seconds(5 * 3600))
        #expect(fiveHours.next(after: try date(10, 9, 0), calendar: calendar) == (try date(10, 13, 0)))
        #expect(fiveHours.next(after: try date(10, 23, 30), calendar: calendar) == (try date(11, 4, 0)))
        #expect(fiveHours.next(after: try date(11, 5, 0), calendar: calendar) == (try date(11, 8, 0)))
        #expect(often.period == .seconds(2) && daily.period == .seconds(86_400))
        #expect(DigestSchedule.timeOfDay("08:00")! == (8, 0) && DigestSchedule.timeOfDay("8:5") == nil)
    }

    @Test func theURLLosesItsCredentialsAndQueryInTheLog() {
        let target = NotifyTarget(kind: .webhook, url: "https://chute:s3cret@nas.local:8443/hook?token=abc#x")
        #expect(target.redactedURL == "https://nas.local:8443/hook")
    }
}

/// `settings.store`: the journal, or a PostgreSQL database whose password never is in its address.
@Suite struct StoreConfigTests {
    @Test func readsAPostgresAddressAndItsPasswordFile() throws {
        #expect(try parsed(yaml()).settings.store == .journal)
        let config = try parsed(
            yaml(tail: [
                "settings:", "  store: postgresql://agent@10.0.0.5/chute?sslmode=disable",
                "  storePasswordFile: secrets/db",
            ])
        )
        #expect(
            config.settings.store
                == .postgres(
                    PostgresLocation(
                        host: "10.0.0.5",
                        user: "agent",
                        database: "chute",
                        encryption: .disable,
                        passwordFile: "/srv/chute/secrets/db"
                    )
                )
        )
        let socket = try PostgresLocation.parse("postgres://chute@/jobs?host=/run/postgresql").get()
        #expect(socket.isUnixSocket && socket.socketPath == "/run/postgresql/.s.PGSQL.5432")
    }

    @Test(arguments: [
        (
            "postgres://chute:hunter2@db/chute",
            "rules.yaml:9:10: the store's address must not carry a password, which anyone reading the rules file or "
                + "ps would see: put it in a file named by 'storePasswordFile', or in CHUTE_STORE_PASSWORD"
        ),
        (
            "mysql://chute@db/chute",
            "rules.yaml:9:10: expected 'sqlite' or a PostgreSQL address such as postgres://chute@db.lan:5432/chute, "
                + "found 'mysql://chute@db/chute'"
        ),
        ("postgres://db/chute", "rules.yaml:9:10: the store's address names no user: postgres://USER@HOST/DATABASE"),
        (
            "postgres://chute@db",
            "rules.yaml:9:10: the store's address names no database: postgres://USER@HOST/DATABASE"
        ),
        (
            "postgres://chute@db/chute?sslmode=verify-full",
            "rules.yaml:9:10: sslmode must be one of disable, prefer, require, not 'verify-full'"
        ),
    ])
    func refusesAnAddressItCannotUse(address: String, issue: String) {
        #expect(problems(yaml(tail: ["settings:", "  store: \(address)"])) == [issue])
    }

    @Test func aPasswordFileNeedsADatabase() {
        #expect(
            problems(yaml(tail: ["settings:", "  storePasswordFile: db.pass"]))
                == ["rules.yaml:9:3: 'storePasswordFile' is for a PostgreSQL store (store: postgres://…)"]
        )
        for key in ["agent: nas-2", "agentLease: 10s", "watch: false", "agentURL: http://nas.lan:8750"] {
            let issues = problems(yaml(tail: ["settings:", "  \(key)"]))
            #expect(
                issues.count == 1 && issues[0].contains("PostgreSQL store")
                    && issues[0].contains("(store: postgres://…)"),
                "\(issues)"
            )
        }
        #expect(
            problems(yaml(tail: ["settings:", "  store: postgres://c@db/c", "  agent: two words", "  agentLease: 1s"]))
                == [
                    "rules.yaml:10:10: 'agent' must be a name of 1 to 63 characters without spaces",
                    "rules.yaml:11:15: 'agentLease' must be 3s or longer",
                ]
        )
        #expect(
            problems(yaml(tail: ["settings:", "  store: postgres://c@db/c", "  agentURL: https://nas.lan/chute"]))
                == [
                    "rules.yaml:10:13: 'agentURL' must be http://HOST:PORT, where other agents reach this agent's API "
                        + "(settings.api.listen), found 'https://nas.lan/chute'"
                ]
        )
    }

    @Test func aHookIsAProgramByItsPathWithItsArguments() throws {
        let config = try parsed(yaml(rule: standardRule + ["run: [/usr/bin/logger, -t, chute]"]))
        #expect(
            config.rules[0].hook
                == RuleHook(command: ["/usr/bin/logger", "-t", "chute"], events: [.completed], timeout: .seconds(60))
        )
        let mapped = try parsed(
            yaml(rule: standardRule + ["run: {command: [/usr/bin/true], on: failed}", "runTimeout: 5s"])
        )
        #expect(mapped.rules[0].hook == RuleHook(command: ["/usr/bin/true"], events: [.failed], timeout: .seconds(5)))
        #expect(
            problems(yaml(rule: standardRule + ["run: [logger, -t, chute]"]))
                == [
                    "rules.yaml:8:10: 'run': the program 'logger' must be an absolute path: a hook runs without a "
                        + "shell or a PATH lookup, such as [/usr/local/bin/index, --quiet]"
                ]
        )
        #expect(
            problems(yaml(rule: standardRule + ["runTimeout: 5s"])) == [
                "rules.yaml:8:5: 'runTimeout' is only used with 'run' or 'pre'"
            ]
        )
        #expect(
            problems(yaml(rule: standardRule + ["run: {command: [/usr/bin/true], on: digest}"]))
                == ["rules.yaml:8:41: a hook runs after a job: 'on' takes completed, failed or cancelled"]
        )
        #expect(
            problems(yaml(rule: standardRule + ["run: []"])) == [
                "rules.yaml:8:10: 'run' must list at least one program"
            ]
        )
    }

    @Test func aPreHookIsACommandToo() throws {
        let pre = try parsed(yaml(rule: standardRule + ["pre: [/usr/local/bin/triage, --strict]", "runTimeout: 9s"]))
        #expect(
            pre.rules[0].preHook
                == RuleHook(command: ["/usr/local/bin/triage", "--strict"], events: [], timeout: .seconds(9))
        )
        #expect(pre.rules[0].hook == nil)
        #expect(
            problems(yaml(rule: standardRule + ["pre: triage"]))
                == ["rules.yaml:8:10: expected a list of a program and its arguments for 'pre', found string 'triage'"]
        )
    }

    @Test func checkWarnsOfAHookThatCannotRun() throws {
        let missing = try parsed(yaml(rule: standardRule + ["run: [/nonexistent/index, --quiet]"]))
        #expect(
            ConfigSummary.warnings(missing, registry: Engines.registry) == [
                "warning: rule 'photos': 'run' names /nonexistent/index, which cannot be run (No such file or "
                    + "directory): its hook would fail after every job"
            ]
        )
        let present = try parsed(yaml(rule: standardRule + ["run: [/bin/true]"]))
        #expect(ConfigSummary.warnings(present, registry: Engines.registry).isEmpty)
    }

    @Test func checkWarnsOfAPasswordFileItCannotRead() throws {
        let config = try parsed(
            yaml(tail: ["settings:", "  store: postgres://c@db/c", "  storePasswordFile: /nonexistent/db.pass"])
        )
        #expect(
            ConfigSummary.warnings(config, registry: Engines.registry).contains(
                "warning: 'storePasswordFile: /nonexistent/db.pass' cannot be read (No such file or directory): the "
                    + "daemon would not reach the database"
            )
        )
    }

    @Test func thePasswordComesFromItsFileOrTheEnvironment() throws {
        let directory = try TemporaryDirectory(prefix: "store-password")
        defer { directory.remove() }
        try "s3cret\nignored\n".write(toFile: directory.appending("pass").string, atomically: true, encoding: .utf8)
        var location = try PostgresLocation.parse("postgres://chute@db/chute").get()
        #expect(try location.password(environment: ["CHUTE_STORE_PASSWORD": "from-env"]) == "from-env")
        #expect(try location.password(environment: [:]) == nil)
        location.passwordFile = directory.appending("pass")
        #expect(try location.password(environment: ["CHUTE_STORE_PASSWORD": "from-env"]) == "s3cret")
        location.passwordFile = directory.appending("missing")
        #expect(throws: StoreLocationError.self) { try location.password(environment: [:]) }
    }
}
