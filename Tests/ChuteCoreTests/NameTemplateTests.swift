import ChuteApp
import ChuteCatalog
import ChuteCore
import Testing

@Suite struct NameTemplateTests {
    private let jpg = Engines.registry.format(named: "jpg")!

    @Test func defaultKeepsTheStemAndUsesTheTargetExtension() {
        #expect(NameTemplate.default.template == "{stem}.{ext}")
        #expect(
            NameTemplate.default.render(sourceName: "IMG_1.HEIC", format: self.jpg, rule: "r", date: "") == "IMG_1.jpg"
        )
    }

    @Test func fillsEveryPlaceholder() throws {
        let template = try NameTemplate("{date}-{rule}-{name}.{sourceExt}.{ext}")
        let name = template.render(sourceName: "IMG_1.HEIC", format: self.jpg, rule: "photos", date: "2024-05-01")
        #expect(name == "2024-05-01-photos-IMG_1.HEIC.heic.jpg")
        let stem = try NameTemplate("small-{stem}")
        #expect(stem.render(sourceName: "clip.final.mkv", format: self.jpg, rule: "r", date: "") == "small-clip.final")
    }

    @Test func splitsAtTheLastDotOnly() {
        #expect(NameTemplate.split("IMG_1.HEIC") == ("IMG_1", "HEIC"))
        #expect(NameTemplate.split("archive.tar.gz") == ("archive.tar", "gz"))
        #expect(NameTemplate.split("README") == ("README", ""))
        #expect(NameTemplate.split(".profile") == (".profile", ""))
    }

    @Test(
        arguments: [
            (
                "{stem}.{extension}",
                "unknown placeholder {extension}; known: {stem}, {ext}, {name}, {sourceExt}, {rule}, {date}"
            ),
            (
                "{stem.{ext}",
                "unknown placeholder {stem.{ext}; known: {stem}, {ext}, {name}, {sourceExt}, {rule}, {date}"
            ),
            ("{stem}.{ext", "'{' is never closed"),
            ("out/{stem}.{ext}", "a file name cannot contain '/'"),
            ("{date}.{ext}", "must contain {stem} or {name}, or every input would get the same output name"),
        ]
    )
    func refusesInvalidTemplate(template: String, reason: String) {
        let error = #expect(throws: NameTemplateError.self) { try NameTemplate(template) }
        #expect(error?.template == template)
        #expect(error?.reason == reason)
    }

    @Test func errorDescriptionNamesTheTemplate() {
        let error = #expect(throws: NameTemplateError.self) { try NameTemplate("{stem}/") }
        #expect(error?.description == "invalid name template '{stem}/': a file name cannot contain '/'")
    }

    @Test func renderedNamesAreSanitised() {
        let template = NameTemplate.default
        #expect(template.render(sourceName: "a\u{07}b\nc.png", format: self.jpg, rule: "r", date: "") == "a_b_c.jpg")
        #expect(template.render(sourceName: "-rf.png", format: self.jpg, rule: "r", date: "") == "_rf.jpg")
        #expect(template.render(sourceName: "x\u{7F}.png", format: self.jpg, rule: "r", date: "") == "x_.jpg")
        // Bidirectional overrides and isolates, which would make a listing show another extension.
        let override = template.render(sourceName: "invoice\u{202E}gnp.png", format: self.jpg, rule: "r", date: "")
        #expect(override == "invoice_gnp.jpg")
        let isolates = template.render(sourceName: "a\u{2066}b\u{2069}.png", format: self.jpg, rule: "r", date: "")
        #expect(isolates == "a_b_.jpg")
    }

    @Test func sanitisingRefusesDotNamesAndLeadingDashes() {
        #expect(SafeName.sanitized("") == "_")
        #expect(SafeName.sanitized(".") == "_.")
        #expect(SafeName.sanitized("..") == "_..")
        #expect(SafeName.sanitized("--help") == "_-help")
        #expect(SafeName.sanitized("a/b") == "a_b")
        #expect(SafeName.sanitized("fine name.jpg") == "fine name.jpg")
    }

    @Test func longNamesAreCutAtACharacterBoundaryKeepingTheExtension() {
        let long = String(repeating: "é", count: 300) + ".png"
        let name = NameTemplate.default.render(sourceName: long, format: self.jpg, rule: "r", date: "")
        // "é" is two UTF-8 bytes: 98 of them and ".jpg" make exactly the 200-byte limit.
        #expect(name == String(repeating: "é", count: 98) + ".jpg")
        #expect(name.utf8.count == SafeName.maximumBytes)
    }
}
