import Foundation
import SystemPackage

/// PDFs written by hand at test time: plain PDF 1.4 with a page of Helvetica text per string, whose text
/// `pdftotext` extracts, and optionally a document information dictionary and an XMP packet.
package enum PDFFixtures {
    /// Metadata to put in a fixture.
    package struct Metadata: Sendable {
        /// The Info dictionary's `/Title` and `/Author`, and the same in an XMP packet of the catalog.
        package var title: String
        package var author: String

        package init(title: String, author: String) {
            self.title = title
            self.author = author
        }
    }

    /// A PDF with one page per string of `pages`, each showing its string (with `filler` more lines of
    /// repeated text, kept uncompressed so that `compress` has something to shrink).
    ///
    /// - Parameters:
    ///   - pages: the text of each page; ASCII letters, digits and spaces.
    ///   - metadata: the title and author to record in Info and XMP, or `nil` for neither.
    ///   - filler: lines of repeated text added under each page's text.
    package static func make(pages: [String], metadata: Metadata? = nil, filler: Int = 0) -> [UInt8] {
        var objects: [String] = []
        let firstPage = 4
        let kids = pages.indices.map { "\(firstPage + 2 * $0) 0 R" }.joined(separator: " ")
        let extra = firstPage + 2 * pages.count
        let catalogMetadata = metadata == nil ? "" : " /Metadata \(extra + 1) 0 R"
        objects.append("<< /Type /Catalog /Pages 2 0 R\(catalogMetadata) >>")
        objects.append("<< /Type /Pages /Kids [\(kids)] /Count \(pages.count) >>")
        objects.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
        for (index, text) in pages.enumerated() {
            var content = "BT /F1 24 Tf 72 720 Td (\(text)) Tj ET\n"
            for line in 0..<filler {
                content += "BT /F1 8 Tf 72 \(700 - (line % 80) * 8) Td (filler line of repeated words) Tj ET\n"
            }
            objects.append(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
                    + "/Contents \(firstPage + 2 * index + 1) 0 R >>"
            )
            objects.append("<< /Length \(content.utf8.count) >>\nstream\n\(content)endstream")
        }
        var trailerInfo = ""
        if let metadata {
            objects.append("<< /Title (\(metadata.title)) /Author (\(metadata.author)) /Producer (Chute fixtures) >>")
            let packet = """
                <?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?>
                <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
                <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">
                <dc:title><rdf:Alt><rdf:li xml:lang="x-default">\(metadata.title)</rdf:li></rdf:Alt></dc:title>
                <dc:creator><rdf:Seq><rdf:li>\(metadata.author)</rdf:li></rdf:Seq></dc:creator>
                </rdf:Description></rdf:RDF></x:xmpmeta>
                <?xpacket end="w"?>
                """
            objects.append(
                "<< /Type /Metadata /Subtype /XML /Length \(packet.utf8.count) >>\nstream\n\(packet)\nendstream"
            )
            trailerInfo = " /Info \(extra) 0 R"
        }
        var file = "%PDF-1.4\n%\u{E2}\u{E3}\u{CF}\u{D3}\n"
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(file.utf8.count)
            file += "\(index + 1) 0 obj\n\(object)\nendobj\n"
        }
        let xref = file.utf8.count
        file += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets {
            file += String(format: "%010d 00000 n \n", offset)
        }
        file += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R\(trailerInfo) >>\nstartxref\n\(xref)\n%%EOF\n"
        return Array(file.utf8)
    }

    /// Writes ``make(pages:metadata:filler:)`` to `path`.
    package static func write(
        at path: FilePath,
        pages: [String],
        metadata: Metadata? = nil,
        filler: Int = 0
    ) throws {
        try Data(Self.make(pages: pages, metadata: metadata, filler: filler)).write(
            to: URL(fileURLWithPath: path.string)
        )
    }

    /// A PDF of one page of `points` (width, height) filled by one image: `data` is the image's stream, a JPEG file
    /// (`filter` `/DCTDecode`) or raw 8-bit samples (`filter` `nil`), `width` × `height` pixels of grey or RGB.
    /// A scanner's output, in effect: its resolution is the pixels over the page's size in inches.
    package static func imagePage(
        _ data: [UInt8],
        filter: String?,
        width: Int,
        height: Int,
        gray: Bool,
        points: (width: Int, height: Int)
    ) -> [UInt8] {
        let content = "q \(points.width) 0 0 \(points.height) 0 0 cm /Scan Do Q"
        let image =
            "<< /Type /XObject /Subtype /Image /Width \(width) /Height \(height) /ColorSpace "
            + "\(gray ? "/DeviceGray" : "/DeviceRGB") /BitsPerComponent 8"
            + (filter.map { " /Filter \($0)" } ?? "") + " /Length \(data.count) >>\nstream\n"
        let objects: [[UInt8]] = [
            Array("<< /Type /Catalog /Pages 2 0 R >>".utf8),
            Array("<< /Type /Pages /Kids [3 0 R] /Count 1 >>".utf8),
            Array(
                ("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 \(points.width) \(points.height)] "
                    + "/Resources << /XObject << /Scan 5 0 R >> >> /Contents 4 0 R >>").utf8
            ),
            Array("<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream".utf8),
            Array(image.utf8) + data + Array("\nendstream".utf8),
        ]
        var file = Array("%PDF-1.4\n%\u{E2}\u{E3}\u{CF}\u{D3}\n".utf8)
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(file.count)
            file += Array("\(index + 1) 0 obj\n".utf8) + object + Array("\nendobj\n".utf8)
        }
        let xref = file.count
        var table = "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets {
            table += String(format: "%010d 00000 n \n", offset)
        }
        table += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return file + Array(table.utf8)
    }
}
