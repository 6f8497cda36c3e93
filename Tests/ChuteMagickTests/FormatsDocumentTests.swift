import ChuteCatalog
import ChuteCore
import ChuteMagick
import Foundation
import Testing

/// `docs/formats.md` and the code agree: every image target is a row with its name, aliases and writing coder, and
/// the coders that read are exactly the image engine's decoders.
@Suite struct FormatsDocumentTests {
    /// One row of the table: the `to:` name and aliases (empty for read-only formats), and the reading and writing
    /// coders (`nil` for a read-only format's writer).
    private struct Row: Equatable {
        var names: [String]
        var readCoder: String
        var writeCoder: String?
    }

    /// The table's rows, from the file beside the sources.
    private static func rows() throws -> [Row] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let file = try String(contentsOf: root.appendingPathComponent("docs/formats.md"), encoding: .utf8)
        // The image part, before the video and audio formats (and the document formats after them).
        let text = file[..<(file.range(of: "# Video and audio formats")?.lowerBound ?? file.endIndex)]
        let lines = text.split(separator: "\n").filter { $0.hasPrefix("| ") && !$0.hasPrefix("| format") }
        return lines.compactMap { line in
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 6 else { return nil }
            // `jpg` (`jpeg`): every name between backquotes.
            let names = cells[1].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter {
                $0.offset % 2 == 1
            }.map {
                String($0.element)
            }
            let coders = cells[5].split(separator: "/").map { $0.trimmingCharacters(in: .whitespaces) }
            guard coders.count == 2 else { return nil }
            return Row(names: names, readCoder: coders[0], writeCoder: coders[1] == "–" ? nil : coders[1])
        }
    }

    @Test func everyImageTargetHasItsRowWithItsCoderAndAliases() throws {
        let rows = try Self.rows()
        let targets = Engines.image.formats.filter { !$0.followsInput }
        #expect(rows.filter { $0.writeCoder != nil }.count == targets.count)
        for target in targets {
            let row = rows.first { $0.names.first == target.name }
            #expect(row?.writeCoder == target.coder, "\(target.name)")
            #expect(Set(row?.names.dropFirst() ?? []) == Set(target.aliases), "the aliases of \(target.name)")
        }
    }

    @Test func theReadingCodersAreTheEnginesDecodersAndTheRawOnes() throws {
        let documented = Set(try Self.rows().map(\.readCoder))
        let raw = Set(RawPixelLayout.Samples.allCases.map(\.coder))
        #expect(documented == Set(ImageOptions.decoders.values).union(raw))
    }
}
