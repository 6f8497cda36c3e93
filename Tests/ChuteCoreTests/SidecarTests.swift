import ChuteCore
import Foundation
import SystemPackage
import Testing

/// A sidecar carries text from hostile files (decoder messages and warnings); it is escaped and bounded.
@Suite struct SidecarTests {
    @Test func secretsAreRecordedHiddenAndNeverPrinted() throws {
        let options: ConversionOptions = ["password": .text("open-sesame"), "compress": .bool(true)]
        let parameters = Sidecar.Parameters(format: "pdf", options: options)
        #expect(parameters.options["password"] == CommonOptions.hiddenValue)
        #expect(parameters.options["compress"] == .bool(true))
        let encoded = String(decoding: try JSONEncoder().encode(parameters), as: UTF8.self)
        #expect(!encoded.contains("open-sesame"))
        #expect(!"\(options)".contains("open-sesame") && !String(reflecting: options).contains("open-sesame"))
    }

    @Test func pathsThatAreNotUTF8AreWrittenEscapedWithTheirBytes() throws {
        let path = FilePath(bytes: Data("/in/caf".utf8 + [0xE9] + ".jpg".utf8))
        let source = Sidecar.Source(path: path, size: 1, mtime: "", sha256: nil, sniffedType: nil)
        #expect(source.path == "/in/caf\\x{e9}.jpg")
        #expect(source.pathBytes == path.bytes.base64EncodedString())
        let decoded = try JSONDecoder().decode(Sidecar.Source.self, from: JSONEncoder().encode(source))
        #expect(decoded.filePath == path)
        // A name that is valid UTF-8 has no `pathBytes` field, as before.
        let plain = Sidecar.Output(path: "/out/café.jpg", size: 1)
        #expect(plain.pathBytes == nil && plain.filePath == "/out/café.jpg")
        #expect(!String(decoding: try JSONEncoder().encode(plain), as: UTF8.self).contains("pathBytes"))
    }

    @Test func messagesAndWarningsAreEscapedAndBounded() throws {
        let hostile = "bad\nstatus: completed\u{1B}[2J" + String(repeating: "x", count: 3000)
        let sidecar = Sidecar(
            chuteVersion: ChuteVersion.current,
            jobID: "job",
            status: .failed,
            rule: "rule",
            engine: "image",
            libraries: [:],
            parameters: Sidecar.Parameters(format: "jpg", options: ConversionOptions()),
            source: Sidecar.Source(path: "/in/a.png", size: 1, mtime: "", sha256: nil, sniffedType: nil),
            output: nil,
            startedAt: "",
            endedAt: "",
            durationSeconds: 0,
            error: Sidecar.Failure(code: "corruptInput", message: hostile),
            warnings: Array(repeating: hostile, count: 70),
            details: ["inputFormat": hostile]
        )
        let message = try #require(sidecar.error?.message)
        #expect(message.hasPrefix("bad\\u{a}status: completed\\u{1b}[2J"))
        #expect(message.unicodeScalars.count == LogText.maximumLength + 1)
        #expect(sidecar.warnings.count == Sidecar.warningLimit + 1)
        #expect(sidecar.warnings.last == "… and 20 more warnings")
        #expect(sidecar.warnings.allSatisfy { !$0.contains("\n") && !$0.contains("\u{1B}") })
        #expect(sidecar.details["inputFormat"]?.contains("\n") == false)
        // The JSON form holds each value on its own line, whatever the file said.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let text = String(decoding: try encoder.encode(sidecar), as: UTF8.self)
        #expect(!text.contains("\nstatus: completed"))
    }
}
