extension Completeness {
    /// The most bytes of TGA run-length packets walked before giving up (`unknown`).
    static let maximumTGAWalk: Int64 = 64 << 20
    /// The largest `iloc` box of a HEIF or AVIF file read; an iPhone grid of 48 tiles needs a few kilobytes.
    static let maximumItemLocations = 1 << 20

    /// The most bytes of GIF blocks walked before giving up (`unknown`).
    static let maximumGIFWalk: Int64 = 256 << 20

    /// Checks a GIF file by walking its blocks (extensions, images and their data sub-blocks) to its trailer.
    ///
    /// A trailer byte (`;`, 0x3B) at the end alone proves nothing: it is as likely as any other byte where a copy is
    /// cut. The walk reads the file in windows of 64 KiB, so a large animation costs a few reads.
    static func gif(size: Int64, read: (Int64, Int) -> [UInt8]?) -> Self {
        var window: [UInt8] = []
        var windowStart: Int64 = 0
        /// The byte at `offset`, or `nil` past the end of the file.
        func byte(_ offset: Int64) -> UInt8? {
            guard offset < size else { return nil }
            if offset < windowStart || offset >= windowStart + Int64(window.count) {
                guard let bytes = read(offset, 64 << 10), !bytes.isEmpty else { return nil }
                window = bytes
                windowStart = offset
            }
            return window[Int(offset - windowStart)]
        }
        /// Skips a chain of data sub-blocks starting at `offset`; returns the offset after its terminator.
        func subBlocks(_ start: Int64) -> Int64? {
            var offset = start
            while let length = byte(offset) {
                offset += 1 + Int64(length)
                if length == 0 { return offset }
            }
            return nil
        }
        let cut = Self.incomplete("the GIF's blocks are cut off before its trailer")
        guard size >= 13, let flags = byte(10) else { return .incomplete("the file is too short") }
        var offset: Int64 = 13 + (flags & 0x80 != 0 ? 3 << (Int64(flags & 0x07) + 1) : 0)
        while offset <= Self.maximumGIFWalk {
            guard let introducer = byte(offset) else { return cut }
            switch introducer {
            case 0x3B:
                return .whole
            case 0x21:
                // An extension: its label, then its data sub-blocks.
                guard let next = subBlocks(offset + 2) else { return cut }
                offset = next
            case 0x2C:
                // An image: its descriptor (10 bytes), a local colour table, the LZW code size, its data sub-blocks.
                guard let packed = byte(offset + 9) else { return cut }
                let table: Int64 = packed & 0x80 != 0 ? 3 << (Int64(packed & 0x07) + 1) : 0
                guard let next = subBlocks(offset + 10 + table + 1) else { return cut }
                offset = next
            default:
                // Not a block: a damaged file, which the decoder judges.
                return .unknown
            }
        }
        return .unknown
    }

