import ChuteCore

/// An EXIF block: a TIFF header and its image file directories (IFDs), optionally behind JPEG's `Exif\0\0` header.
///
/// Only the structure is read: IFD0 (the image), IFD1 (the thumbnail) and the GPS IFD that either points to. Edits
/// happen in place, so every offset elsewhere in the block stays valid and maker notes (which often hold offsets of
/// their own) are untouched.
package struct EXIF {
    /// The block, with its `Exif\0\0` header if it had one.
    package private(set) var bytes: [UInt8]
    /// Where the TIFF header starts in ``bytes``: every offset in the block counts from here.
    private let base: Int
    /// Whether the TIFF header says `II` (Intel, little-endian) rather than `MM`.
    private let littleEndian: Bool

    /// The tag of IFD0's and IFD1's pointer to the GPS IFD (`GPSInfo`).
    private static let gpsPointer = 0x8825
    /// The tag of IFD0's pointer to the Exif IFD (`ExifIFDPointer`), which holds the capture time.
    private static let exifPointer = 0x8769
    /// The tag of the orientation in IFD0.
    private static let orientationTag = 0x0112
    /// The tags of IFD1's embedded JPEG thumbnail: its offset and its length.
    private static let thumbnailOffset = 0x0201
    private static let thumbnailLength = 0x0202

    /// Reads the TIFF header of an EXIF block.
    ///
    /// - Parameter bytes: the block, starting either with `Exif\0\0` or with the TIFF header (`II*\0`, `MM\0*`).
    /// - Throws: ``MetadataError`` when neither header is there.
    package init(_ bytes: [UInt8]) throws(MetadataError) {
        let base = bytes.hasBytes(ascii("Exif\0"), at: 0) ? 6 : 0
        if bytes.hasBytes([0x49, 0x49, 0x2A, 0x00], at: base) {
            self.littleEndian = true
        } else if bytes.hasBytes([0x4D, 0x4D, 0x00, 0x2A], at: base) {
            self.littleEndian = false
        } else {
            throw MetadataError("EXIF", at: base, "no TIFF header")
        }
        self.bytes = bytes
        self.base = base
    }

    // MARK: Reading

    /// The orientation in IFD0 (1 to 8), or `nil` when there is none or it is out of range.
    package var orientation: Int? {
        guard let ifd0 = self.firstIFD, let entry = try? self.entry(Self.orientationTag, in: ifd0),
            let value = self.inlineInteger(in: entry), (1...8).contains(value)
        else { return nil }
        return value
    }

    /// When the picture was taken: the Exif IFD's `DateTimeOriginal` with `OffsetTimeOriginal`, else its
    /// `DateTimeDigitized` (exiftool's `CreateDate`) with `OffsetTimeDigitized`; `nil` when neither is there and
    /// readable.
    package var captureTime: CaptureTime? {
        guard let ifd0 = self.firstIFD, let pointer = try? self.entry(Self.exifPointer, in: ifd0),
            let exif = self.inlineInteger(in: pointer), exif >= 8
        else { return nil }
        for (tag, offsetTag, name) in [
            (0x9003, 0x9011, "EXIF DateTimeOriginal"), (0x9004, 0x9012, "EXIF CreateDate"),
        ] {
            guard let entry = try? self.entry(tag, in: exif), let text = self.text(in: entry) else { continue }
            let offset = (try? self.entry(offsetTag, in: exif)).flatMap { self.text(in: $0) }
            if let time = CaptureTime(exif: text, offset: offset, origin: name) { return time }
        }
        return nil
    }

    /// Whether IFD0 or IFD1 points to a GPS IFD.
    package var hasGPS: Bool {
        self.directories.contains { (try? self.entry(Self.gpsPointer, in: $0)) != nil }
    }

    /// Whether there is an IFD1, the thumbnail's directory.
    package var hasThumbnail: Bool { self.directories.count > 1 }

    /// The offset of IFD0 from the TIFF header, if it is inside the block.
    private var firstIFD: Int? {
        guard let offset = self.integer(at: 4, width: 4), offset >= 8, offset < self.bytes.count - self.base else {
            return nil
        }
        return offset
    }

    /// IFD0 and, when there is one, IFD1: the offsets of those that are whole.
    private var directories: [Int] {
        guard let ifd0 = self.firstIFD, let (_, next) = try? self.directory(at: ifd0) else { return [] }
        guard next != 0, next != ifd0, (try? self.directory(at: next)) != nil else { return [ifd0] }
        return [ifd0, next]
    }

    /// The entry count of the IFD at `offset` and its link to the next IFD (0 for none).
    ///
    /// - Throws: ``MetadataError`` when the IFD does not fit in the block.
    private func directory(at offset: Int) throws(MetadataError) -> (count: Int, next: Int) {
        guard let count = self.integer(at: offset, width: 2),
            let next = self.integer(at: offset + 2 + 12 * count, width: 4)
        else { throw MetadataError("EXIF", at: offset, "an image file directory runs past the end of the block") }
        return (count, next)
    }

    /// The offset of the entry for `tag` in the IFD at `ifd`, or `nil` when it has none.
    private func entry(_ tag: Int, in ifd: Int) throws(MetadataError) -> Int? {
        let (count, _) = try self.directory(at: ifd)
        for index in 0..<count {
            let entry = ifd + 2 + 12 * index
            if self.integer(at: entry, width: 2) == tag { return entry }
        }
        return nil
    }

    /// The value of a `SHORT` or `LONG` entry with one value, which the entry holds itself.
    private func inlineInteger(in entry: Int) -> Int? {
        guard self.integer(at: entry + 4, width: 4) == 1 else { return nil }
        switch self.integer(at: entry + 2, width: 2) {
        case 3: return self.integer(at: entry + 8, width: 2)
        case 4: return self.integer(at: entry + 8, width: 4)
        default: return nil
        }
    }

    /// The text of an `ASCII` entry, up to its first NUL: inline when it has at most 4 bytes, else at the offset the
    /// entry holds; `nil` when it is not ASCII or runs past the block.
    private func text(in entry: Int) -> String? {
        guard self.integer(at: entry + 2, width: 2) == 2, let count = self.integer(at: entry + 4, width: 4),
            count <= 64
        else { return nil }
        let start = count <= 4 ? entry + 8 : self.integer(at: entry + 8, width: 4) ?? -1
        guard start >= 0, self.base + start + count <= self.bytes.count else { return nil }
        let text = self.bytes[(self.base + start)..<(self.base + start + count)].prefix { $0 != 0 }
        return String(decoding: text, as: UTF8.self)
    }

    /// The integer of `width` bytes at `offset` from the TIFF header, in the block's byte order.
    private func integer(at offset: Int, width: Int) -> Int? {
        guard offset >= 0 else { return nil }
        return self.littleEndian
            ? self.bytes.littleEndian(at: self.base + offset, width: width)
            : self.bytes.bigEndian(at: self.base + offset, width: width)
    }

    /// Writes `value` as `width` bytes at `offset` from the TIFF header, in the block's byte order.
    private mutating func setInteger(_ value: Int, at offset: Int, width: Int) {
        var encoded: [UInt8] = []
        if self.littleEndian {
            encoded.appendLittleEndian(value, width: width)
        } else {
            encoded.appendBigEndian(value, width: width)
        }
        self.bytes.replaceSubrange((self.base + offset)..<(self.base + offset + width), with: encoded)
    }

    /// Sets `count` bytes at `offset` from the TIFF header to zero, as far as they are inside the block.
    private mutating func zero(at offset: Int, count: Int) {
        let start = self.base + offset
        guard offset >= 0, count > 0, start < self.bytes.count else { return }
        let end = start + min(count, self.bytes.count - start)
        self.bytes.replaceSubrange(start..<end, with: repeatElement(0, count: end - start))
    }

    // MARK: Removing location

    /// Removes the GPS IFD: the `GPSInfo` pointer from IFD0 and IFD1, and the GPS IFD's bytes (zeroed, so that
    /// nothing else moves). A JPEG thumbnail in IFD1 loses its own metadata (it may carry a GPS IFD of its own).
    ///
    /// - Returns: what was removed: `gps` when a GPS IFD or a thumbnail's metadata was.
    /// - Throws: ``MetadataError`` when IFD0 or IFD1 is malformed.
    package mutating func removeLocation() throws(MetadataError) -> Set<MetadataKind> {
        guard let ifd0 = self.firstIFD else { throw MetadataError("EXIF", at: 4, "IFD0 is outside the block") }
        var removed: Set<MetadataKind> = []
        var directories = [ifd0]
        let (_, next) = try self.directory(at: ifd0)
        if next != 0, next != ifd0 {
            _ = try self.directory(at: next)
            directories.append(next)
        }
        for ifd in directories {
            guard let entry = try self.entry(Self.gpsPointer, in: ifd) else { continue }
            let gps = self.integer(at: entry + 8, width: 4) ?? 0
            try self.removeEntry(at: entry, in: ifd)
            self.zeroDirectory(at: gps)
            removed.insert(.gps)
        }
        if directories.count > 1, try self.stripThumbnail(in: directories[1]) {
            removed.insert(.gps)
        }
        return removed
    }

    /// Takes the entry at `entry` out of the IFD at `ifd`: the later entries and the next-IFD link move up by 12
    /// bytes, and the 12 bytes freed at the end become zero.
    private mutating func removeEntry(at entry: Int, in ifd: Int) throws(MetadataError) {
        let (count, _) = try self.directory(at: ifd)
        let end = self.base + ifd + 2 + 12 * count + 4
        let start = self.base + entry
        let following = Array(self.bytes[(start + 12)..<end])
        self.bytes.replaceSubrange(start..<(start + following.count), with: following)
        self.bytes.replaceSubrange((end - 12)..<end, with: repeatElement(0, count: 12))
        self.setInteger(count - 1, at: ifd, width: 2)
    }

    /// Zeroes the IFD at `offset` and every value it stores outside its entries, as far as they are in the block.
    private mutating func zeroDirectory(at offset: Int) {
        guard offset >= 8, let (count, _) = try? self.directory(at: offset) else { return }
        for index in 0..<count {
            let entry = offset + 2 + 12 * index
            guard let type = self.integer(at: entry + 2, width: 2), let values = self.integer(at: entry + 4, width: 4),
                let size = Self.typeSizes[type], values <= Int(Int32.max) / 8, size * values > 4,
                let position = self.integer(at: entry + 8, width: 4)
            else { continue }
            self.zero(at: position, count: size * values)
        }
        self.zero(at: offset, count: 2 + 12 * count + 4)
    }

    /// Removes the metadata of the JPEG thumbnail that IFD1 at `ifd` embeds, in place: the smaller thumbnail is
    /// written where it was, its length is updated, and the bytes it no longer uses become zero.
    ///
    /// - Returns: whether the thumbnail had metadata. A thumbnail that is not a readable JPEG is left alone.
    private mutating func stripThumbnail(in ifd: Int) throws(MetadataError) -> Bool {
        guard let offsetEntry = try self.entry(Self.thumbnailOffset, in: ifd),
            let lengthEntry = try self.entry(Self.thumbnailLength, in: ifd),
            let offset = self.inlineInteger(in: offsetEntry),
            let length = self.inlineInteger(in: lengthEntry),
            length > 0, offset >= 8, offset <= self.bytes.count - self.base - length
        else { return false }
        let start = self.base + offset
        let thumbnail = Array(self.bytes[start..<(start + length)])
        guard let stripped = try? JPEGMetadata.removing(.strip, from: thumbnail), !stripped.removed.isEmpty,
            stripped.bytes.count <= length
        else { return false }
        self.bytes.replaceSubrange(start..<(start + stripped.bytes.count), with: stripped.bytes)
        self.zero(at: offset + stripped.bytes.count, count: length - stripped.bytes.count)
        let width = self.integer(at: lengthEntry + 2, width: 2) == 3 ? 2 : 4
        self.setInteger(stripped.bytes.count, at: lengthEntry + 8, width: width)
        return true
    }

    /// The size in bytes of one value of each TIFF field type.
    private static let typeSizes: [Int: Int] = [
        1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4,
    ]
}
