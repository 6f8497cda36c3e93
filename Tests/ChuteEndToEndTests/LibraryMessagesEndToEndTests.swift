import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon says in plain words why a damaged file failed, before the C library's own message, which it keeps.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct LibraryMessagesEndToEndTests {
    @Test func damagedFilesFailWithAPlainSentenceBeforeTheLibrarysMessage() async throws {
        try #require(Corpus.isPresent, "the corpus is missing at \(Corpus.folder)")
        // Cut-off files look like ones still being written; they are waited for `incompleteTimeout`, shortened here.
        let harness = try DaemonHarness(
            rules: """
                  - name: pictures
                    match: ["*.tif", "*.png", "*.jpg", "*.bmp"]
                    to: jpg
                    output: ./outbox
                  - name: clips
                    match: ["*.mp4", "*.m4a"]
                    to: mkv
                    output: ./outbox
                """,
            settings: "  incompleteTimeout: 1s"
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        for (corpus, name) in [
            ("broken/tif_ossfuzz_crash.tif", "strip.tif"), ("broken/png_truncated_image.png", "cut-png.png"),
            ("broken/m4a_truncated.m4a", "cut-m4a.m4a"), ("broken/bmp_shortfile.bmp", "short.bmp"),
        ] {
            try FileManager.default.copyItem(
                atPath: Corpus.folder.appending(corpus).string,
                toPath: staging.appending(name).string
            )
        }
        let photo = staging.appending("whole.jpg")
        try Fixtures.makeImage(at: photo, width: 800, height: 600)
        try Fixtures.truncatedCopy(of: photo, to: staging.appending("cut-jpg.jpg"), keeping: 0.3)
        let clip = staging.appending("whole.mp4")
        try MediaFixtures.makeClip(at: clip, seconds: 2, codecArguments: MediaFixtures.h264AAC)
        // The CLI writes the MP4 index (`moov`) at the end: the first half of the file has none.
        try Fixtures.truncatedCopy(of: clip, to: staging.appending("cut-mp4.mp4"), keeping: 0.5)
        let names = ["strip.tif", "cut-png.png", "cut-jpg.jpg", "cut-mp4.mp4", "cut-m4a.m4a", "short.bmp"]
        try harness.moveIn(names, from: staging)

        let sidecars = try await harness.waitForSidecars(names.count)
        // Each message leads with what happened in plain words, and ends with the library's own, in parentheses.
        let expected: [(sidecar: String, sentence: String, library: String)] = [
            (
                "strip.jpg", "the TIFF is cut short or damaged: a strip could not be read (libtiff, through ",
                "Read error on strip 0; got 18446744073709550836 bytes"
            ),
            ("cut-png.jpg", "the PNG is cut short or damaged (libpng, through ", "ImageMagick gave no reason"),
            ("cut-jpg.jpg", "the JPEG is cut short or damaged (libjpeg, through ", "Premature end of JPEG file"),
            ("cut-mp4.mkv", "the file is cut short or damaged: it has no index", "moov atom not found"),
            ("cut-m4a.mkv", "the file is cut short or damaged: it has no index", "moov atom not found"),
            (
                "short.jpg",
                "the file is not a valid BMP, whatever its name says, or its header is damaged (ImageMagick, ",
                "improper image header"
            ),
        ]
        for (output, sentence, library) in expected {
            let error = try #require(sidecars[output + Sidecar.fileSuffix]?.error, "no error for \(output)")
            print("\(output): \(error.code): \(error.message)")
            #expect(error.code == "corruptInput")
            #expect(error.message.hasPrefix(sentence), "\(error.message)")
            #expect(error.message.contains(library) && error.message.hasSuffix(")"), "\(error.message)")
        }
    }
}
