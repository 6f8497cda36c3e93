import Foundation
import MultipartKit
import NIOCore

/// The file of a `multipart/form-data` body (`curl -F file=@photo.png`, a browser's form), taken out of the body's
/// chunks as they arrive, so that it is streamed to the spool like a raw body and never held whole.
///
/// The file is the first part whose `Content-Disposition` has a file name; the form's other fields are passed over.
/// MultipartKit's parser does the parsing.
package struct FormDataFile {
    /// Why a form gave no file.
    package struct Refusal: Error {
        package var message: String
    }

    /// What the parser's callbacks find, read between the chunks.
    private final class Found {
        /// The parts seen so far, and whether the part being read is the file.
        var inFile = false
        var fileSeen = false
        var fileComplete = false
        var fileName: String?
        /// The file's bytes of the chunk being parsed.
        var bytes = ByteBuffer()
    }

    private let parser: MultipartParser
    private let found = Found()

    /// A reader for a body of `contentType`, or `nil` when it is not `multipart/form-data` with a boundary.
    package init?(contentType: String) {
        let fields = Self.fields(of: contentType)
        guard fields.first?.lowercased() == "multipart/form-data",
            let boundary = Self.parameter("boundary", in: fields.dropFirst()), !boundary.isEmpty
        else { return nil }
        self.parser = MultipartParser(boundary: boundary)
        let found = self.found
        self.parser.onHeader = { name, value in
            guard name.lowercased() == "content-disposition", !found.fileSeen else { return }
            let fields = Self.fields(of: value)
            if let name = Self.fileName(in: fields.dropFirst()) {
                found.inFile = true
                found.fileSeen = true
                found.fileName = name
            }
        }
        self.parser.onBody = { body in
            guard found.inFile else { return }
            found.bytes.writeBuffer(&body)
        }
        self.parser.onPartComplete = {
            if found.inFile { found.fileComplete = true }
            found.inFile = false
        }
    }

    /// The file's bytes in the next chunk of the body.
    ///
    /// - Throws: ``Refusal`` when the body is not a well-formed form.
    package func file(in chunk: ByteBuffer) throws(Refusal) -> ByteBuffer {
        self.found.bytes.clear()
        do {
            try self.parser.execute(chunk)
        } catch {
            throw Refusal(message: "the multipart/form-data body is malformed")
        }
        return self.found.bytes
    }

    /// The file's name as the client gave it, once its part has begun.
    package var clientFileName: String? { self.found.fileName }

    /// Checks, once the body has ended, that the form held a file and that its part ended.
    package func finish() throws(Refusal) {
        guard self.found.fileSeen else {
            throw Refusal(message: "the form has no file: send it as a part with a file name (curl -F file=@FILE)")
        }
        guard self.found.fileComplete else {
            throw Refusal(message: "the form ended in the middle of its file; nothing was kept")
        }
    }

    /// A header's `;`-separated fields, trimmed; a `;` inside quotes (`filename="a;b.png"`) separates nothing.
    private static func fields(of value: String) -> [String] {
        var fields: [String] = []
        var field = ""
        var quoted = false
        var escaped = false
        for character in value {
            if character == ";" && !quoted {
                fields.append(field.trimmingCharacters(in: .whitespaces))
                field = ""
                continue
            }
            if character == "\"" && !escaped { quoted.toggle() }
            escaped = character == "\\" && !escaped
            field.append(character)
        }
        fields.append(field.trimmingCharacters(in: .whitespaces))
        return fields
    }

    /// A parameter's value (`boundary=…`, `filename="…"`), unquoted.
    private static func parameter(_ name: String, in fields: some Sequence<String>) -> String? {
        for field in fields {
            guard let equals = field.firstIndex(of: "="),
                field[..<equals].trimmingCharacters(in: .whitespaces).lowercased() == name
            else { continue }
            var value = field[field.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
            }
            return value
        }
        return nil
    }

    /// The file name of a part: RFC 5987's `filename*=UTF-8''…` when given, else `filename`.
    private static func fileName(in fields: some Collection<String>) -> String? {
        if let encoded = Self.parameter("filename*", in: fields),
            let quote = encoded.range(of: "''"),
            encoded[..<quote.lowerBound].lowercased() == "utf-8",
            let decoded = encoded[quote.upperBound...].removingPercentEncoding
        {
            return decoded
        }
        return Self.parameter("filename", in: fields)
    }
}
