/// The colour profile and EXIF of a HEIF file's primary image, read with libheif.
///
/// The image engine puts both on the image it decodes with libheif, the EXIF as a JPEG holds it (ImageMagick 6's HEIC
/// coder, which the engine does not use, reads no colour profile at all and copies the EXIF item without its first
/// four bytes, taking what follows for a JPEG's `Exif\0\0` header, which only Apple's files have there).
struct HEIFMetadata {
    /// The ICC profile, as stored.
    var iccProfile: [UInt8]?
    /// The EXIF item, as stored: a four-byte offset, then (after that many bytes) the TIFF header.
    var exifItem: [UInt8]?

    /// The EXIF as a JPEG's APP1 segment and ImageMagick's `exif` profile hold it: `Exif\0\0`, then the TIFF
    /// header and its directories. `nil` when there is no EXIF item, or its offset does not lead to a TIFF header.
    ///
    /// A HEIF `Exif` item starts with a big-endian 32-bit offset from the end of that field to the TIFF header
    /// (ISO/IEC 23008-12, annex A). Apple writes 6 and `Exif\0\0` in between; libheif's own writer writes 0.
    var jpegExifProfile: [UInt8]? {
        guard let item = self.exifItem, item.count >= 12 else { return nil }
        let offset = item[0..<4].reduce(0) { $0 << 8 | Int($1) }
        guard offset <= item.count - 12 else { return nil }
        let tiff = item[(4 + offset)...]
        let littleEndian: [UInt8] = [0x49, 0x49, 0x2A, 0x00]
        let bigEndian: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A]
        guard tiff.starts(with: littleEndian) || tiff.starts(with: bigEndian) else { return nil }
        return Array("Exif".utf8) + [0, 0] + tiff
    }
}

extension HEIFMetadata {
    /// Reads an image's profile and EXIF item.
    ///
    /// - Throws: ``HeifError`` when libheif cannot read either item.
    init(of image: borrowing HeifImageHandle) throws(HeifError) {
        self.iccProfile = try image.iccProfile()
        self.exifItem = try image.exifItem()
    }
}
