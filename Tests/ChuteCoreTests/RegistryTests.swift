import ChuteApp
import ChuteCore
import Foundation
import SystemPackage
import Testing

/// The engine registry and what is written from it: the docs tables and the JSON Schema's keys.
@Suite struct RegistryTests {
    private static let rulesDoc = FilePath(#filePath).removingLastComponent().removingLastComponent()
        .removingLastComponent().appending("docs/rules.md")

    /// The text between `<!-- NAME:begin … -->` and `<!-- NAME:end -->` in docs/rules.md.
    private static func section(_ name: String) throws -> String {
        let text = try String(contentsOfFile: Self.rulesDoc.string, encoding: .utf8)
        let begin = try #require(text.range(of: "<!-- \(name):begin"))
        let afterMarker = try #require(text.range(of: "-->\n", range: begin.upperBound..<text.endIndex))
        let end = try #require(text.range(of: "\n<!-- \(name):end -->", range: afterMarker.upperBound..<text.endIndex))
        return String(text[afterMarker.upperBound..<end.lowerBound])
    }

    @Test func theDocsOptionTableIsTheRegistrys() throws {
        let expected = OptionDocs.optionTable(Engines.registry)
        #expect(
            try Self.section("options") == expected,
            "docs/rules.md's option table differs from the registry; replace it with `chute schema --markdown`'s"
        )
    }

    @Test func theDocsFormatTableIsTheRegistrys() throws {
        let expected = OptionDocs.formatTable(Engines.registry)
        #expect(
            try Self.section("formats") == expected,
            "docs/rules.md's format table differs from the registry; replace it with `chute schema --markdown`'s"
        )
    }

    @Test func theSchemaDescribesEveryKeyTheReaderTakes() throws {
        let keys = ConfigReader.schemaKeys(registry: Engines.registry)
        guard case .object(let root) = ConfigSchema.schema(Engines.registry),
            case .object(let properties)? = root["properties"]
        else {
            Issue.record("the schema has no properties")
            return
        }
        func itemKeys(_ section: String) -> Set<String> {
            var node = properties[section]
            if case .object(let fields)? = node, case .array(let choices)? = fields["anyOf"] { node = choices.first }
            if case .object(let fields)? = node, let items = fields["items"] { node = items }
            guard case .object(let fields)? = node, case .object(let keys)? = fields["properties"] else { return [] }
            return Set(keys.keys)
        }
        #expect(itemKeys("watch") == Set(keys.watch))
        #expect(itemKeys("rules") == Set(keys.rule))
        #expect(itemKeys("settings") == Set(keys.settings))
    }

    @Test func everyFormatNameAndAliasFindsItsFormat() {
        for format in Engines.registry.formats {
            for name in [format.name] + format.aliases {
                #expect(Engines.registry.format(named: name.uppercased()) == format)
            }
        }
        #expect(Engines.registry.format(named: "docx") == nil)
    }

    @Test func anOptionAppliesOnlyToItsEnginesFormats() throws {
        let jpg = try #require(Engines.registry.format(named: "jpg"))
        let mp4 = try #require(Engines.registry.format(named: "mp4"))
        let mp3 = try #require(Engines.registry.format(named: "mp3"))
        #expect(Engines.registry.applies("quality", to: jpg) && !Engines.registry.applies("quality", to: mp4))
        #expect(Engines.registry.applies("width", to: jpg) && Engines.registry.applies("width", to: mp4))
        #expect(!Engines.registry.applies("width", to: mp3) && Engines.registry.applies("sampleRate", to: mp3))
        #expect(!Engines.registry.applies("noSuchKey", to: jpg))
    }

    @Test func optionsRoundTripThroughJSONAsPlainValues() throws {
        let options: ConversionOptions = ["height": 720, "quality": 0.85, "strip": true, "videoCodec": "hevc"]
        let data = try JSONEncoder().encode(options)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["height"] as? Int == 720)
        #expect(object["videoCodec"] as? String == "hevc")
        #expect(try JSONDecoder().decode(ConversionOptions.self, from: data) == options)
    }
}
