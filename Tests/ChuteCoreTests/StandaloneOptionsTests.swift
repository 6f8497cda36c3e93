import ChuteCore
import Testing

/// `ConfigReader.options`: the options of `chute convert`, checked as in a rule.
@Suite struct StandaloneOptionsTests {
    private static func format(_ name: String) throws -> TargetFormat {
        try #require(TargetFormat.named(name))
    }

    @Test func valuesAreTypedAsInARulesFile() throws {
        let options = try ConfigReader.options(
            [("height", "720"), ("crf", "20"), ("audioBitrate", "96k"), ("preset", "slow"), ("allAudio", "true")],
            for: try Self.format("mp4")
        )

        #expect(options.height == 720)
        #expect(options.crf == 20)
        #expect(options.audioBitrate == 96_000)
        #expect(options.preset == .slow)
        #expect(options.allAudio == true)
    }

    @Test func noValuesAreTheDefaults() throws {
        #expect(try ConfigReader.options([], for: try Self.format("webp")) == ConversionOptions())
    }

    @Test func everyProblemIsReported() throws {
        let error = #expect(throws: ConfigError.self) {
            try ConfigReader.options(
                [("quality", "0.8"), ("crf", "99"), ("channels", "many")],
                for: try Self.format("mp4")
            )
        }

        #expect(
            error?.issues.map(\.message) == [
                "'quality' does not apply to video target 'mp4'",
                "'crf' must be between 0 and 51 for h264, found 99",
                "expected a whole number for 'channels', found string 'many'",
            ]
        )
    }

    @Test(arguments: ["", "1: 2", "a\nb: 3", "{x: 1}"])
    func aValueCannotAddStructure(value: String) throws {
        let error = #expect(throws: ConfigError.self) {
            try ConfigReader.options([("width", value)], for: try Self.format("jpg"))
        }

        #expect(error?.issues.map(\.message) == ["invalid value '\(value)' for 'width'"])
    }
}
