/// The EXIF of a camera RAW file that is TIFF inside (DNG, CR2, NEF, ARW, ORF, RW2), carried into the output.
///
/// LibRaw hands over pixels, not an EXIF block, so ImageMagick has none to copy. This reads the file's own tags and
/// writes them, byte for byte and in the file's byte order, into a small TIFF structure behind `Exif\0\0`, the form
/// of ImageMagick's `exif` profile: from IFD0 the camera (`Make`, `Model`) and `DateTime`; from the EXIF IFD the
/// capture time with its sub-seconds and time zone, the exposure (time, f-number, ISO, bias, programme, metering,
/// flash), the focal length and the lens; and the whole GPS IFD, as the HEIC and JPEG paths keep it (`strip` removes
/// it all). Maker notes, thumbnails and the DNG tags are not carried: they describe the raw data, not the developed
/// image. No orientation is written: the pixels are already upright.
///
/// Every offset and count is checked against the file; a tag whose value lies outside it is left out, and a file
/// whose IFD0 cannot be read gives `nil`.
package struct RawEXIF {
    /// The `Exif\0\0`-prefixed TIFF structure.
    package var profile: [UInt8]

    /// IFD0 tags carried: Make, Model, DateTime.
    private static let imageTags: Set<UInt16> = [0x010F, 0x0110, 0x0132]
    /// EXIF IFD tags carried: ExposureTime, FNumber, ExposureProgram, ISOSpeedRatings, DateTimeOriginal,
    /// CreateDate, OffsetTime, OffsetTimeOriginal, OffsetTimeDigitized, ExposureBiasValue, MeteringMode, Flash,
    /// FocalLength, SubSecTime, SubSecTimeOriginal, SubSecTimeDigitized, FocalLengthIn35mmFormat, LensMake,
    /// LensModel.
    private static let exifTags: Set<UInt16> = [
        0x829A, 0x829D, 0x8822, 0x8827, 0x9003, 0x9004, 0x9010, 0x9011, 0x9012, 0x9204, 0x9207, 0x9209, 0x920A,
        0x9290, 0x9291, 0x9292, 0xA405, 0xA433, 0xA434,
    ]
    /// The pointers to the EXIF IFD and the GPS IFD.
    private static let exifPointer: UInt16 = 0x8769
    private static let gpsPointer: UInt16 = 0x8825
    /// The most entries read from one IFD; real ones have a few dozen.
    private static let maximumEntries = 1024

    /// One IFD entry with its value bytes, which are in the file's byte order.
    private struct Entry {
        var tag: UInt16
        var type: UInt16
        var count: UInt32
        var value: [UInt8]
    }

    /// Reads the tags to carry from a TIFF-structured RAW file, or `nil` when there are none.
    package init?(reading bytes: [UInt8]) {
        guard bytes.count >= 8, bytes[0] == bytes[1], bytes[0] == 0x49 || bytes[0] == 0x4D else { return nil }
        let reader = Reader(bytes: bytes, littleEndian: bytes[0] == 0x49)
        guard let first = reader.integer(at: 4, width: 4), let image = reader.entries(at: first) else { return nil }
        let imageEntries = image.filter { Self.imageTags.contains($0.tag) }
        let exifEntries =
            image.first { $0.tag == Self.exifPointer }.flatMap { reader.pointer($0) }
            .flatMap { reader.entries(at: $0) }?.filter { Self.exifTags.contains($0.tag) } ?? []
        let gpsEntries =
            image.first { $0.tag == Self.gpsPointer }.flatMap { reader.pointer($0) }
            .flatMap { reader.entries(at: $0) } ?? []
        guard !imageEntries.isEmpty || !exifEntries.isEmpty || !gpsEntries.isEmpty else { return nil }
        self.profile =
            Array("Exif".utf8) + [0, 0]
            + Writer.tiff(
                littleEndian: reader.littleEndian,
                image: imageEntries,
                exif: exifEntries,
                gps: gpsEntries
            )
    }

    /// Reads IFDs within the file's bytes.
    private struct Reader {
        var bytes: [UInt8]
        var littleEndian: Bool

        func integer(at offset: Int, width: Int) -> Int? {
            guard offset >= 0, width <= 8, offset <= self.bytes.count - width else { return nil }
            let slice = self.bytes[offset..<(offset + width)]
            return (self.littleEndian ? slice.reversed() : Array(slice)).reduce(0) { $0 << 8 | Int($1) }
        }

        /// The IFD offset that a LONG (or IFD-typed) pointer entry holds.
        func pointer(_ entry: Entry) -> Int? {
            guard entry.count == 1, entry.type == 4 || entry.type == 13, entry.value.count == 4 else { return nil }
            return Reader(bytes: entry.value, littleEndian: self.littleEndian).integer(at: 0, width: 4)
        }

        /// The entries of the IFD at `offset` whose values lie within the file, each with its value bytes.
        func entries(at offset: Int) -> [Entry]? {
            guard let count = self.integer(at: offset, width: 2), count <= RawEXIF.maximumEntries else { return nil }
            var entries: [Entry] = []
            for index in 0..<count {
                let start = offset + 2 + 12 * index
                guard let tag = self.integer(at: start, width: 2), let type = self.integer(at: start + 2, width: 2),
                    let count = self.integer(at: start + 4, width: 4)
                else { return nil }
                guard let width = Writer.typeWidth(UInt16(type)) else { continue }
                let length = width * count
                let valueStart = length <= 4 ? start + 8 : self.integer(at: start + 8, width: 4) ?? -1
                guard length <= 1 << 20, valueStart >= 0, valueStart <= self.bytes.count - length else { continue }
                entries.append(
                    Entry(
                        tag: UInt16(tag),
                        type: UInt16(type),
                        count: UInt32(count),
                        value: Array(self.bytes[valueStart..<(valueStart + length)])
                    )
                )
            }
            return entries
        }
    }

    /// Writes IFD0, the EXIF IFD and the GPS IFD as one TIFF structure.
    private enum Writer {
        /// The byte width of one value of a TIFF type, or `nil` for a type Chute does not copy.
        static func typeWidth(_ type: UInt16) -> Int? {
            switch type {
            case 1, 2, 6, 7: 1
            case 3, 8: 2
            case 4, 9, 11, 13: 4
            case 5, 10, 12: 8
            default: nil
            }
        }

        static func tiff(littleEndian: Bool, image: [Entry], exif: [Entry], gps: [Entry]) -> [UInt8] {
            func number(_ value: Int, _ width: Int) -> [UInt8] {
                let bigEndian = (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * (width - 1 - $0))) }
                return littleEndian ? bigEndian.reversed() : bigEndian
            }
            func size(_ entries: [Entry]) -> Int {
                2 + 12 * entries.count + 4
                    + entries.reduce(0) { $0 + ($1.value.count > 4 ? ($1.value.count + 1) & ~1 : 0) }
            }
            // IFD0 gains the pointers, whose values are known once the IFDs' places are.
            var first = image
            let pointerCount = (exif.isEmpty ? 0 : 1) + (gps.isEmpty ? 0 : 1)
            let firstSize = size(first) + 12 * pointerCount
            let exifOffset = 8 + firstSize
            let gpsOffset = exifOffset + (exif.isEmpty ? 0 : size(exif))
            if !exif.isEmpty {
                first.append(Entry(tag: RawEXIF.exifPointer, type: 4, count: 1, value: number(exifOffset, 4)))
            }
            if !gps.isEmpty {
                first.append(Entry(tag: RawEXIF.gpsPointer, type: 4, count: 1, value: number(gpsOffset, 4)))
            }
            var tiff = (littleEndian ? [0x49, 0x49] : [0x4D, 0x4D]) + number(42, 2) + number(8, 4)
            for (entries, offset) in [(first, 8), (exif, exifOffset), (gps, gpsOffset)] where !entries.isEmpty {
                let sorted = entries.sorted { $0.tag < $1.tag }
                var data: [UInt8] = []
                let dataStart = offset + 2 + 12 * sorted.count + 4
                tiff += number(sorted.count, 2)
                for entry in sorted {
                    tiff += number(Int(entry.tag), 2) + number(Int(entry.type), 2) + number(Int(entry.count), 4)
                    if entry.value.count <= 4 {
                        tiff += entry.value + [UInt8](repeating: 0, count: 4 - entry.value.count)
                    } else {
                        tiff += number(dataStart + data.count, 4)
                        data += entry.value
                        if data.count % 2 == 1 { data.append(0) }
                    }
                }
                tiff += number(0, 4) + data
            }
            return tiff
        }
    }
}
