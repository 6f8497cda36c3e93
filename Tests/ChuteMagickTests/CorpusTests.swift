import ChuteCore
import ChuteMagick
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Converts the shared real-world corpus (`../shared/corpus` beside the repository) and checks each image and camera
/// RAW row's `expect` column: `ok` must convert to JPEG, `fail` must be refused with a ``ConversionFailure``, `warn`
/// may go either way but must not crash.
@Suite struct CorpusTests {
    @Test(
        .enabled(if: Corpus.isPresent, "the shared corpus (../shared/corpus/MANIFEST.tsv) is absent"),
        .timeLimit(.minutes(10))
    )
    func everyImageRowMeetsItsExpectation() async throws {
        let rows = try Corpus.rows()
        let directory = try TemporaryDirectory()
        var converted = 0
        var refused = 0
        var warned = 0

        for (index, row) in rows.enumerated() {
            let path = row.path
            let expect = row.expect
            guard path.hasPrefix("image/") || path.hasPrefix("raw/") || path.hasPrefix("broken/") else { continue }
            let output = directory.file("\(index).jpg")
            let input = Corpus.folder.appending(path)
            let outcome = try await onOwnThread {
                Result { () throws(ConversionFailure) in try Conversion.run(input, to: "jpg", output: output) }
            }
            switch (expect, outcome) {
            case ("ok", .success):
                #expect(try MagickTool.identify("%m", output) == "JPEG", "\(path)")
                converted += 1
            case ("ok", .failure(let failure)):
                Issue.record("\(path) should convert: \(failure)")
            case ("fail", .success):
                Issue.record("\(path) should be refused but converted")
            case ("fail", .failure(let failure)):
                #expect(!output.exists, "\(path) left an output behind")
                #expect(!failure.message.isEmpty, "\(path)")
                refused += 1
            case (_, .failure):
                #expect(!output.exists, "\(path) left an output behind")
                warned += 1
            default:
                warned += 1
            }
        }

        print("corpus: \(converted) converted, \(refused) refused as expected, \(warned) warn rows either way")
        #expect(converted > 0)
        #expect(refused > 0)
    }
}
