import ChuteApp
import ChuteCatalog
import ChuteCore
import Testing

/// `ConfigReader.options`: the options of `chute convert`, checked as in a rule.
@Suite struct StandaloneOptionsTests {
    private static func format(_ name: String) throws -> TargetFormat {
        try #require(Engines.registry.format(named: name))
    }

    @Test func valuesAreTypedAsInARulesFile() throws {
        let options = try ConfigReader.options(
            [("height", "720"), ("crf", "20"), ("audioBitrate", "96k"), ("preset", "slow"), ("allAudio", "true")],
            for: try Self.format("mp4"),
            registry: Engines.registry
        )

        #expect(options == ["height": 720, "crf": 20, "audioBitrate": 96_000, "preset": "slow", "allAudio": true])
    }

    @Test func noValuesAreTheDefaults() throws {
        #expect(
            try ConfigReader.options([], for: try Self.format("webp"), registry: Engines.registry)
                == ConversionOptions()
        )
    }

    @Test func everyProblemIsReported() throws {
        let error = #expect(throws: ConfigError.self) {
            try ConfigReader.options(
                [("quality", "0.8"), ("crf", "99"), ("channels", "many")],
                for: try Self.format("mp4"),
                registry: Engines.registry
            )
        }

        #expect(
            error?.issues.map(\.message) == [
                "'quality' does not apply to video target 'mp4'",
                "'crf' must be between 0 and 63, found 99",
                "expected a whole number for 'channels', found string 'many'",
            ]
        )
    }

    @Test(arguments: ["", "a\nb: 3"])
    func aValueMustBeOneLine(value: String) throws {
        let error = #expect(throws: ConfigError.self) {
            try ConfigReader.options([("width", value)], for: try Self.format("jpg"), registry: Engines.registry)
        }

        #expect(error?.issues.map(\.message) == ["invalid value '\(value)' for 'width'"])
    }

    /// YAML syntax in a value is read as text, as if it were quoted in a rules file.
    @Test(arguments: ["1: 2", "{x: 1}", "[3]"])
    func aValueCannotAddStructure(value: String) throws {
        let error = #expect(throws: ConfigError.self) {
            try ConfigReader.options([("width", value)], for: try Self.format("jpg"), registry: Engines.registry)
        }

        #expect(error?.issues.map(\.message) == ["expected a whole number for 'width', found string '\(value)'"])
    }

    @Test func stripAndMetadataMustAgree() throws {
        let jpg = try Self.format("jpg")
        let agreed = try ConfigReader.options(
            [("strip", "true"), ("metadata", "strip")],
            for: jpg,
            registry: Engines.registry
        )
        #expect(agreed == ["strip": true, "metadata": "strip"])
        let error = #expect(throws: ConfigError.self) {
            try ConfigReader.options(
                [("strip", "true"), ("metadata", "location")],
                for: jpg,
                registry: Engines.registry
            )
        }
        #expect(error?.issues.map(\.message) == ["'strip: true' contradicts 'metadata: location'; keep one"])
    }
}
