import ChuteHTTP
import ChuteRuntime
import SystemPackage
import Testing

/// The small parts of uploads and downloads: the one byte range a resuming client asks for, and the file name an
/// upload gets from the client's.
@Suite struct UploadPartsTests {
    @Test(
        arguments: [
            ("bytes=0-99", 1000, 0...99),
            ("bytes=900-", 1000, 900...999),
            ("bytes=-100", 1000, 900...999),
            ("bytes=-5000", 1000, 0...999),
            ("bytes=990-2000", 1000, 990...999),
            ("bytes=0-0", 1, 0...0),
        ] as [(String, Int64, ClosedRange<Int64>)]
    )
    func aSatisfiableRangeIsCutToTheFile(header: String, size: Int64, expected: ClosedRange<Int64>) {
        #expect(ByteRange.parse(header, size: size) == expected)
    }

    @Test(arguments: ["bytes=1000-", "bytes=5-4", "bytes=-0", "bytes=0-1,5-6", "items=0-5", "bytes=a-b", "bytes=0-"])
    func anUnsatisfiableOrForeignRangeIsNone(header: String) {
        let size: Int64 = header == "bytes=0-" ? 0 : 1000
        #expect(ByteRange.parse(header, size: size) == nil)
    }

    @Test(arguments: [
        ("holiday.mov", "holiday.mov"),
        ("../../etc/passwd", "passwd"),
        ("C:\\Users\\Ann\\IMG_1.HEIC", "IMG_1.HEIC"),
        (".hidden.jpg", "hidden.jpg"),
        ("...", "upload"),
        ("a\u{0}b\u{7}c.png", "abc.png"),
        ("", "upload"),
        ("/", "upload"),
        ("Café 2024.jpg", "Café 2024.jpg"),
    ])
    func aClientsNameBecomesOneSafeFileName(client: String, expected: String) {
        #expect(UploadSpool.fileName(client).string == expected)
    }

    @Test func anUploadWithoutANameIsCalledUpload() {
        #expect(UploadSpool.fileName(nil).string == "upload")
        let long = String(repeating: "x", count: 300) + ".jpg"
        let name = UploadSpool.fileName(long).string
        #expect(name.utf8.count <= 200 && name.hasSuffix(".jpg"))
    }
}
