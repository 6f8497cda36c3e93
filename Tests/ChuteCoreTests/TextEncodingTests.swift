import Foundation
import Testing

@testable import ChuteCore

/// Plain text's encoding told from its bytes: UTF-8 with or without a byte order mark, UTF-16 with one, else
/// Windows-1252 when it is mostly ASCII; binary data and text in other code pages are no text.
struct TextEncodingTests {
    @Test(
        arguments: [
            (Array("Grüße aus Köln".utf8), TextEncoding.utf8),
            ([0xEF, 0xBB, 0xBF] + Array("Grüße".utf8), .utf8WithBOM),
            (
                [0xFF, 0xFE] + Array("Grüße 日本".utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] },
                .utf16LittleEndian
            ),
            ([0xFE, 0xFF] + Array("Grüße 日本".utf16).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }, .utf16BigEndian),
            (
                Array("caf".utf8) + [0xE9] + Array(" au lait, na\u{EF}ve ".utf8) + [0x80] + Array(" 5".utf8),
                .windows1252
            ),
        ] as [([UInt8], TextEncoding)]
    )
    func textIsRecognisedWithItsEncoding(bytes: [UInt8], expected: TextEncoding) {
        #expect(TextEncoding.detect(bytes[...], isPrefix: false) == expected)
        #expect(MediaType.sniff(bytes) == .text)
    }

    @Test func windows1252TextDecodesWithItsAccentsAndTheEuroSign() {
        let bytes: [UInt8] = Array("caf".utf8) + [0xE9] + Array(" ".utf8) + [0x80] + Array(" 5, a".utf8) + [0xE7]
        #expect(TextEncoding.windows1252.decode(bytes[...]) == "café € 5, aç")
    }

    @Test func binaryDataAndOtherCodePagesAreNoText() {
        // Russian in Windows-1251: nearly every byte above 0x7F.
        let cyrillic: [UInt8] = [0xCF, 0xF0, 0xE8, 0xE2, 0xE5, 0xF2, 0x20, 0xEC, 0xE8, 0xF0]
        #expect(TextEncoding.detect(cyrillic[...], isPrefix: false) == nil)
        // A byte Windows-1252 leaves undefined, a NUL, no letter at all.
        #expect(TextEncoding.detect((Array("text ".utf8) + [0x81])[...], isPrefix: false) == nil)
        #expect(TextEncoding.detect((Array("text".utf8) + [0x00] + Array("more".utf8))[...], isPrefix: false) == nil)
        #expect(TextEncoding.detect(Array("-- ... --".utf8)[...], isPrefix: false) == nil)
    }
}
