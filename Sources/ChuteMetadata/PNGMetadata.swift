import ChuteCore

/// Removes metadata chunks from a PNG file, copying every other chunk byte for byte.
///
/// A PNG is an 8-byte signature and chunks (a 32-bit length, a 4-byte type, the data, a CRC-32 of type and data),
/// ending with `IEND`. Chunks are independent, so removing one changes no other.
package enum PNGMetadata {
    private static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Removes what `policy` names; see ``MetadataRemoval/removing(_:from:container:)``.
    ///
    /// `strip` removes `tEXt`, `zTXt`, `iTXt`, `eXIf` and `tIME`. `location` rewrites `eXIf` without its GPS IFD,
    /// removes an uncompressed XMP `iTXt` with location properties, and removes whole the text chunks in which
    /// ImageMagick stores EXIF, XMP or IPTC (`Raw profile type …`, hex and often compressed) and compressed XMP.
    package static func removing(_ policy: MetadataPolicy, from bytes: [UInt8]) throws(MetadataError) -> MetadataRemoval
    {
        guard bytes.hasBytes(Self.signature, at: 0) else { throw MetadataError("PNG", at: 0, "no PNG signature") }
        var output = Self.signature
        output.reserveCapacity(bytes.count)
        var removed: Set<MetadataKind> = []
        var orientation: Int?
        var captureTime: CaptureTime?
        var sawEXIF = false
        var offset = Self.signature.count
        while true {
            guard let length = bytes.bigEndian(at: offset, width: 4), length <= Int(Int32.max),
                length <= bytes.count - offset - 12
            else { throw MetadataError("PNG", at: offset, "a chunk runs past the end of the file") }
            let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            let data = (offset + 8)..<(offset + 8 + length)
            let end = data.upperBound + 4
            if type == "eXIf", !sawEXIF {
                sawEXIF = true
                orientation = MetadataRemoval.orientation(ofEXIF: Array(bytes[data]))
                captureTime = (try? EXIF(Array(bytes[data])))?.captureTime
            }
            let (kinds, replacement) =
                switch policy {
                case .keep: (Set<MetadataKind>(), nil as [UInt8]?)
                case .strip: (Self.stripped(type, Array(bytes[data])), nil)
                case .location: Self.withoutLocation(type, Array(bytes[data]))
                }
            removed.formUnion(kinds)
            if let replacement {
                output.appendBigEndian(replacement.count, width: 4)
                let chunk = ascii(type) + replacement
                output += chunk
                output.appendBigEndian(Int(CRC32.checksum(chunk)), width: 4)
            } else if kinds.isEmpty {
                output += bytes[offset..<end]
            }
            offset = end
            if type == "IEND" { break }
        }
        if offset < bytes.count, policy != .keep { removed.insert(.trailer) }
        return MetadataRemoval(
            bytes: policy == .keep ? bytes : output,
            removed: removed,
            orientation: orientation,
            captureTime: captureTime
        )
    }

    /// What `strip` removes with a chunk; empty when the chunk stays.
    private static func stripped(_ type: String, _ data: [UInt8]) -> Set<MetadataKind> {
        switch type {
        case "eXIf": MetadataRemoval.exifKinds(data)
        case "tEXt", "zTXt", "iTXt": [Self.textKind(data)]
        case "tIME": [.time]
        default: []
        }
    }

    /// What `location` removes with a chunk, and the chunk's new data when it is rewritten rather than removed.
    private static func withoutLocation(_ type: String, _ data: [UInt8]) -> (Set<MetadataKind>, [UInt8]?) {
        switch type {
        case "eXIf":
            guard let (exif, removed) = MetadataRemoval.exifWithoutLocation(data) else { return ([.exif], nil) }
            return removed.isEmpty ? ([], nil) : (removed, exif)
        case "tEXt", "zTXt", "iTXt":
            let kind = Self.textKind(data)
            switch kind {
            case .exif, .iptc:
                return ([kind], nil)
            case .xmp:
                // iTXt: keyword\0, compression flag, method, language\0, translated keyword\0, text.
                guard type == "iTXt", let text = Self.uncompressedText(ofITXt: data) else { return ([.xmp], nil) }
                return XMPLocation.mentionsLocation(text) ? ([.xmp], nil) : ([], nil)
            default:
                return ([], nil)
            }
        default:
            return ([], nil)
        }
    }

    /// The kind of a text chunk from its keyword: the raw profiles ImageMagick writes, XMP, or plain text.
    private static func textKind(_ data: [UInt8]) -> MetadataKind {
        let keyword = String(decoding: data.prefix { $0 != 0 }.prefix(79), as: UTF8.self).lowercased()
        switch keyword {
        case "xml:com.adobe.xmp", "raw profile type xmp": return .xmp
        case "raw profile type exif", "raw profile type app1": return .exif
        case "raw profile type iptc", "raw profile type 8bim": return .iptc
        default: return .text
        }
    }

    /// The text of an uncompressed `iTXt` chunk, or `nil` when it is compressed or malformed.
    private static func uncompressedText(ofITXt data: [UInt8]) -> ArraySlice<UInt8>? {
        guard let keywordEnd = data.firstIndex(of: 0), keywordEnd + 2 < data.count, data[keywordEnd + 1] == 0,
            let languageEnd = data[(keywordEnd + 3)...].firstIndex(of: 0),
            let translatedEnd = data[(languageEnd + 1)...].firstIndex(of: 0)
        else { return nil }
        return data[(translatedEnd + 1)...]
    }
}

/// The CRC-32 of PNG chunks (ISO 3309): polynomial 0xEDB88320 reflected, initial value and final XOR all ones.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ crc >> 1 : crc >> 1 }
        return crc
    }

    /// The checksum of `bytes`.
    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = Self.table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ crc >> 8 }
        return crc ^ 0xFFFF_FFFF
    }
}
