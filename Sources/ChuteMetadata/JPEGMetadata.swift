import ChuteCore

/// Removes metadata segments from a JPEG file, copying everything else byte for byte.
///
/// A JPEG is a series of marker segments (`FF xx`, a 16-bit length, the payload); after each start-of-scan segment
/// comes entropy-coded data, which runs to the next marker that is not a stuffed `FF 00` or a restart marker. The
/// file ends at `FF D9`; anything after it is a trailer (appended images or videos).
package enum JPEGMetadata {
    /// A marker segment, or bytes copied as they are (scan data, standalone markers, the end marker).
    private enum Piece {
        case segment(marker: UInt8, range: Range<Int>, payload: Range<Int>)
        case data(Range<Int>)
    }

    private static let exifHeader = ascii("Exif\0")
    private static let xmpHeader = ascii("http://ns.adobe.com/xap/1.0/\0")
    private static let extendedXMPHeader = ascii("http://ns.adobe.com/xmp/extension/\0")
    private static let photoshopHeader = ascii("Photoshop 3.0\0")

    /// Removes what `policy` names; see ``MetadataRemoval/removing(_:from:container:)``.
    package static func removing(_ policy: MetadataPolicy, from bytes: [UInt8]) throws(MetadataError) -> MetadataRemoval
    {
        let (pieces, trailer) = try Self.pieces(of: bytes)
        var orientation: Int?
        var captureTime: CaptureTime?
        var sawEXIF = false
        var xmpHasLocation = false
        for case .segment(let marker, _, let payload) in pieces where marker == 0xE1 {
            let data = Array(bytes[payload])
            if data.hasBytes(Self.exifHeader, at: 0), !sawEXIF {
                sawEXIF = true
                orientation = MetadataRemoval.orientation(ofEXIF: data)
                captureTime = (try? EXIF(data))?.captureTime
            } else if let packet = Self.xmpPacket(data) {
                xmpHasLocation = xmpHasLocation || XMPLocation.mentionsLocation(packet)
            }
        }
        guard policy != .keep else {
            return MetadataRemoval(bytes: bytes, removed: [], orientation: orientation, captureTime: captureTime)
        }

        var output: [UInt8] = [0xFF, 0xD8]
        output.reserveCapacity(bytes.count)
        var removed: Set<MetadataKind> = []
        for piece in pieces {
            switch piece {
            case .data(let range):
                output += bytes[range]
            case .segment(let marker, let range, let payload):
                let data = Array(bytes[payload])
                let decision =
                    policy == .strip
                    ? Self.strip(marker: marker, payload: data)
                    : Self.removeLocation(marker: marker, payload: data, xmpHasLocation: xmpHasLocation)
                removed.formUnion(decision.removed)
                switch decision.action {
                case .keep: output += bytes[range]
                case .remove: break
                case .replace(let payload):
                    output += [0xFF, marker]
                    output.appendBigEndian(payload.count + 2, width: 2)
                    output += payload
                }
            }
        }
        if !trailer.isEmpty {
            removed.insert(MotionPhoto.trailer(in: bytes)?.holdsVideo == true ? .motionPhotoVideo : .trailer)
        }
        return MetadataRemoval(bytes: output, removed: removed, orientation: orientation, captureTime: captureTime)
    }

    /// What to do with one segment.
    private enum Action {
        case keep, remove
        case replace([UInt8])
    }

    /// The decision for a segment under `strip`.
    private static func strip(marker: UInt8, payload: [UInt8]) -> (action: Action, removed: Set<MetadataKind>) {
        switch marker {
        case 0xE0:
            if payload.hasBytes(ascii("JFIF\0"), at: 0) { return (.keep, []) }
            return (.remove, payload.hasBytes(ascii("JFXX\0"), at: 0) ? [.thumbnail] : [.vendor])
        case 0xE1:
            if payload.hasBytes(Self.exifHeader, at: 0) { return (.remove, MetadataRemoval.exifKinds(payload)) }
            return (.remove, Self.xmpPacket(payload) != nil ? [.xmp] : [.vendor])
        case 0xE2:
            return payload.hasBytes(ascii("ICC_PROFILE\0"), at: 0) ? (.keep, []) : (.remove, [.vendor])
        case 0xED:
            guard payload.hasBytes(Self.photoshopHeader, at: 0) else { return (.remove, [.vendor]) }
            let resources = Array(payload.dropFirst(Self.photoshopHeader.count))
            return (.remove, (try? PhotoshopResources.hasIPTC(resources)) == false ? [.photoshop] : [.iptc])
        case 0xEE:
            return payload.hasBytes(ascii("Adobe"), at: 0) ? (.keep, []) : (.remove, [.vendor])
        case 0xE3...0xEF:
            return (.remove, [.vendor])
        case 0xFE:
            return (.remove, [.comment])
        default:
            return (.keep, [])
        }
    }

    /// The decision for a segment under `location`.
    private static func removeLocation(
        marker: UInt8,
        payload: [UInt8],
        xmpHasLocation: Bool
    ) -> (action: Action, removed: Set<MetadataKind>) {
        switch marker {
        case 0xE1 where payload.hasBytes(Self.exifHeader, at: 0):
            guard let (exif, removed) = MetadataRemoval.exifWithoutLocation(payload) else {
                return (.remove, [.exif])
            }
            return removed.isEmpty ? (.keep, []) : (.replace(exif), removed)
        case 0xE1 where Self.xmpPacket(payload) != nil:
            return xmpHasLocation ? (.remove, [.xmp]) : (.keep, [])
        case 0xE2 where payload.hasBytes(ascii("MPF\0"), at: 0):
            // The multi-picture index points at the images after the end marker, which go (see the trailer).
            return (.remove, [.vendor])
        case 0xED where payload.hasBytes(Self.photoshopHeader, at: 0):
            let resources = Array(payload.dropFirst(Self.photoshopHeader.count))
            guard let (edited, removed) = try? PhotoshopResources.removingLocation(from: resources) else {
                return (.remove, [.iptc])
            }
            return removed ? (.replace(Self.photoshopHeader + edited), [.iptcLocation]) : (.keep, [])
        default:
            return (.keep, [])
        }
    }

    /// The XMP of an APP1 payload, main or extended, or `nil` when it is not XMP.
    private static func xmpPacket(_ payload: [UInt8]) -> ArraySlice<UInt8>? {
        if payload.hasBytes(Self.xmpHeader, at: 0) { return payload.dropFirst(Self.xmpHeader.count) }
        // Extended XMP: the header, a 32-character GUID, the full length and this part's offset.
        if payload.hasBytes(Self.extendedXMPHeader, at: 0) {
            return payload.dropFirst(Self.extendedXMPHeader.count + 40)
        }
        return nil
    }

    /// Splits a JPEG into its pieces, up to and including the end marker, and the trailer after it.
    private static func pieces(of bytes: [UInt8]) throws(MetadataError) -> (pieces: [Piece], trailer: Range<Int>) {
        guard bytes.hasBytes([0xFF, 0xD8], at: 0) else {
            throw MetadataError("JPEG", at: 0, "no start-of-image marker")
        }
        var pieces: [Piece] = []
        var offset = 2
        while true {
            guard offset < bytes.count else {
                throw MetadataError("JPEG", at: offset, "the file ends before its end-of-image marker")
            }
            guard bytes[offset] == 0xFF else {
                throw MetadataError(
                    "JPEG",
                    at: offset,
                    "expected a marker, found 0x\(String(bytes[offset], radix: 16))"
                )
            }
            var position = offset + 1
            while position < bytes.count, bytes[position] == 0xFF { position += 1 }  // fill bytes
            guard position < bytes.count else {
                throw MetadataError("JPEG", at: offset, "the file ends inside a marker")
            }
            let marker = bytes[position]
            let start = position - 1
            switch marker {
            case 0xD9:
                pieces.append(.data(start..<(position + 1)))
                return (pieces, (position + 1)..<bytes.count)
            case 0x01, 0xD0...0xD7:
                pieces.append(.data(start..<(position + 1)))
                offset = position + 1
                continue
            case 0x00, 0xD8:
                throw MetadataError("JPEG", at: start, "marker 0x\(String(marker, radix: 16)) is out of place")
            default:
                break
            }
            guard let length = bytes.bigEndian(at: position + 1, width: 2), length >= 2,
                length <= bytes.count - position - 1
            else { throw MetadataError("JPEG", at: start, "a segment's length runs past the end of the file") }
            let end = position + 1 + length
            pieces.append(.segment(marker: marker, range: start..<end, payload: (position + 3)..<end))
            offset = end
            if marker == 0xDA {
                let scanEnd = try Self.endOfScan(in: bytes, from: end)
                pieces.append(.data(end..<scanEnd))
                offset = scanEnd
            }
        }
    }

    /// The offset of the first marker after the entropy-coded data that starts at `offset`: an `FF` followed by
    /// neither `00` (a stuffed byte), a restart marker, nor another `FF` (fill).
    private static func endOfScan(in bytes: [UInt8], from offset: Int) throws(MetadataError) -> Int {
        var index = offset
        while let found = bytes[index...].firstIndex(of: 0xFF) {
            guard found + 1 < bytes.count else { break }
            let next = bytes[found + 1]
            if next == 0x00 || (0xD0...0xD7).contains(next) || next == 0xFF {
                index = found + 1
                continue
            }
            return found
        }
        throw MetadataError("JPEG", at: offset, "the image data ends before the end-of-image marker")
    }
}
