import ChuteCore
import Foundation
import SystemPackage
import Testing

/// The supervisor and its workers speak JSON lines; a request must reach the worker exactly as it was sent.
@Suite struct WorkerProtocolTests {
    @Test func aRequestCarriesPathsThatAreNotUTF8ByteForByte() throws {
        // Latin-1 "é" (0xE9) alone is not UTF-8: a name a Samba share or an old camera card can hold.
        let name = FilePath(bytes: Data("/srv/in/caf".utf8) + Data([0xE9]) + Data(".png".utf8))
        let request = ConversionRequest(
            jobID: "job-1",
            engine: EngineKind(rawValue: "image"),
            input: name,
            output: FilePath("/srv/out/.chute-job-1.jpg"),
            format: TargetFormat(name: "jpg", category: .image, engine: EngineKind(rawValue: "image"), coder: "jpeg"),
            options: ["quality": .integer(85)],
            root: FilePath("/srv/in"),
            allowsHardLinks: true,
            threads: 2,
            inputs: [name, FilePath("/srv/in/2.png")]
        )
        let line = try JSONEncoder().encode(request)
        let decoded = try JSONDecoder().decode(ConversionRequest.self, from: line)
        #expect(decoded == request)
        #expect(decoded.input.bytes.last(where: { $0 >= 0x80 }) == 0xE9)
        // Each path is one JSON string, not an array of its characters.
        let object = try #require(try JSONSerialization.jsonObject(with: line) as? [String: Any])
        #expect(object["input"] is String && object["root"] is String)
        #expect((object["inputs"] as? [Any])?.allSatisfy { $0 is String } == true)

        let single = ConversionRequest(
            jobID: "job-2",
            engine: request.engine,
            input: FilePath("/srv/in/a.png"),
            output: request.output,
            format: request.format,
            options: ConversionOptions()
        )
        let singleLine = try JSONEncoder().encode(single)
        #expect(try JSONDecoder().decode(ConversionRequest.self, from: singleLine) == single)
        let keys = try #require(try JSONSerialization.jsonObject(with: singleLine) as? [String: Any]).keys
        #expect(!keys.contains("inputs") && !keys.contains("root") && !keys.contains("threads"))
    }
}
