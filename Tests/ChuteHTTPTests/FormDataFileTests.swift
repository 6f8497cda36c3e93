import ChuteHTTP
import NIOCore
import Testing

/// The file of a `multipart/form-data` body, taken out of its chunks however they are cut.
@Suite struct FormDataFileTests {
    private static let contentType = "multipart/form-data; boundary=----chute7MA4YWxk"

    /// A form as curl -F sends it: a field, the file, another field.
    private static func form(
        file: [UInt8],
        disposition: String = "form-data; name=\"file\"; filename=\"photo.png\""
    )
        -> [UInt8]
    {
        let head = """
            ------chute7MA4YWxk\r
            Content-Disposition: form-data; name="note"\r
            \r
            not the file\r
            ------chute7MA4YWxk\r
            Content-Disposition: \(disposition)\r
            Content-Type: image/png\r
            \r

            """
        let tail = """
            \r
            ------chute7MA4YWxk\r
            Content-Disposition: form-data; name="after"\r
            \r
            neither\r
            ------chute7MA4YWxk--\r

            """
        return Array(head.utf8) + file + Array(tail.utf8)
    }

    /// Feeds `body` in chunks of `size` bytes; returns the file's bytes.
    private static func read(_ body: [UInt8], chunks size: Int, reader: FormDataFile) throws -> [UInt8] {
        var file: [UInt8] = []
        var start = 0
        while start < body.count {
            let end = min(start + size, body.count)
            var bytes = try reader.file(in: ByteBuffer(bytes: body[start..<end]))
            file += bytes.readBytes(length: bytes.readableBytes) ?? []
            start = end
        }
        try reader.finish()
        return file
    }

    @Test(arguments: [1, 2, 7, 64, 4096])
    func theFilePartComesOutWholeHoweverTheBodyIsCut(chunk: Int) throws {
        // Bytes that look like the start of a boundary, and every byte value.
        let file = Array("\r\n------chute7MA4YWx".utf8) + (0...255).map(UInt8.init) + Array("\r\n--".utf8)
        let reader = try #require(FormDataFile(contentType: Self.contentType))
        #expect(try Self.read(Self.form(file: file), chunks: chunk, reader: reader) == file)
        #expect(reader.clientFileName == "photo.png")
    }

    @Test func theFileNameMayBeQuotedWithASemicolonOrEncodedAsUTF8() throws {
        let quoted = try #require(FormDataFile(contentType: Self.contentType))
        _ = try Self.read(
            Self.form(file: [1], disposition: "form-data; name=\"file\"; filename=\"a;b.png\""),
            chunks: 100,
            reader: quoted
        )
        #expect(quoted.clientFileName == "a;b.png")
        let encoded = try #require(FormDataFile(contentType: "multipart/form-data; boundary=\"----chute7MA4YWxk\""))
        _ = try Self.read(
            Self.form(
                file: [1],
                disposition: "form-data; name=file; filename=\"x.png\"; filename*=UTF-8''caf%C3%A9.png"
            ),
            chunks: 100,
            reader: encoded
        )
        #expect(encoded.clientFileName == "café.png")
    }

    @Test func aFormWithoutAFileOrCutInItsFileIsRefused() throws {
        let noFile = try #require(FormDataFile(contentType: Self.contentType))
        let fields = Self.form(file: [1, 2, 3], disposition: "form-data; name=\"file\"")
        #expect(throws: FormDataFile.Refusal.self) { try Self.read(fields, chunks: 10, reader: noFile) }
        let cut = try #require(FormDataFile(contentType: Self.contentType))
        let body = Self.form(file: Array(repeating: 7, count: 500))
        #expect(throws: FormDataFile.Refusal.self) { try Self.read(Array(body.prefix(400)), chunks: 50, reader: cut) }
    }

    @Test(arguments: [
        "multipart/mixed; boundary=x", "multipart/form-data", "multipart/form-data; boundary=", "text/plain",
    ])
    func aBodyThatIsNotAFormWithABoundaryIsNotRead(contentType: String) {
        #expect(FormDataFile(contentType: contentType) == nil)
    }
}
