import ChutePDF
import Foundation

/// `chute-pdf-merge OUTPUT INPUT...`: appends every page of the inputs, in order, into one PDF, with the PDF
/// engine's ``PDFDocument/appendAllPages(of:)``; Benchmarks/pdf.sh times it against `qpdf --empty --pages`.
let arguments = CommandLine.arguments.dropFirst()
guard arguments.count >= 2, let output = arguments.first else {
    FileHandle.standardError.write(Data("usage: chute-pdf-merge OUTPUT INPUT...\n".utf8))
    exit(2)
}
do {
    let inputs = try arguments.dropFirst().map { path in
        try PDFDocument(reading: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), password: nil)
    }
    let merged = try PDFDocument()
    try merged.appendAllPages(of: inputs)
    try Data(try merged.write(PDFDocument.WriteSettings())).write(to: URL(fileURLWithPath: output))
} catch {
    FileHandle.standardError.write(Data("chute-pdf-merge: \(error)\n".utf8))
    exit(1)
}