    /// Checks a BMP file: it must be as long as its header says, and hold all the pixels its header describes.
    ///
    /// The pixel array starts where the file header says; its length is computed from the width, height and bit
    /// count for uncompressed pixels, or taken from the info header for compressed ones (RLE, embedded JPEG or PNG).
    static func bmp(size: Int64, read: (Int64, Int) -> [UInt8]?) -> Self {
        guard let header = Self.exactly(read, size: size, offset: 0, count: 26) else {
            return .incomplete("the file is too short")
        }
        let declared = Int64(Self.integer(header[2..<6], littleEndian: true))
        // Some writers leave the field 0.
        if declared > 0, size < declared {
            return .incomplete("the BMP header declares \(declared) bytes, the file has \(size)")
        }
        let pixelsAt = Int64(Self.integer(header[10..<14], littleEndian: true))
        let infoSize = Self.integer(header[14..<18], littleEndian: true)
        let fallback: Self = declared > 0 ? .whole : .unknown
        let width: Int64
        let height: Int64
        let bitCount: Int64
        var compression: UInt64 = 0
        var imageSize: Int64 = 0
        if infoSize == 12 {
            // BITMAPCOREHEADER (OS/2 1.x): 16-bit width and height.
            width = Int64(Self.integer(header[18..<20], littleEndian: true))
            height = Int64(Self.integer(header[20..<22], littleEndian: true))
            bitCount = Int64(Self.integer(header[24..<26], littleEndian: true))
        } else if infoSize >= 40 {
            guard let info = Self.exactly(read, size: size, offset: 14, count: 40) else {
                return .incomplete("the BMP info header is cut off")
            }
            width = Int64(Int32(bitPattern: UInt32(Self.integer(info[4..<8], littleEndian: true))).magnitude)
            // Negative for rows stored top-down.
            height = Int64(Int32(bitPattern: UInt32(Self.integer(info[8..<12], littleEndian: true))).magnitude)
            bitCount = Int64(Self.integer(info[14..<16], littleEndian: true))
            compression = Self.integer(info[16..<20], littleEndian: true)
            imageSize = Int64(Self.integer(info[20..<24], littleEndian: true))
            // OS/2 2.x headers (64 bytes) number their compressions differently: only trust "none" there.
            if infoSize == 64, compression != 0 { compression = .max }
        } else {
            return fallback
        }
        let length: Int64
        switch compression {
        case 0, 3, 6:
            // Uncompressed, or bit fields: rows padded to four bytes.
            let (bits, overflow) = width.multipliedReportingOverflow(by: bitCount)
            guard !overflow else { return .unknown }
            let (total, overflow2) = ((bits + 31) / 32 * 4).multipliedReportingOverflow(by: height)
            guard !overflow2 else { return .unknown }
            length = total
        default:
            guard imageSize > 0 else { return fallback }
            length = imageSize
        }
        let (end, overflow) = pixelsAt.addingReportingOverflow(length)
        guard !overflow else { return .unknown }
        return size >= end ? .whole : .incomplete("the BMP pixels end at byte \(end), the file has \(size)")
    }

    /// Checks a TGA file: a TGA 2.0 footer is written last and proves the file whole; otherwise the pixels the
    /// header describes must all be there, counted through the run-length packets for compressed images.
    static func tga(size: Int64, read: (Int64, Int) -> [UInt8]?) -> Self {
        guard let header = Self.exactly(read, size: size, offset: 0, count: 18) else {
            return .incomplete("the file is too short")
        }
        if size >= 18 + 26, let footer = Self.exactly(read, size: size, offset: size - 26, count: 26),
            footer[8...] == Array("TRUEVISION-XFILE.\0".utf8)[...]
        {
            return .whole
        }
        let colourMapBytes =
            header[1] == 1
            ? Int64(Self.integer(header[5..<7], littleEndian: true)) * ((Int64(header[7]) + 7) / 8) : 0
        let start = 18 + Int64(header[0]) + colourMapBytes
        let pixels =
            Int64(Self.integer(header[12..<14], littleEndian: true))
            * Int64(Self.integer(header[14..<16], littleEndian: true))
        let pixelBytes = (Int64(header[16]) + 7) / 8
        switch header[2] {
        case 0:
            return .whole  // no image data
        case 1, 2, 3:
            let end = start + pixels * pixelBytes
            return size >= end ? .whole : .incomplete("the TGA pixels end at byte \(end), the file has \(size)")
        case 9, 10, 11:
            return Self.tgaPackets(from: start, pixels: pixels, pixelBytes: pixelBytes, size: size, read: read)
        default:
            return .unknown
        }
    }

    /// Walks the run-length packets of a TGA image until they hold `pixels` pixels, reading only packet headers, a
    /// block at a time.
    private static func tgaPackets(
        from start: Int64,
        pixels: Int64,
        pixelBytes: Int64,
        size: Int64,
        read: (Int64, Int) -> [UInt8]?
    ) -> Self {
        var position = start
        var remaining = pixels
        var block: [UInt8] = []
        var blockStart: Int64 = 0
        while remaining > 0 {
            guard position - start <= Self.maximumTGAWalk else { return .unknown }
            if position < blockStart || position >= blockStart + Int64(block.count) {
                guard position < size, let bytes = read(position, 64 << 10), !bytes.isEmpty else {
                    return .incomplete("the TGA run-length data ends before all its pixels, at byte \(position)")
                }
                block = bytes
                blockStart = position
            }
            let packet = block[Int(position - blockStart)]
            let count = Int64(packet & 0x7F) + 1
            position += 1 + (packet & 0x80 != 0 ? pixelBytes : count * pixelBytes)
            remaining -= count
        }
        return size >= position
            ? .whole : .incomplete("the TGA run-length data ends at byte \(position), the file has \(size)")
    }

