import ChuteCore
import Testing

/// Durations as written, and what they mean.
private let durations: [(String, Duration)] = [
    ("500ms", .milliseconds(500)),
    ("100ms", .milliseconds(100)),
    ("1.5ms", .microseconds(1500)),
    ("2s", .seconds(2)),
    ("1.5m", .seconds(90)),
    ("1h", .seconds(3600)),
    ("30d", .seconds(30 * 86_400)),
    ("10", .seconds(10)),
    ("0.25", .milliseconds(250)),
    (".5s", .milliseconds(500)),
    ("3.", .seconds(3)),
    ("2 S", .seconds(2)),
    ("1H", .seconds(3600)),
    ("0", .zero),
    ("1:30", .seconds(90)),
    ("00:01:30.5", .milliseconds(90_500)),
]

/// Byte sizes as written, and their number of bytes.
private let byteSizes: [(String, Int64)] = [
    ("10KB", 10_000),
    ("2.5MB", 2_500_000),
    ("1GiB", 1 << 30),
    ("123", 123),
    ("1.5KiB", 1536),
    ("1.1KiB", 1126),
    ("10 kb", 10_000),
    ("1B", 1),
    ("2GB", 2_000_000_000),
    ("8TiB", 8 << 40),
    ("3TB", 3_000_000_000_000),
    ("9000000TB", 9_000_000_000_000_000_000),
    ("0", 0),
]

@Suite struct ValueParsingTests {
    @Test(arguments: durations)
    func parsesDuration(text: String, expected: Duration) {
        #expect(ValueParsing.duration(text) == expected)
    }

    @Test(arguments: [
        "", "s", "-1s", "+1s", "1e3s", "1.2.3s", "5 parsecs", "2sec", "1_000s", "inf", "١s", "1 s s",
        "999999999999999999d",
    ])
    func refusesWhatIsNotADuration(text: String) {
        #expect(ValueParsing.duration(text) == nil)
    }

    @Test(arguments: byteSizes)
    func parsesByteSize(text: String, expected: Int64) {
        #expect(ValueParsing.byteSize(text) == expected)
    }

    @Test(arguments: ["", "KB", "10XB", "-1KB", "1.5.5MB", "10 K B", "10000000TB", "1e3", "10KBs"])
    func refusesWhatIsNotAByteSize(text: String) {
        #expect(ValueParsing.byteSize(text) == nil)
    }

    @Test func describesDurationsInTheLargestExactUnit() {
        #expect(ValueParsing.describe(Duration.zero) == "0s")
        #expect(ValueParsing.describe(Duration.milliseconds(500)) == "500ms")
        #expect(ValueParsing.describe(Duration.milliseconds(1234)) == "1234ms")
        #expect(ValueParsing.describe(Duration.seconds(2)) == "2s")
        #expect(ValueParsing.describe(Duration.milliseconds(1500)) == "1.5s")
        #expect(ValueParsing.describe(Duration.seconds(90)) == "1.5m")
        #expect(ValueParsing.describe(Duration.seconds(1800)) == "30m")
        #expect(ValueParsing.describe(Duration.seconds(36 * 3600)) == "1.5d")
        #expect(ValueParsing.describe(Duration.seconds(30 * 86_400)) == "30d")
        #expect(ValueParsing.describe(Duration.microseconds(1500)) == "0.0015s")
        #expect(ValueParsing.describe(Duration.nanoseconds(2_000_000_001)) == "2.000000001s")
    }

    @Test func describesByteSizesInTheLargestExactUnit() {
        #expect(ValueParsing.describe(bytes: 0) == "0B")
        #expect(ValueParsing.describe(bytes: 123) == "123B")
        #expect(ValueParsing.describe(bytes: 10_000) == "10KB")
        #expect(ValueParsing.describe(bytes: 1536) == "1.5KiB")
        #expect(ValueParsing.describe(bytes: 2_500_000) == "2.5MB")
        #expect(ValueParsing.describe(bytes: 1 << 30) == "1GiB")
        #expect(ValueParsing.describe(bytes: 2_000_000_000) == "2GB")
        #expect(ValueParsing.describe(bytes: 1_250_000) == "1.25MB")
        #expect(ValueParsing.describe(bytes: 1_050_000) == "1.05MB")
        #expect(ValueParsing.describe(bytes: 1001) == "1001B")
        #expect(ValueParsing.describe(bytes: 9_000_000_000_000_000_000) == "9000000TB")
    }

    @Test(arguments: durations)
    func describedDurationReadsBackTheSame(text: String, expected: Duration) throws {
        let described = ValueParsing.describe(expected)
        #expect(ValueParsing.duration(described) == expected, "\(text) was described as \(described)")
    }

    @Test(arguments: byteSizes)
    func describedByteSizeReadsBackTheSame(text: String, expected: Int64) throws {
        let described = ValueParsing.describe(bytes: expected)
        #expect(ValueParsing.byteSize(described) == expected, "\(text) was described as \(described)")
    }
}
