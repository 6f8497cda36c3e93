/// The video that a phone appends to a JPEG still to make a motion photo, found from the still's own description,
/// or that it puts in a HEIC or AVIF still's own box.
///
/// Google's format (Pixel, and most Android phones since) declares the video in the JPEG's XMP: a
/// `Container:Directory` item whose `Item:Semantic` is `MotionPhoto` gives the video's `Item:Length`, counted back
/// from the end of the file; the older `GCamera:MicroVideoOffset` gives the same number. Samsung ends the file with
/// its SEF trailer (`SEFH` directory, its length, `SEFT`), written after the video, whose entries point back at the
/// data before it. Either way the appended bytes follow the JPEG's end-of-image marker, so the file no longer ends
/// with one. A HEIC or AVIF motion photo (Google's format 1.0, as Android phones write it) keeps its video in a
/// top-level `mpvd` box after the image's boxes, which its XMP's `Container:Directory` counts as the video item's
/// padding.
package enum MotionPhoto {
    /// Where the appended data lies.
    package enum Trailer: Sendable, Equatable {
        /// Google's layout: the video is the file's last `length` bytes.
        case video(length: Int64)
        /// Samsung's SEF trailer: the directory starts at `directory`, and its entries' data lies before it;
        /// `video` when one of them is the embedded video (type `0x0A30`, `MotionPhoto_Data`).
        case samsung(directory: Int64, video: Bool)

        /// Whether the trailer holds a video (a SEF trailer may hold only other data, such as a capture time).
        package var holdsVideo: Bool {
            switch self {
            case .video: true
            case .samsung(_, let video): video
            }
        }
    }

    /// The SEF entry type of Samsung's embedded video.
    static let samsungVideoType: UInt64 = 0x0A30

    /// The most bytes of marker segments walked for the XMP before the first scan: a phone's EXIF with its
    /// thumbnail, the XMP and its extension, the ICC profile and maker segments fit well within this.
    static let maximumHeaderWalk: Int64 = 4 << 20
    /// The largest SEF directory read: each entry takes 12 bytes; phones write a handful.
    static let maximumSamsungDirectory: Int64 = 1 << 16

    private static let xmpHeader = Array("http://ns.adobe.com/xap/1.0/\0".utf8)

    /// The trailer that a JPEG's own description declares, or `nil` when it declares none.
    ///
    /// A Samsung SEF trailer counts only when its end (`SEFT` and the directory's length) is at the end of the file
    /// and the directory it points at starts with `SEFH`; Google's declaration is read from the XMP before the first
    /// scan, so a cut-off file still declares its video.
    ///
    /// - Parameters:
    ///   - size: the file's size in bytes.
    ///   - read: reads up to `count` bytes at `offset` (fewer at the end of the file), or `nil` when reading fails.
    package static func trailer(size: Int64, read: (_ offset: Int64, _ count: Int) -> [UInt8]?) -> Trailer? {
        if let directory = Self.samsungDirectory(size: size, read: read) {
            let entries = Self.samsungEntries(directory: directory, size: size, read: read) ?? []
            return .samsung(directory: directory, video: entries.contains { $0.type == Self.samsungVideoType })
        }
        guard let length = Self.declaredVideoLength(size: size, read: read), length > 0 else { return nil }
        return .video(length: length)
    }

    /// The trailer that the JPEG in `bytes` declares; see ``trailer(size:read:)``.
    package static func trailer(in bytes: [UInt8]) -> Trailer? {
        Self.trailer(size: Int64(bytes.count)) { offset, count in
            guard offset >= 0, offset <= Int64(bytes.count) else { return nil }
            return Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + count)])
        }
    }

    /// The box type of a HEIC or AVIF motion photo's video.
    private static let videoBox = Array("mpvd".utf8)

    /// Whether a HEIC or AVIF file holds a motion photo's video: a top-level `mpvd` box whose content is an ISO
    /// media file (it starts with an `ftyp` box).
    package static func holdsVideo(inHEIF bytes: [UInt8]) -> Bool {
        var offset = 0
        for _ in 0..<Completeness.maximumBoxes {
            guard offset + 8 <= bytes.count else { return false }
            var length = Int(Completeness.integer(bytes[offset..<(offset + 4)], littleEndian: false))
            var header = 8
            if length == 1 {
                guard offset + 16 <= bytes.count else { return false }
                length = Int(clamping: Completeness.integer(bytes[(offset + 8)..<(offset + 16)], littleEndian: false))
                header = 16
            } else if length == 0 {
                length = bytes.count - offset
            }
            guard length >= header else { return false }
            if Array(bytes[(offset + 4)..<(offset + 8)]) == Self.videoBox {
                let content = offset + header
                return content + 8 <= bytes.count && Array(bytes[(content + 4)..<(content + 8)]) == Array("ftyp".utf8)
            }
            let (end, overflow) = offset.addingReportingOverflow(length)
            guard !overflow else { return false }
            offset = end
        }
        return false
    }

    /// Judges whether the appended data is all there: a Google video must be a whole ISO media file (an `ftyp`
    /// box, then boxes that end exactly at the end of the file and hold a `moov`); every entry of a Samsung
    /// directory must lie between the start of the file and the directory.
    static func judge(_ trailer: Trailer, size: Int64, read: (Int64, Int) -> [UInt8]?) -> Completeness {
        switch trailer {
        case .video(let length):
            guard length <= size else {
                return .incomplete("the motion photo's video (\(length) bytes) is longer than the file (\(size))")
            }
            let start = size - length
            guard read(start + 4, 4) == Array("ftyp".utf8) else {
                return .incomplete("the motion photo's video does not start \(length) bytes before the end")
            }
            let video = Completeness.judge(.mp4, size: length) { offset, count in read(start + offset, count) }
            if case .incomplete(let reason) = video {
                return .incomplete("the motion photo's video is cut off: \(reason)")
            }
            return video
        case .samsung(let directory, _):
            guard let entries = Self.samsungEntries(directory: directory, size: size, read: read) else {
                return .incomplete("the Samsung trailer's directory lists more entries than it holds")
            }
            let outside = entries.contains { $0.back > directory || $0.length > $0.back }
            return outside ? .incomplete("a Samsung trailer entry lies outside the file") : .whole
        }
    }

    /// The entries of the SEF directory at `directory`: each one's type, how far before the directory its data
    /// starts, and its length; `nil` when the directory cannot hold the entries it counts.
    private static func samsungEntries(
        directory: Int64,
        size: Int64,
        read: (Int64, Int) -> [UInt8]?
    ) -> [(type: UInt64, back: Int64, length: Int64)]? {
        guard let bytes = Completeness.exactly(read, size: size, offset: directory, count: Int(size - 8 - directory)),
            bytes.count >= 12
        else { return nil }
        let count = Int(Completeness.integer(bytes[8..<12], littleEndian: true))
        guard count <= (bytes.count - 12) / 12 else { return nil }
        return (0..<count).map { entry in
            let at = 12 + 12 * entry
            return (
                type: Completeness.integer(bytes[(at + 2)..<(at + 4)], littleEndian: true),
                back: Int64(Completeness.integer(bytes[(at + 4)..<(at + 8)], littleEndian: true)),
                length: Int64(Completeness.integer(bytes[(at + 8)..<(at + 12)], littleEndian: true))
            )
        }
    }

    /// The start of a Samsung SEF directory whose end is the end of the file: `SEFH` there, and the file ending
    /// with the directory's length (little-endian) and `SEFT`.
    private static func samsungDirectory(size: Int64, read: (Int64, Int) -> [UInt8]?) -> Int64? {
        guard size >= 20, let end = Completeness.exactly(read, size: size, offset: size - 8, count: 8),
            end[4..<8] == Array("SEFT".utf8)[...]
        else { return nil }
        let length = Int64(Completeness.integer(end[0..<4], littleEndian: true))
        guard length >= 12, length <= Self.maximumSamsungDirectory, length <= size - 8 else { return nil }
        let directory = size - 8 - length
        guard read(directory, 4) == Array("SEFH".utf8) else { return nil }
        return directory
    }

    /// The video length that the XMP of a JPEG declares (`Item:Length` of the `MotionPhoto` item, or
    /// `GCamera:MicroVideoOffset`), walking the marker segments from the start of the file to its first scan.
    static func declaredVideoLength(size: Int64, read: (Int64, Int) -> [UInt8]?) -> Int64? {
        guard read(0, 2) == [0xFF, 0xD8] else { return nil }
        var offset: Int64 = 2
        while offset < min(size, Self.maximumHeaderWalk) {
            guard let header = Completeness.exactly(read, size: size, offset: offset, count: 4), header[0] == 0xFF,
                header[1] != 0xDA, header[1] != 0xD9
            else { return nil }
            let length = Int64(Completeness.integer(header[2..<4], littleEndian: false))
            guard length >= 2 else { return nil }
            if header[1] == 0xE1, length > Int64(Self.xmpHeader.count) + 2,
                let payload = Completeness.exactly(read, size: size, offset: offset + 4, count: Int(length - 2)),
                payload.starts(with: Self.xmpHeader)
            {
                let packet = String(decoding: payload.dropFirst(Self.xmpHeader.count), as: UTF8.self)
                if let length = Self.videoLength(inXMP: packet) { return length }
            }
            offset += 2 + length
        }
        return nil
    }

    /// The video length in an XMP packet: the `Length` attribute of the container item whose `Semantic` is
    /// `MotionPhoto`, else `MicroVideoOffset`; whatever prefixes the writer bound the namespaces to.
    static func videoLength(inXMP packet: String) -> Int64? {
        for element in packet.split(separator: "<") where element.contains("Semantic=\"MotionPhoto\"") {
            if let length = Self.attribute("Length", in: element) { return length }
        }
        return Self.attribute("MicroVideoOffset", in: Substring(packet))
    }

    /// The integer value of the first attribute named `name` (after any namespace prefix) in `text`.
    private static func attribute(_ name: String, in text: Substring) -> Int64? {
        var rest = text
        while let found = rest.firstRange(of: ":\(name)=\"") {
            let value = rest[found.upperBound...].prefix { $0 != "\"" }
            if let number = Int64(value.trimmingPrefix(while: { $0 == " " })) { return number }
            rest = rest[found.upperBound...]
        }
        return nil
    }
}
