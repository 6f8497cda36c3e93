/// The colour profile and EXIF of a HEIF file's primary image, read with libheif.
///
/// ImageMagick 6's HEIC coder keeps neither as a JPEG needs it: it reads no colour profile at all, and it copies
/// the EXIF item without its first four bytes, taking what follows for a JPEG's `Exif\0\0` header, which only
/// Apple's files have there. The image engine puts these back on the decoded image instead.
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
    /// Reads the primary image's profile and EXIF item.
    ///
    /// - Parameter bytes: the whole HEIF file.
    /// - Throws: ``HeifError`` when libheif cannot parse the file or read either item.
    init(reading bytes: [UInt8]) throws(HeifError) {
        let read = bytes.withUnsafeBytes { buffer in
            Result { () throws(HeifError) -> ([UInt8]?, [UInt8]?) in
                let context = try HeifContext(reading: buffer)
                let image = try context.primaryImage()
                return (try image.iccProfile(), try image.exifItem())
            }
        }
        let (iccProfile, exifItem) = try read.get()
        self.iccProfile = iccProfile
        self.exifItem = exifItem
    }
}
