import ChuteApp
import ChuteCatalog
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
        #expect(itemKeys("notify") == Set(keys.notify))
    }

    @Test func everyFormatNameAndAliasFindsItsFormat() {
        for format in Engines.registry.formats {
            for name in [format.name] + format.aliases {
                #expect(Engines.registry.format(named: name.uppercased()) == format)
            }
        }
        #expect(Engines.registry.format(named: "xlsx") == nil)
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

    @Test func aPictureFormatIsWrittenByTheVideoEngineFromAVideo() throws {
        let jpg = try #require(Engines.registry.format(named: "jpg"))
        let gif = try #require(Engines.registry.format(named: "gif"))
        let mp4 = try #require(Engines.registry.format(named: "mp4"))
        let tiff = try #require(Engines.registry.format(named: "tiff"))
        #expect(jpg.engine(reading: .mp4).rawValue == "video" && jpg.engine(reading: .quicktime).rawValue == "video")
        #expect(jpg.engine(reading: .png).rawValue == "image" && jpg.engine(reading: nil).rawValue == "image")
        #expect(gif.engine(reading: .matroska).rawValue == "video")
        // No engine writes tiff from a video, and the video engine keeps its own formats whatever it reads.
        #expect(tiff.engine(reading: .mp4).rawValue == "image" && mp4.engine(reading: .mp3).rawValue == "video")
        #expect(Engines.registry.writing(jpg) == "image engine; video engine from video; pdf engine from pdf")
        #expect(jpg.engine(reading: .pdf).rawValue == "pdf" && gif.engine(reading: .pdf).rawValue == "image")
        #expect(Engines.registry.writing(tiff) == "image engine")
        // The video engine's keys that name the picture formats apply to them; its others do not.
        #expect(Engines.registry.applies("start", to: jpg) && Engines.registry.applies("duration", to: gif))
        #expect(!Engines.registry.applies("duration", to: jpg) && !Engines.registry.applies("crf", to: jpg))
        #expect(!Engines.registry.applies("start", to: tiff))
        #expect(Engines.registry.applies("maxFileSize", to: mp4) && Engines.registry.applies("maxFileSize", to: jpg))
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
