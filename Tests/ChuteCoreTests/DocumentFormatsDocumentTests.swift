import ChuteApp
import ChuteCatalog
import ChuteCore
import Foundation
import Testing

/// docs/formats.md's document table names every format the document engine writes, with its aliases, and no other.
@Suite struct DocumentFormatsDocumentTests {
    @Test func theDocumentTableListsTheDocumentEnginesFormats() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/formats.md"), encoding: .utf8)
        let part = try #require(text.range(of: "# Document formats")).upperBound
        let end = text[part...].range(of: "\n# ")?.lowerBound ?? text.endIndex
        let written: [[String]] = text[part..<end].split(separator: "\n").filter {
            $0.hasPrefix("| ") && !$0.hasPrefix("| format") && !$0.hasPrefix("| ---")
        }.compactMap { line in
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            // `html` (`htm`): every name between backquotes; "–" for a format that is only read.
            let names = cells[1].split(separator: "`", omittingEmptySubsequences: false).enumerated().filter {
                $0.offset % 2 == 1
            }.map { String($0.element) }
            return names.isEmpty ? nil : names
        }
        let engine = try #require(Engines.registry.engines.first { $0.kind.rawValue == "document" })
        // `pdf` is the PDF engine's format, which the document engine also writes (from documents).
        let alsoWritten = engine.alsoWrites.flatMap(\.formats).map { [$0] }
        #expect(written == alsoWritten + engine.formats.map { [$0.name] + $0.aliases })
    }
}
