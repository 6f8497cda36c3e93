import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Converts the shared real-world corpus (`../shared/corpus` beside the repository) through the real
/// `chute convert`, one process per file, so that a crash or a hang in a C library costs one row, not the suite.
///
/// Every `video/` row becomes an MP4 and every `audio/` row an MP3; `broken/` rows that are video or audio (by
/// extension) go to the same targets. The manifest's `expect` column decides: `ok` must convert (and `ffprobe` must
/// read the result), `fail` must be refused with a ``ConversionFailure`` and leave nothing behind, `warn` may go
/// either way but must do one of the two.
@Suite struct CorpusTests {
    /// The audio and video extensions among `broken/`.
    static let mediaExtensions: Set<String> = [
        "mp4", "m4a", "m4b", "mov", "mkv", "webm", "avi", "flv", "ts", "mpg", "ogg", "ogv", "opus", "mp3", "flac",
        "wav", "aiff", "aac", "amr", "ac3", "wma", "wmv", "ape", "wv", "mpc", "dsf", "3gp",
    ]

    /// Rows marked `ok` that FFmpeg 5.1 itself cannot read in full; Chute must refuse them cleanly instead.
    static let beyondFFmpeg51: [String: String] = [
        "audio/flac_32bit.flac": "FFmpeg 5.1's FLAC decoder has no 32-bit support (added in 6.0) and yields nothing",
        "audio/wma_v2.wma": "FFmpeg 5.1's ASF demuxer reads 0.19 s of its 2.14 s; Chute refuses it as truncated",
    ]

    /// A conversion that does not finish in this time counts as a hang.
    static let timeoutSeconds = 180

    @Test(
        .enabled(if: Corpus.isPresent, "the shared corpus (../shared/corpus/MANIFEST.tsv) is absent"),
        .timeLimit(.minutes(30))
    )
    func everyMediaRowMeetsItsExpectation() async throws {
        let rows = try Corpus.rows()
        let directory = try TemporaryDirectory(prefix: "media-corpus")
        defer { directory.remove() }
        var counts = (converted: 0, refused: 0, warnConverted: 0, warnRefused: 0, beyond: 0)

        for (index, row) in rows.enumerated() {
            let path = row.path
            let expect = row.expect
            let fileExtension = FilePath(path).extension?.lowercased() ?? ""
            let isMedia =
                path.hasPrefix("video/") || path.hasPrefix("audio/")
                || (path.hasPrefix("broken/") && Self.mediaExtensions.contains(fileExtension))
            guard isMedia else { continue }
            let target =
                path.hasPrefix("video/") || ["mp4", "mov", "mkv", "webm", "avi", "flv"].contains(fileExtension)
                ? "mp4" : "mp3"
            let output = directory.appending("\(index).\(target)")
            let input = Corpus.folder.appending(path)
            let outcome = try await onOwnThread { try Self.convert(input, to: output) }
            let leftovers = directory.files().filter { $0.hasPrefix(".chute-") }
            #expect(leftovers.isEmpty, "\(path) left temporary files: \(leftovers)")

            switch (expect, outcome) {
            case (_, .hung):
                Issue.record("\(path) did not finish within \(Self.timeoutSeconds) s")
            case (_, .crashed(let status, let log)):
                Issue.record("\(path) ended with status \(status) instead of a result or a refusal:\n\(log)")
            case (_, .refused(let code, let message)) where code == "workerCrashed" || code == "timedOut":
                Issue.record("\(path): the worker did not survive it (\(code)): \(message)")
            case ("ok", .converted) where Self.beyondFFmpeg51[path] == nil:
                let probe = try MediaFixtures.probe(output)
                #expect(!probe.streams("video").isEmpty || !probe.streams("audio").isEmpty, "\(path)")
                counts.converted += 1
            case ("ok", .refused(let code, let message)) where Self.beyondFFmpeg51[path] != nil:
                #expect(!output.exists, "\(path) left an output behind")
                print(
                    "corpus: \(path) refused as expected on FFmpeg 5.1 (\(code): \(message)); \(Self.beyondFFmpeg51[path]!)"
                )
                counts.beyond += 1
            case ("ok", _):
                Issue.record("\(path) should convert: \(outcome)")
            case ("fail", .refused(_, let message)):
                #expect(!output.exists, "\(path) left an output behind")
                #expect(!message.isEmpty, "\(path)")
                counts.refused += 1
            case ("fail", .converted):
                Issue.record("\(path) should be refused but converted")
            case (_, .converted):
                counts.warnConverted += 1
            case (_, .refused):
                #expect(!output.exists, "\(path) left an output behind")
                counts.warnRefused += 1
            }
        }

        print(
            "media corpus: \(counts.converted) ok rows converted, \(counts.refused) fail rows refused, "
                + "\(counts.warnConverted + counts.warnRefused) warn rows (\(counts.warnConverted) converted, "
                + "\(counts.warnRefused) refused), \(counts.beyond) ok rows refused because FFmpeg 5.1 cannot read them"
        )
        #expect(counts.converted > 0)
        #expect(counts.refused > 0)
    }

    /// What `chute convert` did with one file.
    enum Outcome: CustomStringConvertible {
        case converted
        /// Refused with a ``ConversionFailure``: its code and message, as `chute convert` prints them.
        case refused(code: String, message: String)
        case crashed(status: Int32, log: String)
        case hung

        var description: String {
            switch self {
            case .converted: return "converted"
            case .refused(let code, let message): return "refused (\(code)): \(message)"
            case .crashed(let status, let log): return "status \(status): \(log)"
            case .hung: return "hung"
            }
        }
    }

    /// Runs `chute convert INPUT OUTPUT` with a job limit of ``timeoutSeconds``, under `timeout`, which kills it
    /// (SIGKILL, status 137) if it outlives that by half a minute.
    static func convert(_ input: FilePath, to output: FilePath) throws -> Outcome {
        let result = try CommandLineTool.run(
            [
                // chute's own limit reports a slow job as `timedOut`; the outer one catches chute itself hanging.
                "timeout", "--signal=KILL", String(Self.timeoutSeconds + 30), ChuteProcess.executable.string,
                "convert", "--timeout", String(Self.timeoutSeconds), "--log-level", "error", input.string,
                output.string,
            ],
            check: false
        )
        let lastLine = result.standardError.split(separator: "\n").last.map(String.init) ?? ""
        switch result.status {
        case 0:
            return .converted
        case 1 where lastLine.hasPrefix("chute convert: ") && lastLine.hasSuffix(")"):
            // "chute convert: MESSAGE (CODE)", where CODE is a ConversionFailure.Code.
            guard let open = lastLine.lastIndex(of: "("),
                let code = ConversionFailure.Code(rawValue: String(lastLine[lastLine.index(after: open)...].dropLast()))
            else {
                return .crashed(status: 1, log: result.standardError)
            }
            let message = String(lastLine.dropFirst("chute convert: ".count)[..<open])
            return .refused(code: code.rawValue, message: message.trimmingCharacters(in: .whitespaces))
        case 137:
            return .hung
        default:
            return .crashed(status: result.status, log: result.standardError)
        }
    }
}

extension FilePath {
    /// Whether a file exists at the path.
    var exists: Bool { FileManager.default.fileExists(atPath: self.string) }
}
