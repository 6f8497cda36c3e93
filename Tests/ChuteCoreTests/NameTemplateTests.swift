import ChuteApp
import ChuteCatalog
import ChuteCore
import Foundation
import SystemPackage
import Testing

@Suite struct NameTemplateTests {
    private let jpg = Engines.registry.format(named: "jpg")!

    @Test func defaultKeepsTheStemAndUsesTheTargetExtension() {
        #expect(NameTemplate.default.template == "{stem}.{ext}")
        #expect(
            NameTemplate.default.render(sourceName: "IMG_1.HEIC", format: self.jpg, rule: "r") == "IMG_1.jpg"
        )
    }

    @Test func takenIsTheCaptureTimeInTheLocalZoneWithAPattern() throws {
        // 2024-05-01 22:30:05 UTC is 2024-05-02 00:30:05 in Paris (summer time); `{date}` stays in UTC.
        let time = Date(timeIntervalSince1970: 1_714_602_605)
        let template = try NameTemplate("{taken:yyyyMMdd-HHmmss}-{taken}-{date:yyyy-MM-dd'T'HH}-{stem}.{ext}")
        #expect(template.usesCaptureTime)
        #expect(!NameTemplate.default.usesCaptureTime)
        let name = template.render(sourceName: "IMG_1.HEIC", format: self.jpg, rule: "r", date: time, taken: time)
        #expect(name == "20240502-003005-2024-05-02-2024-05-01T22-IMG_1.jpg")
    }

    @Test func captureTimesReadFromEXIFAndQuickTime() throws {
        let paris = try #require(TimeZone(identifier: "Europe/Paris"))
        let withOffset = try #require(CaptureTime(exif: "2023:07:14 09:30:15", offset: "+02:00", origin: "EXIF"))
        #expect(withOffset.instant(localZone: paris) == Date(timeIntervalSince1970: 1_689_319_815))
        // Without an offset the camera's clock is taken as local time.
        let local = try #require(CaptureTime(exif: "2023:07:14 09:30:15\0", offset: nil, origin: "EXIF"))
        #expect(local.instant(localZone: paris) == Date(timeIntervalSince1970: 1_689_319_815))
        #expect(local.description == "2023-07-14 09:30:15 (EXIF)")
        #expect(CaptureTime(exif: "0000:00:00 00:00:00", offset: nil, origin: "EXIF") == nil)
        let clip = try #require(CaptureTime(utc: "2023-07-14T07:30:15.000000Z", origin: "QuickTime creation_time"))
        #expect(clip.instant(localZone: paris) == Date(timeIntervalSince1970: 1_689_319_815))
        #expect(clip.description == "2023-07-14 07:30:15 +00:00 (QuickTime creation_time)")
        #expect(CaptureTime(utc: "1970-01-01T00:00:00.000000Z", origin: "QuickTime creation_time") == nil)
    }

    @Test func fillsEveryPlaceholder() throws {
        let template = try NameTemplate("{date}-{rule}-{name}.{sourceExt}.{ext}")
        let day = Date(timeIntervalSince1970: 1_714_521_600)  // 2024-05-01 00:00 UTC
        let name = template.render(sourceName: "IMG_1.HEIC", format: self.jpg, rule: "photos", date: day)
        #expect(name == "2024-05-01-photos-IMG_1.HEIC.heic.jpg")
        let stem = try NameTemplate("small-{stem}")
        #expect(stem.render(sourceName: "clip.final.mkv", format: self.jpg, rule: "r") == "small-clip.final")
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
                "unknown placeholder {extension}; known: {stem}, {ext}, {name}, {sourceExt}, {rule}, {date}, {taken}"
            ),
            (
                "{stem.{ext}",
                "unknown placeholder {stem.{ext}; known: {stem}, {ext}, {name}, {sourceExt}, {rule}, {date}, {taken}"
            ),
            ("{stem}.{ext", "'{' is never closed"),
            ("out/{stem}.{ext}", "a file name cannot contain '/'"),
            ("{date}.{ext}", "must contain {stem} or {name}, or every input would get the same output name"),
            ("{stem:x}", "{stem} takes no format; only {date} and {taken} take a date pattern"),
            ("{taken:}-{stem}", "{taken:} has an empty date pattern; leave out the ':' for yyyy-MM-dd"),
            (
                "{taken:yyyy-MM-dd-foo}-{stem}",
                "'f' in {taken:yyyy-MM-dd-foo} is no date field (Unicode date patterns: yyyy year, MM month, dd day, "
                    + "HH hour, mm minute, ss second; quote text as 'T')"
            ),
            ("{taken:yyyy'T}-{stem}", "a quote in {taken:yyyy'T} is never closed"),
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
        #expect(template.render(sourceName: "a\u{07}b\nc.png", format: self.jpg, rule: "r") == "a_b_c.jpg")
        #expect(template.render(sourceName: "-rf.png", format: self.jpg, rule: "r") == "_rf.jpg")
        #expect(template.render(sourceName: "x\u{7F}.png", format: self.jpg, rule: "r") == "x_.jpg")
        // Bidirectional overrides and isolates, which would make a listing show another extension.
        let override = template.render(sourceName: "invoice\u{202E}gnp.png", format: self.jpg, rule: "r")
        #expect(override == "invoice_gnp.jpg")
        let isolates = template.render(sourceName: "a\u{2066}b\u{2069}.png", format: self.jpg, rule: "r")
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
            rule: "r"
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
        let rendered = template.render(sourceName: acute, format: self.jpg, rule: "r")
        #expect(rendered.bytes == Array("caf".utf8) + [0xE9] + Array("-heic.jpg".utf8))
        #expect(rendered != template.render(sourceName: grave, format: self.jpg, rule: "r"))
        // Control characters are still replaced, and a long name is cut before its extension, keeping its bytes.
        let hostile = try #require(
            FilePath.Component(bytes: [0xE9, 0x0A] + Array(repeating: 0xE9, count: 300) + [0x2E, 0x70])
        )
        let cut = NameTemplate.default.render(sourceName: hostile, format: self.jpg, rule: "r")
        #expect(cut.bytes == [0xE9, UInt8(ascii: "_")] + Array(repeating: 0xE9, count: 194) + Array(".jpg".utf8))
    }
}

extension NameTemplate {
    /// Renders for a job that started at `date` with a capture time `taken` (both the epoch unless given), with
    /// `{taken}` in Paris time.
    fileprivate func render(
        sourceName: FilePath.Component,
        format: TargetFormat,
        rule: String,
        date: Date = Date(timeIntervalSince1970: 0),
        taken: Date = Date(timeIntervalSince1970: 0)
    ) -> FilePath.Component {
        let values = Values(sourceName: sourceName, format: format, rule: rule, date: date, taken: taken)
        return self.render(values, localZone: TimeZone(identifier: "Europe/Paris")!)
    }
}
