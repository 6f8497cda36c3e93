import ChuteApp
import ChuteCatalog
import ChuteCore
import SystemPackage
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
        let name = NameTemplate.default.render(
            sourceName: FilePath.Component(long)!,
            format: self.jpg,
            rule: "r",
            date: ""
        )
        // "é" is two UTF-8 bytes: 98 of them and ".jpg" make exactly the 200-byte limit.
        #expect(name.string == String(repeating: "é", count: 98) + ".jpg")
        #expect(name.bytes.count == SafeName.maximumBytes)
    }

    @Test func namesThatAreNotUTF8KeepTheirBytes() throws {
        // `café.jpg` and `cafè.jpg` in Latin-1, as old Windows clients, Samba and unzip write them.
        let acute = try #require(FilePath.Component(bytes: Array("caf".utf8) + [0xE9] + Array(".HEIC".utf8)))
        let grave = try #require(FilePath.Component(bytes: Array("caf".utf8) + [0xE8] + Array(".HEIC".utf8)))
        let template = try NameTemplate("{stem}-{sourceExt}.{ext}")
        let rendered = template.render(sourceName: acute, format: self.jpg, rule: "r", date: "")
        #expect(rendered.bytes == Array("caf".utf8) + [0xE9] + Array("-heic.jpg".utf8))
        #expect(rendered != template.render(sourceName: grave, format: self.jpg, rule: "r", date: ""))
        // Control characters are still replaced, and a long name is cut before its extension, keeping its bytes.
        let hostile = try #require(
            FilePath.Component(bytes: [0xE9, 0x0A] + Array(repeating: 0xE9, count: 300) + [0x2E, 0x70])
        )
        let cut = NameTemplate.default.render(sourceName: hostile, format: self.jpg, rule: "r", date: "")
        #expect(cut.bytes == [0xE9, UInt8(ascii: "_")] + Array(repeating: 0xE9, count: 194) + Array(".jpg".utf8))
    }
}
