extension ConversionFailure {
    /// The failure for content that is not what an engine reads, saying what it is instead and why it is refused.
    ///
    /// - An empty ZIP archive (an end-of-archive record only, as a failed export or upload leaves): `corruptInput`.
    /// - A ZIP archive holding no office document (no `word/`, `xl/` or `ppt/` part, no OpenDocument `mimetype`):
    ///   `unsupportedInput`.
    /// - Text in an 8-bit code page that is not Windows-1252 (mostly bytes above 0x7F, no control character):
    ///   `unsupportedInput`, with the `iconv` command that converts it to UTF-8.
    /// - A type Chute knows: `unsupportedInput`, naming it. Anything else: `unsupportedInput`, with its first bytes.
    ///
    /// - Parameters:
    ///   - header: the start of the file (``MediaType/headerLength`` bytes are enough).
    ///   - expected: what the engine reads, for the message (`a PDF`).
    package static func unexpectedContent(_ header: some Collection<UInt8>, expected: String) -> ConversionFailure {
        let bytes = Array(header.prefix(MediaType.headerLength))
        if bytes.starts(with: [0x50, 0x4B, 0x05, 0x06]) {
            return ConversionFailure(
                .corruptInput,
                "the content is an empty ZIP archive (no member at all, as a failed export or upload leaves), not "
                    + "\(expected)"
            )
        }
        if bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]) {
            return ConversionFailure(
                .unsupportedInput,
                "the content is a ZIP archive that holds no office document (no word/, xl/ or ppt/ part, no "
                    + "OpenDocument mimetype), not \(expected)"
            )
        }
        if let type = MediaType.sniff(bytes) {
            return ConversionFailure(.unsupportedInput, "the content is \(type.rawValue), not \(expected)")
        }
        let controls = bytes.contains { ($0 < 0x20 && ![0x09, 0x0A, 0x0C, 0x0D].contains($0)) || $0 == 0x7F }
        if !bytes.isEmpty, !controls, bytes.contains(where: { $0 >= 0x80 }) {
            return ConversionFailure(
                .unsupportedInput,
                "the content looks like text in an 8-bit code page other than Windows-1252 (Latin-1), such as "
                    + "Cyrillic or Greek, which Chute does not guess: not UTF-8: convert it with iconv (for example "
                    + "iconv -f CP1251 -t UTF-8)"
            )
        }
        let start = bytes.prefix(8).map { String($0, radix: 16, uppercase: true) }.map { $0.count == 1 ? "0\($0)" : $0 }
        return ConversionFailure(
            .unsupportedInput,
            "the content is of no type Chute recognises, not \(expected) (it starts with \(start.joined(separator: " ")))"
        )
    }
}
