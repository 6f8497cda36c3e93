/// The streams of an OLE2 compound file (Microsoft's "Compound File Binary" format, MS-CFB), read from its bytes:
/// the container of Word 97 documents, and of DOCX, XLSX and PPTX files encrypted with a password.
///
/// The file is a header and sectors of 512 or 4096 bytes. The file allocation table (FAT), whose sectors the header
/// and the DIFAT chain list, links each sector to the next one of its chain; the directory is such a chain of
/// 128-byte entries, each naming a stream and its first sector. Streams shorter than the header's cutoff (4096
/// bytes) are kept in 64-byte mini sectors inside the root entry's stream, linked by the mini FAT.
struct CompoundFile {
    /// Why the file cannot be read as a compound file.
    struct Malformed: Error, CustomStringConvertible {
        var description: String
    }

    /// One directory entry: a stream's name, first sector and size.
    private struct Entry {
        var name: String
        var isStream: Bool
        var start: UInt32
        var size: Int
    }

    private static let signature: [UInt8] = [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]
    /// The FAT's mark for the last sector of a chain.
    private static let endOfChain: UInt32 = 0xFFFF_FFFE
    /// How many DIFAT entries the header holds.
    private static let headerDIFATEntries = 109

    private let bytes: [UInt8]
    private let sectorSize: Int
    private let miniSectorSize: Int
    private let miniStreamCutoff: Int
    private let fat: [UInt32]
    private let miniFAT: [UInt32]
    private let entries: [Entry]
    private let miniStream: [UInt8]

    /// Reads the header, the FAT, the directory and the mini stream of a compound file.
    ///
    /// - Throws: ``Malformed`` when the bytes are not a compound file or its tables point outside it.
    init(_ bytes: [UInt8]) throws(Malformed) {
        guard bytes.count >= 512, Array(bytes[0..<8]) == Self.signature else {
            throw Malformed(description: "not an OLE2 compound file")
        }
        let sectorShift = Self.integer(bytes, at: 0x1E, width: 2)
        let miniShift = Self.integer(bytes, at: 0x20, width: 2)
        guard sectorShift == 9 || sectorShift == 12, miniShift == 6 else {
            throw Malformed(description: "the compound file's sector sizes are not 512 or 4096 and 64 bytes")
        }
        let sectorSize = 1 << sectorShift
        let perSector = sectorSize / 4
        // The DIFAT: the header's 109 entries, then a chain of sectors whose last entry points at the next one.
        var fatSectors = (0..<Self.headerDIFATEntries).map { UInt32(Self.integer(bytes, at: 0x4C + 4 * $0, width: 4)) }
        var difat = UInt32(Self.integer(bytes, at: 0x44, width: 4))
        // A chain cannot have more sectors than the file: a longer count is damage (or a loop).
        let difatCount = min(Self.integer(bytes, at: 0x48, width: 4), bytes.count / sectorSize)
        for _ in 0..<difatCount where difat < Self.endOfChain {
            let sector = try Self.sector(of: bytes, difat, size: sectorSize)
            fatSectors += (0..<(perSector - 1)).map { UInt32(Self.integer(sector, at: 4 * $0, width: 4)) }
            difat = UInt32(Self.integer(sector, at: sectorSize - 4, width: 4))
        }
        let fatCount = Self.integer(bytes, at: 0x2C, width: 4)
        var fat: [UInt32] = []
        for sector in fatSectors.prefix(fatCount) {
            let data = try Self.sector(of: bytes, sector, size: sectorSize)
            fat += (0..<perSector).map { UInt32(Self.integer(data, at: 4 * $0, width: 4)) }
        }
        let directory = try Self.chain(
            in: bytes,
            from: UInt32(Self.integer(bytes, at: 0x30, width: 4)),
            fat: fat,
            sectorSize: sectorSize
        )
        let entries = stride(from: 0, to: directory.count - 127, by: 128).map { offset in
            let nameLength = min(64, Self.integer(directory, at: offset + 64, width: 2))
            let units = stride(from: 0, to: max(0, nameLength - 2), by: 2).map {
                UInt16(Self.integer(directory, at: offset + $0, width: 2))
            }
            // Version 3 files (512-byte sectors) may leave garbage in the size's high half.
            let size = Self.integer(directory, at: offset + 120, width: sectorShift == 9 ? 4 : 8)
            return Entry(
                name: String(decoding: units, as: UTF16.self),
                isStream: directory[offset + 66] == 2,
                start: UInt32(Self.integer(directory, at: offset + 116, width: 4)),
                size: size
            )
        }
        guard let root = entries.first else { throw Malformed(description: "the compound file has no directory") }
        let miniFATBytes = try Self.chain(
            in: bytes,
            from: UInt32(Self.integer(bytes, at: 0x3C, width: 4)),
            fat: fat,
            sectorSize: sectorSize
        )
        let miniStream = try Self.chain(in: bytes, from: root.start, fat: fat, sectorSize: sectorSize)
        self.bytes = bytes
        self.sectorSize = sectorSize
        self.miniSectorSize = 1 << miniShift
        self.miniStreamCutoff = Self.integer(bytes, at: 0x38, width: 4)
        self.fat = fat
        self.miniFAT = stride(from: 0, to: miniFATBytes.count - 3, by: 4).map {
            UInt32(Self.integer(miniFATBytes, at: $0, width: 4))
        }
        self.entries = entries
        self.miniStream = Array(miniStream.prefix(root.size))
    }