    /// Checks that every item extent that a HEIF or AVIF file's `iloc` box places in the file lies within it.
    ///
    /// The top-level boxes fit the file (``isoMedia``), but a last `mdat` of size 0 ("to the end of the file"), or a
    /// file cut just after its `meta` box, says nothing about whether the coded images are all there.
    static func heifItems(size: Int64, read: (Int64, Int) -> [UInt8]?) -> Self {
        guard let meta = Self.box("meta", in: 0..<size, skipping: 4, size: size, read: read),
            let iloc = Self.box("iloc", in: meta, skipping: 0, size: size, read: read)
        else { return .unknown }
        guard iloc.count <= Int64(Self.maximumItemLocations),
            let bytes = Self.exactly(read, size: size, offset: iloc.lowerBound, count: Int(iloc.count))
        else { return .unknown }
        var cursor = 0
        func take(_ count: Int) -> UInt64? {
            guard count >= 0, cursor + count <= bytes.count else { return nil }
            defer { cursor += count }
            return Self.integer(bytes[cursor..<(cursor + count)], littleEndian: false)
        }
        guard let version = take(1), take(3) != nil, let sizes = take(1), let sizes2 = take(1) else { return .unknown }
        let offsetSize = Int(sizes >> 4)
        let lengthSize = Int(sizes & 0x0F)
        let baseOffsetSize = Int(sizes2 >> 4)
        let indexSize = version >= 1 ? Int(sizes2 & 0x0F) : 0
        // ISO/IEC 14496-12 allows 0, 4 or 8 bytes for each; an extent must take at least one byte, or a few hostile
        // bytes would ask for billions of turns of the loop below.
        let extentSize = indexSize + offsetSize + lengthSize
        guard [offsetSize, lengthSize, baseOffsetSize, indexSize].allSatisfy({ [0, 4, 8].contains($0) }),
            extentSize > 0,
            let itemCount = take(version < 2 ? 2 : 4)
        else { return .unknown }
        for _ in 0..<itemCount {
            guard take(version < 2 ? 2 : 4) != nil else { return .unknown }
            var method: UInt64 = 0
            if version >= 1 {
                guard let field = take(2) else { return .unknown }
                method = field & 0x0F
            }
            guard take(2) != nil, let base = take(baseOffsetSize), let extents = take(2),
                Int(extents) * extentSize <= bytes.count - cursor
            else { return .unknown }
            for _ in 0..<extents {
                guard take(indexSize) != nil, let offset = take(offsetSize), let length = take(lengthSize) else {
                    return .unknown
                }
                // Only method 0 places data in the file; a length of 0 means "to the end of the file".
                guard method == 0, length > 0 else { continue }
                let (start, overflow) = base.addingReportingOverflow(offset)
                guard !overflow, start <= UInt64(size), length <= UInt64(size) - start else {
                    return .incomplete("an image item's data ends beyond the end of the file (\(size) bytes)")
                }
            }
        }
        return .whole
    }

    /// The content of the first box named `name` among the boxes in `range`, without its first `skipping` bytes (4
    /// for the version and flags of a full box whose children are wanted), or `nil` when there is none or the boxes
    /// there cannot be walked.
    private static func box(
        _ name: String,
        in range: Range<Int64>,
        skipping: Int64,
        size: Int64,
        read: (Int64, Int) -> [UInt8]?
    ) -> Range<Int64>? {
        var offset = range.lowerBound
        for _ in 0..<1024 where offset + 8 <= range.upperBound {
            guard
                let header = Self.exactly(
                    read,
                    size: size,
                    offset: offset,
                    count: Int(min(16, range.upperBound - offset))
                )
            else { return nil }
            var length = Int64(Self.integer(header[0..<4], littleEndian: false))
            var headerLength: Int64 = 8
            if length == 1, header.count == 16 {
                length = Int64(bitPattern: Self.integer(header[8..<16], littleEndian: false))
                headerLength = 16
            } else if length == 0 {
                length = range.upperBound - offset
            }
            guard length >= headerLength, length <= range.upperBound - offset else { return nil }
            if header[4..<8] == Array(name.utf8)[...] {
                let contentStart = offset + headerLength + skipping
                return contentStart <= offset + length ? contentStart..<(offset + length) : nil
            }
            offset += length
        }
        return nil
    }
}
