import ChuteCore

/// Removes metadata chunks from a WebP file, copying every other chunk byte for byte.
///
/// A WebP is a RIFF file: `RIFF`, a 32-bit little-endian size of what follows, `WEBP`, then chunks (a four-character
/// code, a 32-bit size, the data, a padding byte when the size is odd). Metadata is only in the extended format,
/// whose `VP8X` chunk has flags saying whether there is an `ICCP`, `EXIF` or `XMP ` chunk.
package enum WebPMetadata {
    /// The `VP8X` flag bits for an EXIF and an XMP chunk.
    private static let exifFlag: UInt8 = 0x08
    private static let xmpFlag: UInt8 = 0x04

    /// Removes what `policy` names; see ``MetadataRemoval/removing(_:from:container:)``.
    ///
    /// `strip` removes `EXIF` and `XMP ` and clears their flags; `location` rewrites `EXIF` without its GPS IFD and
    /// removes an `XMP ` chunk with location properties. The RIFF size is set to the new length.
    package static func removing(_ policy: MetadataPolicy, from bytes: [UInt8]) throws(MetadataError) -> MetadataRemoval
    {
        guard bytes.hasBytes(ascii("RIFF"), at: 0), bytes.hasBytes(ascii("WEBP"), at: 8),
            let riffSize = bytes.littleEndian(at: 4, width: 4)
        else { throw MetadataError("WebP", at: 0, "no RIFF WEBP header") }
        guard riffSize >= 4, riffSize <= bytes.count - 8 else {
            throw MetadataError("WebP", at: 4, "the RIFF size runs past the end of the file")
        }
        let end = 8 + riffSize
        var chunks: [(type: String, data: [UInt8])] = []
        var offset = 12
        while offset < end {
            guard let size = bytes.littleEndian(at: offset + 4, width: 4), size <= end - offset - 8 else {
                throw MetadataError("WebP", at: offset, "a chunk runs past the end of the RIFF data")
            }
            let type = String(decoding: bytes[offset..<(offset + 4)], as: UTF8.self)
            chunks.append((type, Array(bytes[(offset + 8)..<(offset + 8 + size)])))
            offset += 8 + size + size % 2
        }
        let exif = chunks.first { $0.type == "EXIF" }?.data
        let orientation = exif.flatMap { MetadataRemoval.orientation(ofEXIF: $0) }
        let captureTime = exif.flatMap { try? EXIF($0) }?.captureTime
        guard policy != .keep else {
            return MetadataRemoval(bytes: bytes, removed: [], orientation: orientation, captureTime: captureTime)
        }

        var removed: Set<MetadataKind> = []
        var clearedFlags: UInt8 = 0
        var kept: [(type: String, data: [UInt8])] = []
        for chunk in chunks {
            switch (chunk.type, policy) {
            case ("EXIF", .strip):
                removed.formUnion(MetadataRemoval.exifKinds(chunk.data))
                clearedFlags |= Self.exifFlag
            case ("XMP ", .strip):
                removed.insert(.xmp)
                clearedFlags |= Self.xmpFlag
            case ("EXIF", .location):
                if let (exif, kinds) = MetadataRemoval.exifWithoutLocation(chunk.data) {
                    removed.formUnion(kinds)
                    kept.append((chunk.type, exif))
                } else {
                    removed.insert(.exif)
                    clearedFlags |= Self.exifFlag
                }
            case ("XMP ", .location) where XMPLocation.mentionsLocation(chunk.data):
                removed.insert(.xmp)
                clearedFlags |= Self.xmpFlag
            default:
                kept.append(chunk)
            }
        }
        if end < bytes.count { removed.insert(.trailer) }

        var output = ascii("RIFF")
        output.appendLittleEndian(0, width: 4)
        output += ascii("WEBP")
        for (type, data) in kept {
            output += ascii(type)
            output.appendLittleEndian(data.count, width: 4)
            if type == "VP8X", let flags = data.first {
                output.append(flags & ~clearedFlags)
                output += data.dropFirst()
            } else {
                output += data
            }
            if data.count % 2 == 1 { output.append(0) }
        }
        var size: [UInt8] = []
        size.appendLittleEndian(output.count - 8, width: 4)
        output.replaceSubrange(4..<8, with: size)
        return MetadataRemoval(bytes: output, removed: removed, orientation: orientation, captureTime: captureTime)
    }
}
