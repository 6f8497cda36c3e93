import ChuteCore
import ChuteMetadata
import ChuteTestSupport
import SystemPackage
import Testing

/// Truncated, damaged and random files give a ``MetadataError`` or a result, never a crash or a hang.
@Suite(.timeLimit(.minutes(2)))
struct MalformedInputTests {
    /// Runs every policy on `bytes`; returns how many runs threw a ``MetadataError``.
    private static func removeAll(from bytes: [UInt8], container: MetadataRemoval.Container) -> Int {
        var failures = 0
        for policy in MetadataPolicy.allCases {
            do {
                _ = try MetadataRemoval.removing(policy, from: bytes, container: container)
            } catch {
                failures += 1
            }
        }
        return failures
    }

    /// A generated file of each container with metadata.
    private static func samples(in directory: TemporaryDirectory) throws -> [(MetadataRemoval.Container, [UInt8])] {
        try MetadataFixtures.makeJPEG(at: directory.appending("a.jpg"))
        try MetadataFixtures.makePNG(at: directory.appending("a.png"))
        try MetadataFixtures.makeWebP(at: directory.appending("a.webp"))
        return [
            (.jpeg, try MetadataFixtures.read(directory.appending("a.jpg"))),
            (.png, try MetadataFixtures.read(directory.appending("a.png"))),
            (.webp, try MetadataFixtures.read(directory.appending("a.webp"))),
        ]
    }

    @Test func everyTruncationFailsCleanly() throws {
        let directory = try TemporaryDirectory(prefix: "metadata")
        defer { directory.remove() }
        for (container, bytes) in try Self.samples(in: directory) {
            // Every cut in the headers and metadata, then a sample of cuts in the image data.
            let cuts = Array(0..<min(bytes.count, 2_000)) + Array(stride(from: 2_000, to: bytes.count, by: 97))
            for cut in cuts {
                let failures = Self.removeAll(from: Array(bytes.prefix(cut)), container: container)
                // JPEG and PNG need their end marker; a WebP cut short has a RIFF size past the end.
                #expect(failures == 3, "\(container) cut at \(cut)")
            }
        }
    }

    @Test func damagedBytesGiveAnErrorOrAResult() throws {
        let directory = try TemporaryDirectory(prefix: "metadata")
        defer { directory.remove() }
        var generator = SplitMix(seed: 11)
        for (container, bytes) in try Self.samples(in: directory) {
            for _ in 0..<300 {
                var damaged = bytes
                for _ in 0..<(1 + Int(generator.next() % 8)) {
                    // Mostly in the first 2 KB, where the structure and the metadata are.
                    let span = generator.next() % 4 == 0 ? damaged.count : min(damaged.count, 2_048)
                    damaged[Int(generator.next() % UInt64(span))] = UInt8(truncatingIfNeeded: generator.next())
                }
                _ = Self.removeAll(from: damaged, container: container)
            }
        }
    }

    @Test(arguments: [MetadataRemoval.Container.jpeg, .png, .webp])
    func randomBytesAreRefused(container: MetadataRemoval.Container) {
        var generator = SplitMix(seed: 3)
        let headers: [MetadataRemoval.Container: [UInt8]] = [
            .jpeg: [0xFF, 0xD8], .png: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A],
            .webp: Array("RIFF".utf8) + [0xFF, 0xFF, 0xFF, 0x7F] + Array("WEBP".utf8),
        ]
        for length in [0, 1, 7, 64, 4_096] {
            let random = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            #expect(Self.removeAll(from: random, container: container) == 3)
            #expect(Self.removeAll(from: (headers[container] ?? []) + random, container: container) == 3)
        }
    }

    @Test func aMalformedFileSaysWhereAndWhat() {
        // A segment that claims 0x1000 bytes in a 10-byte file.
        let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, 0x10, 0x00, 0x45, 0x78, 0x69, 0x66]
        #expect(throws: MetadataError("JPEG", at: 2, "a segment's length runs past the end of the file")) {
            try MetadataRemoval.removing(.strip, from: bytes, container: .jpeg)
        }
    }
}

/// A small seeded generator, so that a failing case can be replayed.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { self.state = seed }
    mutating func next() -> UInt64 {
        self.state &+= 0x9E37_79B9_7F4A_7C15
        var value = self.state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
