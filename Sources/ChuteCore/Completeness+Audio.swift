extension Completeness {
    /// The most metadata blocks of a FLAC file walked before giving up (`unknown`).
    static let maximumFLACBlocks = 1024
    /// The most candidate last frames or pages whose checksum is computed over the tail before giving up.
    static let maximumTailChecksums = 4
    /// The longest possible Ogg page: a 27-byte header, 255 lacing values and 255 segments of 255 bytes.
    static let maximumOggPage = 27 + 255 + 255 * 255

    /// Checks a FLAC file: its metadata blocks must fit in the file, and its last frame must end the stream.
    ///
    /// `STREAMINFO` gives the stream's length in samples. The tail of the file is searched, from the end, for a frame
    /// header (with a valid CRC-8) whose first sample plus block size is that length and whose frame checksum (the
    /// CRC-16 in the last two bytes of the file, over the whole frame) matches: a file cut anywhere has no such
    /// frame. An ID3v1 or APEv2 tag after the last frame is skipped. Streams whose length is not recorded (0), or
    /// tails with no frame header at all, are `unknown`.
    static func flac(size: Int64, read: (Int64, Int) -> [UInt8]?) -> Self {
        var offset: Int64 = 4
        var streamInfo: [UInt8]?
        var sawLast = false
        for _ in 0..<Self.maximumFLACBlocks where !sawLast {
            guard let header = Self.exactly(read, size: size, offset: offset, count: 4) else {
                return .incomplete("a FLAC metadata block header is cut off at byte \(offset)")
            }
            let length = Int64(Self.integer(header[1..<4], littleEndian: false))
            let type = header[0] & 0x7F
            guard type != 127 else { return .unknown }
            if type == 0, length >= 34 {
                streamInfo = Self.exactly(read, size: size, offset: offset + 4, count: 34)
            }
            offset += 4 + length
            guard offset <= size else {
                return .incomplete("a FLAC metadata block runs past the end of the file (\(size) bytes)")
            }
            sawLast = header[0] & 0x80 != 0
        }
        guard sawLast, let streamInfo else { return .unknown }
        let maximumBlock = Self.integer(streamInfo[2..<4], littleEndian: false)
        let maximumFrame = Int64(Self.integer(streamInfo[7..<10], littleEndian: false))
        let totalSamples = Self.integer(streamInfo[10..<18], littleEndian: false) & 0xF_FFFF_FFFF
        guard totalSamples > 0 else { return .unknown }
        guard offset < size else { return .incomplete("the FLAC file has no audio frames yet") }

        var end = size
        if size - offset >= 128, Self.exactly(read, size: size, offset: size - 128, count: 3) == Array("TAG".utf8) {
            end -= 128  // an ID3v1 tag after the last frame
        }
        if end - offset >= 32, let footer = Self.exactly(read, size: size, offset: end - 32, count: 32),
            footer[0..<8] == Array("APETAGEX".utf8)[...]
        {
            // An APEv2 tag: its size counts its items and this footer; a header of 32 bytes may precede them.
            let length = Int64(Self.integer(footer[12..<16], littleEndian: true))
            let header: Int64 = footer[23] & 0x80 != 0 ? 32 : 0  // flags bit 31
            guard length + header <= end - offset else { return .unknown }
            end -= length + header
        }
        let window = min(end - offset, maximumFrame > 0 ? min(maximumFrame + 32, 16 << 20) : 1 << 20)
        guard let tail = Self.exactly(read, size: size, offset: end - window, count: Int(window)), tail.count >= 2
        else { return .incomplete("the end of the FLAC file cannot be read") }
        let storedChecksum = UInt16(Self.integer(tail[(tail.count - 2)...], littleEndian: false))
        var headers = 0
        var checksums = 0
        var position = tail.count - 2
        while position > 0 {
            position -= 1
            guard tail[position] == 0xFF, tail[position + 1] & 0xFE == 0xF8,
                let (first, samples) = Self.flacFrame(tail, at: position, fixedBlock: maximumBlock)
            else { continue }
            headers += 1
            let (end, overflow) = first.addingReportingOverflow(samples)
            guard !overflow, end == totalSamples else { continue }
            guard checksums < Self.maximumTailChecksums else { return .unknown }
            checksums += 1
            if Self.crc16(tail[position..<(tail.count - 2)]) == storedChecksum { return .whole }
        }
        guard headers > 0 else { return .unknown }
        return .incomplete("no FLAC frame at the end of the file ends the stream of \(totalSamples) samples")
    }

    /// Parses a FLAC frame header at `position`: its first sample and its block size, or `nil` when the bytes there
    /// are no valid header (reserved values, or a CRC-8 that does not match).
    private static func flacFrame(_ bytes: [UInt8], at position: Int, fixedBlock: UInt64) -> (UInt64, UInt64)? {
        guard position + 5 <= bytes.count else { return nil }
        let variable = bytes[position + 1] & 0x01 == 1
        let blockCode = bytes[position + 2] >> 4
        let rateCode = bytes[position + 2] & 0x0F
        let channels = bytes[position + 3] >> 4
        let sampleSize = (bytes[position + 3] >> 1) & 0x07
        guard blockCode != 0, rateCode != 15, channels <= 10, sampleSize != 3, bytes[position + 3] & 1 == 0 else {
            return nil
        }
        // The frame or sample number, UTF-8 coded in 1 to 7 bytes.
        var cursor = position + 4
        let lead = bytes[cursor]
        var number: UInt64
        var continuation: Int
        switch lead {
        case 0x00...0x7F: (number, continuation) = (UInt64(lead), 0)
        case 0xC0...0xDF: (number, continuation) = (UInt64(lead & 0x1F), 1)
        case 0xE0...0xEF: (number, continuation) = (UInt64(lead & 0x0F), 2)
        case 0xF0...0xF7: (number, continuation) = (UInt64(lead & 0x07), 3)
        case 0xF8...0xFB: (number, continuation) = (UInt64(lead & 0x03), 4)
        case 0xFC...0xFD: (number, continuation) = (UInt64(lead & 0x01), 5)
        case 0xFE: (number, continuation) = (0, 6)
        default: return nil
        }
        cursor += 1
        guard cursor + continuation <= bytes.count else { return nil }
        for byte in bytes[cursor..<(cursor + continuation)] {
            guard byte & 0xC0 == 0x80 else { return nil }
            number = number << 6 | UInt64(byte & 0x3F)
        }
        cursor += continuation
        let blockBytes = blockCode == 6 ? 1 : blockCode == 7 ? 2 : 0
        let rateBytes = rateCode == 12 ? 1 : rateCode == 13 || rateCode == 14 ? 2 : 0
        guard cursor + blockBytes + rateBytes < bytes.count else { return nil }
        let samples: UInt64 =
            switch blockCode {
            case 1: 192
            case 2...5: 576 << (UInt64(blockCode) - 2)
            case 6, 7: Self.integer(bytes[cursor..<(cursor + blockBytes)], littleEndian: false) + 1
            default: 256 << (UInt64(blockCode) - 8)
            }
        cursor += blockBytes + rateBytes
        guard Self.crc8(bytes[position..<cursor]) == bytes[cursor] else { return nil }
        if variable { return (number, samples) }
        guard fixedBlock > 0 else { return nil }
        let (first, overflow) = number.multipliedReportingOverflow(by: fixedBlock)
        return overflow ? nil : (first, samples)
    }

    /// Checks an Ogg file: it must end with a whole page (its checksum matching) that ends its logical stream.
    ///
    /// A page is at most 65,307 bytes, so only that much of the tail is read. A file cut between pages ends with a
    /// whole page that does not carry the end-of-stream flag.
    static func ogg(size: Int64, read: (Int64, Int) -> [UInt8]?) -> Self {
        let window = min(size, Int64(Self.maximumOggPage))
        guard let tail = Self.exactly(read, size: size, offset: size - window, count: Int(window)) else {
            return .incomplete("the end of the Ogg file cannot be read")
        }
        var checksums = 0
        var position = tail.count - 27
        while position >= 0 {
            defer { position -= 1 }
            guard tail[position] == 0x4F, tail[position..<(position + 4)] == [0x4F, 0x67, 0x67, 0x53] else {
                continue
            }
            let segments = Int(tail[position + 26])
            guard position + 27 + segments <= tail.count else { continue }
            let length = 27 + segments + tail[(position + 27)..<(position + 27 + segments)].reduce(0) { $0 + Int($1) }
            guard position + length == tail.count else { continue }
            guard checksums < Self.maximumTailChecksums else { return .unknown }
            checksums += 1
            var page = Array(tail[position...])
            let stored = UInt32(Self.integer(page[22..<26], littleEndian: true))
            page.replaceSubrange(22..<26, with: [0, 0, 0, 0])
            guard Self.crc32(page[...]) == stored else { continue }
            return page[5] & 0x04 != 0
                ? .whole : .incomplete("the last Ogg page does not end its stream")
        }
        return .incomplete("the file does not end with a whole Ogg page")
    }

    /// Checks an MP3 file against the length in bytes that its Xing, Info (LAME, FFmpeg) or VBRI header declares.
    ///
    /// The header sits in the first frame, after any ID3v2 tag. Files without one (or whose header does not record
    /// the length) are `unknown`: counting frames would mean reading the whole file.
    static func mp3(size: Int64, read: (Int64, Int) -> [UInt8]?) -> Self {
        var start: Int64 = 0
        if let tag = Self.exactly(read, size: size, offset: 0, count: 10), tag[0..<3] == [0x49, 0x44, 0x33] {
            let length = tag[6..<10].reduce(Int64(0)) { $0 << 7 | Int64($1 & 0x7F) }
            start = 10 + length + (tag[5] & 0x10 != 0 ? 10 : 0)
        }
        guard start < size else { return .incomplete("the ID3 tag runs past the end of the file (\(size) bytes)") }
        guard let frame = read(start, 64), frame.count >= 4, frame[0] == 0xFF, frame[1] & 0xE0 == 0xE0 else {
            return .unknown
        }
        let version = (frame[1] >> 3) & 0x03  // 3: MPEG-1; 2: MPEG-2; 0: MPEG-2.5
        let layer = (frame[1] >> 1) & 0x03  // 1: Layer III
        let mono = frame[3] >> 6 == 3
        var declared: UInt64?
        let xing = layer == 1 ? (version == 3 ? (mono ? 21 : 36) : (mono ? 13 : 21)) : 36
        if frame.count >= xing + 16,
            frame[xing..<(xing + 4)] == Array("Xing".utf8)[...]
                || frame[xing..<(xing + 4)] == Array("Info".utf8)[...]
        {
            let flags = Self.integer(frame[(xing + 4)..<(xing + 8)], littleEndian: false)
            let field = xing + 8 + (flags & 0x01 != 0 ? 4 : 0)
            if flags & 0x02 != 0 { declared = Self.integer(frame[field..<(field + 4)], littleEndian: false) }
        } else if frame.count >= 50, frame[36..<40] == Array("VBRI".utf8)[...] {
            declared = Self.integer(frame[46..<50], littleEndian: false)
        }
        guard let declared, declared > 0 else { return .unknown }
        let end = start + Int64(declared)
        return size >= end
            ? .whole : .incomplete("the MP3's Xing or VBRI header puts its end at byte \(end), the file has \(size)")
    }

    /// The CRC-8 of FLAC frame headers: polynomial x⁸ + x² + x + 1, initial value 0.
    private static func crc8(_ bytes: ArraySlice<UInt8>) -> UInt8 {
        var crc: UInt8 = 0
        for byte in bytes {
            crc ^= byte
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? crc << 1 ^ 0x07 : crc << 1 }
        }
        return crc
    }

    private static let crc16Table = Self.crcTable(polynomial: UInt16(0x8005))
    private static let crc32Table = Self.crcTable(polynomial: UInt32(0x04C1_1DB7))

    /// The CRC-16 of FLAC frames: polynomial 0x8005, initial value 0, not reflected.
    private static func crc16(_ bytes: ArraySlice<UInt8>) -> UInt16 { Self.crc(bytes, table: Self.crc16Table) }

    /// The CRC-32 of Ogg pages: polynomial 0x04C11DB7, initial value 0, not reflected.
    private static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 { Self.crc(bytes, table: Self.crc32Table) }

    /// The table of a most-significant-bit-first CRC with `polynomial`, one entry per value of the top byte.
    private static func crcTable<CRC: FixedWidthInteger & UnsignedInteger>(polynomial: CRC) -> [CRC] {
        (0..<256).map { index in
            var crc = CRC(index) << (CRC.bitWidth - 8)
            for _ in 0..<8 { crc = crc & (1 << (CRC.bitWidth - 1)) != 0 ? crc << 1 ^ polynomial : crc << 1 }
            return crc
        }
    }

    /// A most-significant-bit-first, non-reflected CRC of `bytes` from initial value 0, with `table` from
    /// ``crcTable(polynomial:)``.
    private static func crc<CRC: FixedWidthInteger & UnsignedInteger>(_ bytes: ArraySlice<UInt8>, table: [CRC]) -> CRC {
        var crc: CRC = 0
        for byte in bytes {
            crc = crc << 8 ^ table[Int(UInt8(truncatingIfNeeded: crc >> (CRC.bitWidth - 8)) ^ byte)]
        }
        return crc
    }
}
