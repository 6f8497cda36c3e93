import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Real files made at test time are whole; the same files cut short, as by a copy in progress, are not.
@Suite(.timeLimit(.minutes(3)))
struct CompletenessTests {
    /// Judges `data` as a file of its sniffed type.
    private func judge(_ data: Data) -> Completeness {
        guard let type = MediaType.sniff(data.prefix(512)) else { return .unknown }
        return Completeness.judge(type, size: Int64(data.count)) { offset, count in
            guard offset >= 0, offset <= Int64(data.count) else { return nil }
            let start = Int(offset)
            return Array(data[start..<min(data.count, start + count)])
        }
    }

    static let images = ["jpg", "png", "gif", "webp", "bmp", "heic"]
    static let media = ["wav", "mp4", "mov", "mkv", "webm"]

    @Test(arguments: images + media)
    func aWholeFileIsWholeAndACutOneIsNot(format: String) throws {
        let directory = try TemporaryDirectory(prefix: "complete")
        defer { directory.remove() }
        let file = directory.appending("whole.\(format)")
        if Self.images.contains(format) {
            try Fixtures.makeImage(at: file, width: 160, height: 120)
        } else {
            let codecs: [String] =
                switch format {
                case "wav": ["-c:a", "pcm_s16le"]
                case "webm": ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-c:a", "libopus"]
                default: MediaFixtures.h264AAC
                }
            try MediaFixtures.makeClip(
                at: file,
                width: format == "wav" ? nil : 160,
                height: 120,
                seconds: 1,
                codecArguments: codecs
            )
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: file.string))

        #expect(self.judge(data) == .whole, "\(format) whole")
        for kept in [data.count / 2, data.count - 1] {
            let verdict = self.judge(data.prefix(kept))
            guard case .incomplete = verdict else {
                Issue.record("\(format) cut to \(kept) of \(data.count) bytes was judged \(verdict)")
                continue
            }
        }
    }

    @Test func anMP4WhoseIndexIsNotWrittenYetIsIncomplete() throws {
        let directory = try TemporaryDirectory(prefix: "complete")
        defer { directory.remove() }
        let file = directory.appending("clip.mp4")
        try MediaFixtures.makeClip(at: file, seconds: 1, codecArguments: MediaFixtures.h264AAC)
        let data = try Data(contentsOf: URL(fileURLWithPath: file.string))
        // The CLI writes `moov` last: everything before it is a file whose writer has not finished.
        let moov = try #require(data.range(of: Data("moov".utf8))).lowerBound - 4

        #expect(self.judge(data.prefix(moov)) == .incomplete("the file has no 'moov' box yet"))
    }

    @Test func typesWithoutAStructuralEndAreUnknown() throws {
        let directory = try TemporaryDirectory(prefix: "complete")
        defer { directory.remove() }
        let file = directory.appending("song.mp3")
        try MediaFixtures.makeClip(at: file, width: nil, seconds: 1, codecArguments: ["-c:a", "libmp3lame"])
        let data = try Data(contentsOf: URL(fileURLWithPath: file.string))

        #expect(self.judge(data) == .unknown)
        #expect(self.judge(data.prefix(data.count / 2)) == .unknown)
    }

    /// Every image, video and audio file of the shared corpus that must convert is judged whole or unknown, never
    /// incomplete: the checks must not hold back real files made by others.
    @Test(.enabled(if: Corpus.isPresent, "the shared corpus (../shared/corpus) is absent"))
    func noValidCorpusFileIsJudgedIncomplete() throws {
        var counts: [String: Int] = [:]
        for row in try Corpus.rows() where row.expect == "ok" && !row.path.hasPrefix("broken/") {
            let data = try Data(contentsOf: URL(fileURLWithPath: Corpus.folder.appending(row.path).string))
            let verdict = self.judge(data)
            switch verdict {
            case .whole: counts["whole", default: 0] += 1
            case .unknown: counts["unknown", default: 0] += 1
            case .incomplete(let reason): Issue.record("\(row.path) judged incomplete: \(reason)")
            }
        }
        print("completeness over the corpus: \(counts["whole"] ?? 0) whole, \(counts["unknown"] ?? 0) unknown")
        #expect((counts["whole"] ?? 0) > 50)
    }
}
