/// Whether a file is whole for its type, judged from its structure with a few small reads.
///
/// A file that a copy cut off, or that a writer is still filling, fails these checks: a JPEG must end with its
/// end-of-image marker (a motion photo with the whole video or trailer it declares, see ``MotionPhoto``), a PNG with
/// its `IEND` chunk, a GIF's blocks must lead to its trailer; RIFF (WAV, AVI, WebP) and AIFF files must be as long as
/// their header says; a BMP must also hold the pixels its header describes, a TGA its pixels
/// or its run-length packets (or end with a TGA 2.0 footer); a TIFF's chain of IFDs, the values they point at and
/// every strip or tile must lie within the file (so too for the camera RAW files that are TIFF inside: DNG, CR2,
/// NEF, ARW, ORF, RW2); an ISO media file (MP4, MOV, HEIC, AVIF, CR3) must be a chain of boxes
/// that ends exactly at the end of the file and holds its index (`moov`, or `meta` for still images, whose `iloc`
/// extents must lie within the file); a Matroska or WebM segment must fit in the file (of unknown size: its `Cues`
/// must, and end it); a FLAC file must end with the frame that ends its stream, an Ogg file with a whole page that
/// ends its stream; an MP3 must be as long as its Xing, Info or VBRI header says. Other types (MPEG-TS, MP3 without
/// such a header, …), and structures too large or too odd to check cheaply (an IFD chain that loops), are
/// `unknown`: the quiet period and the check for writers decide alone, and the decoder judges odd files.
package enum Completeness: Sendable, Equatable {
    /// The structure is complete.
    case whole
    /// The structure is cut short; the text says how, for the log.
    case incomplete(String)
    /// This type has no cheap check.
    case unknown

    /// The most boxes of an ISO media file walked before giving up (`unknown`): fragmented files have thousands.
    static let maximumBoxes = 100_000

    /// Judges a file.
    ///
    /// - Parameters:
    ///   - type: the type sniffed from its first bytes.
    ///   - size: its size in bytes.
    ///   - read: reads up to `count` bytes at `offset` (fewer at the end of the file), or `nil` when reading fails.
    package static func judge(_ type: MediaType, size: Int64, read: (_ offset: Int64, _ count: Int) -> [UInt8]?) -> Self
    {
        func tail(_ count: Int) -> [UInt8]? {
            guard size >= Int64(count) else { return nil }
            return read(size - Int64(count), count)
        }
        switch type {
        case .jpeg:
            // Zero padding after the end-of-image marker occurs; a cut-off file ends in the middle of data.
            guard let end = tail(min(Int(size), 64)) else { return .incomplete("the file is too short") }
            let bytes = Array(end.reversed().drop(while: { $0 == 0x00 }).reversed())
            if bytes.suffix(2) == [0xFF, 0xD9] { return .whole }
            // A motion photo ends with its video or Samsung's trailer, which its header or the trailer declares.
            if let trailer = MotionPhoto.trailer(size: size, read: read) {
                return MotionPhoto.judge(trailer, size: size, read: read)
            }
            return .incomplete("no JPEG end-of-image marker at the end")
        case .png:
            let iend: [UInt8] = [0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]
            return tail(12) == iend ? .whole : .incomplete("no PNG IEND chunk at the end")
        case .gif:
            return Self.gif(size: size, read: read)
        case .wav, .avi, .webp:
            return Self.declaredLength(read(0, 8), littleEndian: true, plus: 8, size: size, name: "RIFF")
        case .aiff:
            return Self.declaredLength(read(0, 8), littleEndian: false, plus: 8, size: size, name: "FORM")
        case .bmp:
            return Self.bmp(size: size, read: read)
        case .tga:
            return Self.tga(size: size, read: read)
        case .tiff, .dng, .cr2, .nef, .arw, .orf, .rw2:
            // Camera RAW files of these kinds are TIFF inside (ORF and RW2 with their own magic numbers), with the
            // raw image in a strip of IFD0 or of a sub-IFD.
            return Self.tiff(size: size, read: read)
        case .flac:
            return Self.flac(size: size, read: read)
        case .ogg:
            return Self.ogg(size: size, read: read)
        case .mp3:
            return Self.mp3(size: size, read: read)
        case .mp4, .quicktime, .cr3:
            return Self.isoMedia(type, size: size, read: read)
        case .heif, .avif:
            let boxes = Self.isoMedia(type, size: size, read: read)
            guard boxes == .whole else { return boxes }
            // Whole boxes whose items are not all checked (no readable `iloc`) stay whole, as the boxes say.
            let items = Self.heifItems(size: size, read: read)
            return items == .unknown ? .whole : items
        case .matroska:
            return Self.matroska(size: size, read: read)
        default:
            return .unknown
        }
    }

    /// A RIFF-style header: four bytes of name, then the length of what follows.
    private static func declaredLength(
        _ header: [UInt8]?,
        littleEndian: Bool,
        plus: Int64,
        size: Int64,
        name: String
    ) -> Self {
        guard let header, header.count == 8 else { return .incomplete("the file is too short") }
        let field = Self.integer(header[4..<8], littleEndian: littleEndian)
        // RF64 and streaming writers put 0xFFFFFFFF (unknown) there.
        guard field != 0xFFFF_FFFF, field != 0 else { return .unknown }
        let declared = Int64(field) + plus
        return size >= declared
            ? .whole : .incomplete("the \(name) header declares \(declared) bytes, the file has \(size)")
    }

    /// Walks the top-level boxes of an ISO media file.
    private static func isoMedia(_ type: MediaType, size: Int64, read: (Int64, Int) -> [UInt8]?) -> Self {
        let index = type == .heif || type == .avif ? "meta" : "moov"
        var offset: Int64 = 0
        var sawIndex = false
        for _ in 0..<Self.maximumBoxes {
            if offset == size {
                return sawIndex ? .whole : .incomplete("the file has no '\(index)' box yet")
            }
            guard let header = read(offset, 16), header.count >= 8 else {
                // A few stray bytes after a complete file (an iPhone MOV in the corpus ends with CR LF) are no box;
                // before the index, they are the start of one being written.
                return sawIndex && size - offset < 8 ? .whole : .incomplete("a box header is cut off at byte \(offset)")
            }
            let name = Self.boxName(header[4..<8])
            var length = Int64(Self.integer(header[0..<4], littleEndian: false))
            if length == 1 {
                guard header.count == 16 else { return .incomplete("a box header is cut off at byte \(offset)") }
                length = Int64(bitPattern: Self.integer(header[8..<16], littleEndian: false))
            } else if length == 0 {
                // "To the end of the file": valid as the last box after the index; before it, it is what a writer
                // leaves while it still writes its media data.
                return sawIndex || name == index ? .whole : .incomplete("the '\(name)' box is still open (size 0)")
            }
            guard length >= 8 else { return .incomplete("a box at byte \(offset) has an impossible size") }
            sawIndex = sawIndex || name == index
            let (end, overflow) = offset.addingReportingOverflow(length)
            guard !overflow, end <= size else {
                return .incomplete("the '\(name)' box at byte \(offset) runs past the end of the file")
            }
            offset = end
        }
        return .unknown
    }

    /// A box's four-character type as text, or in hex when it is not printable ASCII (damaged or not a box at all),
    /// so that a message never carries control characters.
    static func boxName(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.allSatisfy { (0x20...0x7E).contains($0) }
            ? String(decoding: bytes, as: UTF8.self)
            : "0x" + bytes.map { ($0 < 0x10 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// Checks that the first Matroska segment fits in the file.
    private static func matroska(size: Int64, read: (Int64, Int) -> [UInt8]?) -> Self {
        // The EBML header element, then the Segment (ID 18 53 80 67) with its size.
        guard let start = read(0, 12), let (headerSize, headerWidth) = Self.vint(start, at: 4) else {
            return .incomplete("the file is too short")
        }
        let segment = 4 + Int64(headerWidth) + headerSize
        guard let element = read(segment, 12), element.count >= 5 else {
            return .incomplete("the segment header is cut off")
        }
        guard element[0..<4] == [0x18, 0x53, 0x80, 0x67] else { return .unknown }
        guard let (length, width) = Self.vint(element, at: 4) else {
            return .incomplete("the segment header is cut off")
        }
        // All ones: "unknown size", as live recorders write it.
        if length == (Int64(1) << (7 * Int64(width))) - 1 {
            return Self.matroskaCues(from: segment + 4 + Int64(width), size: size, read: read)
        }
        let end = segment + 4 + Int64(width) + length
        return size >= end ? .whole : .incomplete("the Matroska segment ends at byte \(end), the file has \(size)")
    }

    /// Judges a Matroska segment of unknown size by its `Cues` element, which writers put after the clusters.
    ///
    /// The segment's `SeekHead` (its first element) says where the `Cues` are: they must lie within the file, and a
    /// file that ends exactly with them is whole. Without a `SeekHead` entry for them, or with `Cues` that end before
    /// the end of the file (written first), nothing can be told: `unknown`.
    private static func matroskaCues(from data: Int64, size: Int64, read: (Int64, Int) -> [UInt8]?) -> Self {
        let seekHeadID: UInt64 = 0x114D_9B74
        let cuesID: UInt64 = 0x1C53_BB6B
        guard let start = read(data, 12), let head = Self.ebmlElement(start, at: 0), head.id == seekHeadID else {
            return .unknown
        }
        let length = head.end - head.start
        guard length <= 1 << 16, data + Int64(head.end) <= size else {
            return length <= 1 << 16 ? .incomplete("the SeekHead is cut off") : .unknown
        }
        guard let seekHead = Self.exactly(read, size: size, offset: data + Int64(head.start), count: Int(length)) else {
            return .incomplete("the SeekHead is cut off")
        }
        var cues: Int64?
        var cursor = 0
        while let seek = Self.ebmlElement(seekHead, at: cursor), seek.end <= seekHead.count {
            cursor = seek.end
            guard seek.id == 0x4DBB else { continue }  // Seek
            var target: UInt64?
            var position: UInt64?
            var inner = seek.start
            while inner < seek.end, let child = Self.ebmlElement(seekHead, at: inner), child.end <= seek.end {
                inner = child.end
                let value = Self.integer(seekHead[child.start..<child.end].suffix(8), littleEndian: false)
                if child.id == 0x53AB { target = value }  // SeekID
                if child.id == 0x53AC { position = value }  // SeekPosition
            }
            if target == cuesID, let position, position <= UInt64(Int64.max - data) { cues = data + Int64(position) }
        }
        guard let cues else { return .unknown }
        guard cues < size, let bytes = read(cues, 12), let element = Self.ebmlElement(bytes, at: 0) else {
            return .incomplete("the Cues element at byte \(cues) is beyond the end of the file (\(size) bytes)")
        }
        guard element.id == cuesID else { return .unknown }
        let end = cues + Int64(element.end)
        guard end <= size else { return .incomplete("the Cues element ends at byte \(end), the file has \(size)") }
        return end == size ? .whole : .unknown
    }

    /// An EBML element at `offset` of `bytes`: its ID (marker bits kept), and where its data starts and ends; `nil`
    /// when its header does not fit in `bytes` or its size is unknown or absurd.
    private static func ebmlElement(_ bytes: [UInt8], at offset: Int) -> (id: UInt64, start: Int, end: Int)? {
        guard offset < bytes.count, bytes[offset] != 0 else { return nil }
        let idWidth = bytes[offset].leadingZeroBitCount + 1
        guard idWidth <= 4, offset + idWidth <= bytes.count,
            let (length, width) = Self.vint(bytes, at: offset + idWidth),
            length < Int64(Int32.max)
        else { return nil }
        let id = Self.integer(bytes[offset..<(offset + idWidth)], littleEndian: false)
        let start = offset + idWidth + width
        return (id, start, start + Int(length))
    }

    /// An EBML variable-length integer at `offset`: its value (marker bit removed) and width in bytes.
    private static func vint(_ bytes: [UInt8], at offset: Int) -> (Int64, Int)? {
        guard offset < bytes.count, bytes[offset] != 0 else { return nil }
        let width = bytes[offset].leadingZeroBitCount + 1
        guard offset + width <= bytes.count else { return nil }
        var value = Int64(bytes[offset] & (0xFF >> width))
        for byte in bytes[(offset + 1)..<(offset + width)] {
            value = value << 8 | Int64(byte)
        }
        return (value, width)
    }

    /// Exactly `count` bytes at `offset`, or `nil` when the file has fewer there or reading fails.
    static func exactly(
        _ read: (Int64, Int) -> [UInt8]?,
        size: Int64,
        offset: Int64,
        count: Int
    ) -> [UInt8]? {
        guard offset >= 0, count >= 0, Int64(count) <= size, offset <= size - Int64(count) else { return nil }
        guard let bytes = read(offset, count), bytes.count == count else { return nil }
        return bytes
    }

    static func integer(_ bytes: ArraySlice<UInt8>, littleEndian: Bool) -> UInt64 {
        let ordered = littleEndian ? Array(bytes.reversed()) : Array(bytes)
        return ordered.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
