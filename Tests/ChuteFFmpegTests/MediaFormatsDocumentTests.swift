import ChuteCore
import Foundation
import Testing

@testable import ChuteCatalog
@testable import ChuteFFmpeg

/// `docs/formats.md` and the code agree: every video and audio target is a row with its name, aliases, muxer and
/// the codecs its profile holds, in order.
@Suite struct MediaFormatsDocumentTests {
    /// One row: the `to:` name and aliases, the muxer, and the codec columns as written.
    private struct Row {
        var names: [String]
        var muxer: String
        var codecs: [String]
    }

    /// The rows of the table under `## <heading>` in the video and audio part of the file.
    private static func rows(under heading: String) throws -> [Row] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/formats.md"), encoding: .utf8)
        let part = try #require(text.range(of: "# Video and audio formats")).upperBound
        let start = try #require(text.range(of: "## \(heading)\n", range: part..<text.endIndex)).upperBound
        let section = text[start...].split(separator: "\n## ", maxSplits: 1).first ?? ""
        return section.split(separator: "\n").filter {
            $0.hasPrefix("| ") && !$0.hasPrefix("| format") && !$0.hasPrefix("| ---")
        }.map { line in
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let names = cells[1].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter {
                $0.offset % 2 == 1
            }.map { String($0.element) }
            // The codec columns: "h264, hevc", or "pcm (s16le, s24le)" for PCM.
            let codecs = cells[3..<(heading == "Video" ? 5 : 4)].map { cell in
                cell.hasPrefix("pcm") ? "pcm" : cell
            }
            return Row(names: names, muxer: cells[2], codecs: codecs)
        }
    }

    @Test(arguments: ["Video", "Audio"])
    func everyTargetHasItsRowWithItsMuxerAliasesAndCodecs(heading: String) throws {
        let rows = try Self.rows(under: heading)
        let descriptor = heading == "Video" ? Engines.video : Engines.audio
        #expect(rows.count == descriptor.formats.count)
        for format in descriptor.formats {
            let row = try #require(rows.first { $0.names.first == format.name }, "\(format.name) has no row")
            #expect(row.muxer == format.coder, "the muxer of \(format.name)")
            #expect(Set(row.names.dropFirst()) == Set(format.aliases), "the aliases of \(format.name)")
            let profile = TargetProfile(format)
            var codecs = profile.audioCodecs.map(\.rawValue).joined(separator: ", ")
            if codecs.isEmpty {
                codecs = "pcm"
            }
            if profile.isVideo {
                #expect(row.codecs == [profile.videoCodecs.map(\.rawValue).joined(separator: ", "), codecs])
            } else {
                #expect(row.codecs == [codecs], "the codec of \(format.name)")
            }
        }
    }
}
