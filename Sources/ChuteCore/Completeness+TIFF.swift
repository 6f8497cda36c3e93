extension Completeness {
    /// The most IFDs of a TIFF chain followed before giving up (`unknown`): one per page.
    static let maximumDirectories = 4096
    /// The most entries of one IFD read; real files have a few dozen tags.
    static let maximumDirectoryEntries = 4096
    /// The most strip or tile offsets read in all, over every IFD of a file, before giving up (`unknown`).
    static let maximumStrips = 4_000_000

    /// One IFD entry: a tag, its type, its count and the bytes of its value field (the value, or where it is).
    private struct DirectoryEntry {
        var tag: UInt16
        var type: UInt16
        var count: UInt64
        var field: ArraySlice<UInt8>
    }

    /// The layout of a classic TIFF or a BigTIFF.
    private struct TIFFLayout {
        var littleEndian: Bool
        var big: Bool
        /// The width of an offset, of an entry count and of an entry's count and value field.
        var offsetWidth: Int { self.big ? 8 : 4 }
        var entryCountWidth: Int { self.big ? 8 : 2 }
        var entryWidth: Int { self.big ? 20 : 12 }
    }

    /// Follows a TIFF's chain of IFDs and checks that each IFD, each value stored outside it, and each strip or tile
    /// lies within the file.
    ///
    /// ImageMagick and libtiff write the strips first and the IFD that points at them last, so a file cut short
    /// points at an IFD beyond its end; writers that put the IFD first point at strips beyond it. A chain that loops,
    /// or too many IFDs or strips to read cheaply, is `unknown`: the decoder judges such files.
    static func tiff(size: Int64, read: (Int64, Int) -> [UInt8]?) -> Self {
        func exactly(_ offset: Int64, _ count: Int) -> [UInt8]? {
            Self.exactly(read, size: size, offset: offset, count: count)
        }
        guard let header = exactly(0, 8) else { return .incomplete("the TIFF header is cut off") }
        let layout = TIFFLayout(
            littleEndian: header[0] == 0x49,
            big: header[2...3] == [0x2B, 0x00] || header[2...3] == [0x00, 0x2B]
        )
        func number(_ bytes: ArraySlice<UInt8>) -> UInt64 { Self.integer(bytes, littleEndian: layout.littleEndian) }

        let first: UInt64
        if layout.big {
            guard let offset = exactly(8, 8) else { return .incomplete("the BigTIFF header is cut off") }
            first = number(offset[...])
        } else {
            first = number(header[4..<8])
        }
        var visited: Set<UInt64> = []
        var stripBudget = Self.maximumStrips
        // The chain of pages, and the sub-IFDs (tag 330) where DNG files keep their full-size image.
        var pending = [first]
        while let next = pending.popLast() {
            guard next != 0 else { continue }
            guard visited.count < Self.maximumDirectories else { return .unknown }
            guard visited.insert(next).inserted else { return .unknown }  // a loop: malformed, not cut short
            guard next <= UInt64(Int64.max), let countBytes = exactly(Int64(next), layout.entryCountWidth) else {
                return .incomplete("the IFD at byte \(next) is beyond the end of the file (\(size) bytes)")
            }
            let entryCount = number(countBytes[...])
            let tableLength =
                UInt64(layout.entryWidth) * min(entryCount, UInt64(Int32.max))
                + UInt64(layout.offsetWidth)
            let tableStart = Int64(next) + Int64(layout.entryCountWidth)
            guard UInt64(tableStart) + tableLength <= UInt64(size) else {
                return .incomplete("the IFD at byte \(next) runs past the end of the file (\(size) bytes)")
            }
            guard entryCount <= UInt64(Self.maximumDirectoryEntries) else { return .unknown }
            guard let table = exactly(tableStart, Int(tableLength)) else {
                return .incomplete("the IFD at byte \(next) cannot be read")
            }
            var entries: [DirectoryEntry] = []
            for index in 0..<Int(entryCount) {
                let start = index * layout.entryWidth
                let countStart = start + 4
                let fieldStart = countStart + layout.offsetWidth
                entries.append(
                    DirectoryEntry(
                        tag: UInt16(number(table[start..<(start + 2)])),
                        type: UInt16(number(table[(start + 2)..<(start + 4)])),
                        count: number(table[countStart..<fieldStart]),
                        field: table[fieldStart..<(fieldStart + layout.offsetWidth)]
                    )
                )
            }
            pending.append(number(table[(table.count - layout.offsetWidth)...]))
            if let subDirectories = entries.first(where: { $0.tag == 330 }),
                let width = Self.tiffTypeWidth(subDirectories.type), width >= 4,
                subDirectories.count <= UInt64(Self.maximumDirectories)
            {
                let count = Int(subDirectories.count)
                guard
                    let offsets = Self.tiffValues(
                        subDirectories,
                        width: width,
                        from: 0,
                        count: count,
                        layout: layout,
                        read: exactly
                    )
                else { return .incomplete("the sub-IFD offsets are cut off") }
                pending += offsets
            }

            // Values too large for their entry are stored elsewhere in the file (ICC profiles, XMP, arrays).
            for entry in entries {
                guard let width = Self.tiffTypeWidth(entry.type) else { continue }
                let (length, overflow) = entry.count.multipliedReportingOverflow(by: UInt64(width))
                guard !overflow else { return .unknown }
                guard length > UInt64(layout.offsetWidth) else { continue }
                let offset = number(entry.field)
                guard offset <= UInt64(size), length <= UInt64(size) - offset else {
                    return .incomplete(
                        "the value of TIFF tag \(entry.tag) ends beyond the end of the file (\(size) bytes)"
                    )
                }
            }
            for (offsetsTag, countsTag) in [(UInt16(273), UInt16(279)), (UInt16(324), UInt16(325))] {
                guard let offsets = entries.first(where: { $0.tag == offsetsTag }),
                    let counts = entries.first(where: { $0.tag == countsTag })
                else { continue }
                let verdict = Self.tiffStrips(
                    offsets: offsets,
                    counts: counts,
                    layout: layout,
                    size: size,
                    budget: &stripBudget,
                    read: exactly
                )
                if verdict != .whole { return verdict }
            }
        }
        return .whole
    }

    /// Checks that every strip (or tile) of one IFD ends within the file, reading its offsets and byte counts a
    /// block at a time.
    private static func tiffStrips(
        offsets: DirectoryEntry,
        counts: DirectoryEntry,
        layout: TIFFLayout,
        size: Int64,
        budget: inout Int,
        read: (Int64, Int) -> [UInt8]?
    ) -> Self {
        guard let offsetWidth = Self.tiffTypeWidth(offsets.type), let countWidth = Self.tiffTypeWidth(counts.type)
        else { return .unknown }
        let total = min(offsets.count, counts.count)
        guard total <= UInt64(budget) else { return .unknown }
        budget -= Int(total)
        let block = 8192
        for start in stride(from: 0, to: Int(total), by: block) {
            let count = min(block, Int(total) - start)
            guard
                let starts = Self.tiffValues(
                    offsets,
                    width: offsetWidth,
                    from: start,
                    count: count,
                    layout: layout,
                    read: read
                ),
                let lengths = Self.tiffValues(
                    counts,
                    width: countWidth,
                    from: start,
                    count: count,
                    layout: layout,
                    read: read
                )
            else { return .incomplete("the strip offsets or byte counts are cut off") }
            for (index, (offset, length)) in zip(starts, lengths).enumerated() {
                guard offset <= UInt64(size), length <= UInt64(size) - offset else {
                    return .incomplete(
                        "strip or tile \(start + index) ends beyond the end of the file (\(size) bytes)"
                    )
                }
            }
        }
        return .whole
    }

    /// `count` values of an entry from index `start`, from the entry itself or from where it points.
    private static func tiffValues(
        _ entry: DirectoryEntry,
        width: Int,
        from start: Int,
        count: Int,
        layout: TIFFLayout,
        read: (Int64, Int) -> [UInt8]?
    ) -> [UInt64]? {
        let (length, overflow) = entry.count.multipliedReportingOverflow(by: UInt64(width))
        let inline = !overflow && length <= UInt64(layout.offsetWidth)
        let bytes: [UInt8]
        if inline {
            bytes = Array(entry.field)
        } else {
            let base = Self.integer(entry.field, littleEndian: layout.littleEndian)
            guard base <= UInt64(Int64.max) - UInt64(start * width),
                let block = read(Int64(base) + Int64(start * width), count * width)
            else { return nil }
            bytes = block
        }
        let first = inline ? start * width : 0
        return (0..<count).map { index in
            let at = first + index * width
            return Self.integer(bytes[at..<(at + width)], littleEndian: layout.littleEndian)
        }
    }

    /// The width in bytes of one value of a TIFF field type, or `nil` for a type this check does not know.
    private static func tiffTypeWidth(_ type: UInt16) -> Int? {
        switch type {
        case 1, 2, 6, 7: return 1  // BYTE, ASCII, SBYTE, UNDEFINED
        case 3, 8: return 2  // SHORT, SSHORT
        case 4, 9, 11, 13: return 4  // LONG, SLONG, FLOAT, IFD
        case 5, 10, 12, 16, 17, 18: return 8  // RATIONAL, SRATIONAL, DOUBLE, LONG8, SLONG8, IFD8
        default: return nil
        }
    }
}