    /// Whether the file has a stream of this name, in any storage.
    func hasStream(named name: String) -> Bool {
        self.entries.contains { $0.isStream && $0.name == name }
    }

    /// The bytes of the first stream of this name, in any storage, or `nil` when the file has none.
    ///
    /// - Throws: ``Malformed`` when the stream's chain leaves the file or is shorter than its size.
    func stream(named name: String) throws(Malformed) -> [UInt8]? {
        guard let entry = self.entries.first(where: { $0.isStream && $0.name == name }) else { return nil }
        guard entry.size >= 0 else { throw Malformed(description: "the stream \(name) has an impossible size") }
        let data =
            entry.size < self.miniStreamCutoff
            ? try Self.chain(in: self.miniStream, from: entry.start, fat: self.miniFAT, sectorSize: self.miniSectorSize)
            : try Self.chain(in: self.bytes, from: entry.start, fat: self.fat, sectorSize: self.sectorSize)
        guard data.count >= entry.size else {
            throw Malformed(description: "the stream \(name) is shorter than its directory entry says")
        }
        return Array(data.prefix(entry.size))
    }

    /// The sectors of a chain, concatenated. A mini chain's "sectors" are offsets into the mini stream, which has no
    /// header: `bytes` is then the mini stream and sector `n` starts at `n * sectorSize`.
    private static func chain(
        in bytes: [UInt8],
        from start: UInt32,
        fat: [UInt32],
        sectorSize: Int
    ) throws(Malformed) -> [UInt8] {
        let headerless = sectorSize == 64
        var data: [UInt8] = []
        var sector = start
        var visited: Set<UInt32> = []
        while sector < Self.endOfChain - 2 {
            guard Int(sector) < fat.count else {
                throw Malformed(description: "a sector chain of the compound file leaves its allocation table")
            }
            guard visited.insert(sector).inserted else {
                throw Malformed(description: "a sector chain of the compound file loops")
            }
            let offset = (Int(sector) + (headerless ? 0 : 1)) * sectorSize
            guard offset + sectorSize <= bytes.count || (headerless && offset < bytes.count) else {
                throw Malformed(description: "a sector of the compound file lies past its end")
            }
            data += bytes[offset..<min(bytes.count, offset + sectorSize)]
            sector = fat[Int(sector)]
        }
        return data
    }

    /// One sector of the file (after the header).
    private static func sector(of bytes: [UInt8], _ index: UInt32, size: Int) throws(Malformed) -> [UInt8] {
        let offset = (Int(index) + 1) * size
        guard index < Self.endOfChain - 2, offset + size <= bytes.count else {
            throw Malformed(description: "a table sector of the compound file lies past its end")
        }
        return Array(bytes[offset..<(offset + size)])
    }

    /// A little-endian integer of `width` bytes at `offset`, or 0 past the end.
    static func integer(_ bytes: [UInt8], at offset: Int, width: Int) -> Int {
        guard offset >= 0, offset + width <= bytes.count else { return 0 }
        return bytes[offset..<(offset + width)].reversed().reduce(0) { $0 << 8 | Int($1) }
    }
}
