import Foundation

/// The encoding of a plain text file, told from its bytes: UTF-8 (with or without a byte order mark), UTF-16 with a
/// byte order mark, else Windows-1252 (Latin-1 with the printable characters Windows puts at 0x80–0x9F), which is
/// what Western European text that is not UTF-8 usually is.
///
/// Plain text has no signature, and any bytes read as 8-bit text: an encoding is taken only where the bytes can
/// hardly be anything else. UTF-8 and UTF-16 must decode, and Windows-1252 must be mostly ASCII, with no byte that
/// the code page leaves undefined; none may hold a control character but tab, line feed, form feed and carriage
/// return, and each needs a letter or a digit. Text in another 8-bit code page (Cyrillic, Greek: mostly bytes above
/// 0x7F) is not recognised, so that it is never drawn as the wrong letters.
package enum TextEncoding: String, Sendable, CaseIterable {
    case utf8 = "utf-8"
    case utf8WithBOM = "utf-8 with BOM"
    case utf16LittleEndian = "utf-16le"
    case utf16BigEndian = "utf-16be"
    case windows1252 = "windows-1252"

    /// The least share of ASCII bytes in Windows-1252 text: accented letters are a minority in Western languages
    /// (Portuguese, French and German text has a few percent), and text in another code page has most of its bytes
    /// above 0x7F.
    private static let asciiShareOf8BitText = 0.75

    /// The bytes of Windows-1252 that the code page leaves undefined.
    private static let undefinedIn1252: Set<UInt8> = [0x81, 0x8D, 0x8F, 0x90, 0x9D]

    /// The control characters that text may hold.
    private static let allowedControls: Set<Unicode.Scalar> = ["\t", "\n", "\u{0C}", "\r"]

    /// Detects the encoding of text.
    ///
    /// - Parameters:
    ///   - bytes: the file, or its start.
    ///   - isPrefix: whether `bytes` are the start of a longer file, whose end may cut a character short.
    /// - Returns: the encoding, or `nil` when the bytes are not text in any of them.
    package static func detect(_ bytes: ArraySlice<UInt8>, isPrefix: Bool) -> TextEncoding? {
        let encoding: TextEncoding
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            encoding = .utf8WithBOM
        } else if bytes.starts(with: [0xFF, 0xFE]) {
            encoding = .utf16LittleEndian
        } else if bytes.starts(with: [0xFE, 0xFF]) {
            encoding = .utf16BigEndian
        } else if Self.utf8Prefix(bytes, isPrefix: isPrefix) != nil {
            encoding = .utf8
        } else {
            encoding = .windows1252
        }
        let body = bytes.dropFirst(encoding.byteOrderMark.count)
        if encoding == .windows1252 {
            let ascii = body.count { $0 < 0x80 }
            guard !body.isEmpty, Double(ascii) >= Double(body.count) * Self.asciiShareOf8BitText,
                !body.contains(where: Self.undefinedIn1252.contains)
            else { return nil }
        }
        guard let text = encoding.decode(body, isPrefix: isPrefix), !text.isEmpty,
            text.unicodeScalars.allSatisfy({
                $0.properties.generalCategory != .control || Self.allowedControls.contains($0)
            }),
            text.contains(where: { $0.isLetter || $0.isNumber })
        else { return nil }
        return encoding
    }

    /// The byte order mark that starts text in this encoding.
    package var byteOrderMark: [UInt8] {
        switch self {
        case .utf8WithBOM: [0xEF, 0xBB, 0xBF]
        case .utf16LittleEndian: [0xFF, 0xFE]
        case .utf16BigEndian: [0xFE, 0xFF]
        case .utf8, .windows1252: []
        }
    }

    /// The text of `bytes` (without the byte order mark), or `nil` when they do not decode.
    ///
    /// - Parameter isPrefix: whether the bytes are the start of a longer file: a character that their end cuts
    ///   short is then left out.
    package func decode(_ bytes: ArraySlice<UInt8>, isPrefix: Bool = false) -> String? {
        switch self {
        case .utf8, .utf8WithBOM:
            return Self.utf8Prefix(bytes, isPrefix: isPrefix)
        case .utf16LittleEndian, .utf16BigEndian:
            let encoding: String.Encoding = self == .utf16LittleEndian ? .utf16LittleEndian : .utf16BigEndian
            guard isPrefix else { return String(data: Data(bytes), encoding: encoding) }
            // A prefix may end within a code unit, or after the first half of a surrogate pair.
            let whole = bytes.prefix(bytes.count & ~1)
            return String(data: Data(whole), encoding: encoding)
                ?? String(data: Data(whole.dropLast(2)), encoding: encoding)
        case .windows1252:
            return String(data: Data(bytes), encoding: .windowsCP1252)
        }
    }

    /// `bytes` as UTF-8; when they are a prefix, also when their end cuts a character short (up to three bytes of an
    /// unfinished sequence: continuation bytes after a lead byte). `nil` otherwise.
    private static func utf8Prefix(_ bytes: ArraySlice<UInt8>, isPrefix: Bool) -> String? {
        if let whole = String(validating: bytes, as: UTF8.self) { return whole }
        guard isPrefix else { return nil }
        var end = bytes.endIndex
        while end > bytes.startIndex, bytes.endIndex - end < 3, bytes[end - 1] & 0xC0 == 0x80 { end -= 1 }
        guard end > bytes.startIndex, bytes[end - 1] >= 0xC0 else { return nil }
        return String(validating: bytes[..<(end - 1)], as: UTF8.self)
    }
}
