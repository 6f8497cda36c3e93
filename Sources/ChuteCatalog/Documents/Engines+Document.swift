import ChuteCore

extension EngineKind {
    /// The document engine's lane.
    package static let document = EngineKind(rawValue: "document")
}

extension Engines {
    /// The document engine: LibreOffice, one job per core by default, writing PDF, DOCX, ODT, RTF, HTML and TXT.
    package static let document = EngineDescriptor(
        kind: .document,
        library: "LibreOffice (LibreOfficeKit, in the worker process)",
        reads: [.document],
        concurrency: .perCore,
        formats: [
            TargetFormat(name: "docx", category: .document, engine: .document, coder: "docx"),
            TargetFormat(name: "odt", category: .document, engine: .document, coder: "odt"),
            TargetFormat(name: "rtf", category: .document, engine: .document, coder: "rtf"),
            TargetFormat(name: "html", aliases: ["htm"], category: .document, engine: .document, coder: "html"),
            TargetFormat(name: "txt", aliases: ["text"], category: .document, engine: .document, coder: "txt"),
        ],
        options: [CommonOptions.password.spec],
        // `pdf` is the PDF engine's format, which it writes from PDFs; documents become PDFs here.
        alsoWrites: [EngineDescriptor.AlsoWrites(["pdf"], from: [.document], options: [CommonOptions.password.key])],
        worker: "chute-document-worker"
    )
}
