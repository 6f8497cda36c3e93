/// Photoshop image resources (JPEG APP13 after `Photoshop 3.0\0`; ImageMagick's `8bim` profile), and the IPTC
/// records that resource 0x0404 holds.
///
/// Each resource is a signature (`8BIM`, or an older one), a 16-bit id, a Pascal name padded to an even length, a
/// 32-bit size, and the data padded to an even length. IPTC records are `0x1C`, a record and a dataset number, a
/// 16-bit length (or, with the top bit set, the length of a longer length), and the data.
package enum PhotoshopResources {
    /// The id of the IPTC-NAA resource.
    private static let iptcResource = 0x0404
    /// The id of the resource holding an MD5 digest of the IPTC resource, stale once that changes.
    private static let iptcDigestResource = 0x0425
    /// The IPTC application-record (2) datasets that hold location: content location code and name (26, 27),
    /// city (90), sublocation (92), province or state (95), country code and name (100, 101).
    package static let locationDatasets: Set<Int> = [26, 27, 90, 92, 95, 100, 101]

    /// One resource: its id and where its whole entry and its data are.
    private struct Resource {
        var id: Int
        var entry: Range<Int>
        var data: Range<Int>
    }

    /// Splits `bytes` into resources.
    private static func resources(_ bytes: [UInt8]) throws(MetadataError) -> [Resource] {
        var resources: [Resource] = []
        var offset = 0
        let signatures = ["8BIM", "PHUT", "AgHg", "DCSR", "MeSa"].map(ascii)
        while offset < bytes.count {
            guard signatures.contains(where: { bytes.hasBytes($0, at: offset) }),
                let id = bytes.bigEndian(at: offset + 4, width: 2),
                let nameLength = bytes.bigEndian(at: offset + 6, width: 1)
            else { throw MetadataError("Photoshop resources", at: offset, "not a resource entry") }
            let sizeOffset = offset + 6 + (1 + nameLength + 1) / 2 * 2
            guard let size = bytes.bigEndian(at: sizeOffset, width: 4), size <= bytes.count - sizeOffset - 4 else {
                throw MetadataError("Photoshop resources", at: offset, "a resource runs past the end")
            }
            let data = (sizeOffset + 4)..<(sizeOffset + 4 + size)
            let end = min(bytes.count, data.upperBound + size % 2)
            resources.append(Resource(id: id, entry: offset..<end, data: data))
            offset = end
        }
        return resources
    }

    /// Whether the resources include IPTC records.
    ///
    /// - Throws: ``MetadataError`` when the resources are malformed.
    package static func hasIPTC(_ bytes: [UInt8]) throws(MetadataError) -> Bool {
        try Self.resources(bytes).contains { $0.id == Self.iptcResource }
    }

    /// Removes the IPTC location datasets, and the IPTC digest that no longer matches once they are gone.
    ///
    /// - Returns: the resources without them, and whether any were there.
    /// - Throws: ``MetadataError`` when the resources or the records are malformed.
    package static func removingLocation(from bytes: [UInt8]) throws(MetadataError) -> (bytes: [UInt8], removed: Bool) {
        let resources = try Self.resources(bytes)
        var edited: [Int: [UInt8]] = [:]
        for resource in resources where resource.id == Self.iptcResource {
            let (records, removed) = try Self.removingLocation(fromRecords: Array(bytes[resource.data]))
            if removed { edited[resource.entry.lowerBound] = records }
        }
        guard !edited.isEmpty else { return (bytes, false) }
        var result: [UInt8] = []
        for resource in resources where resource.id != Self.iptcDigestResource {
            guard let records = edited[resource.entry.lowerBound] else {
                result += bytes[resource.entry]
                continue
            }
            result += bytes[resource.entry.lowerBound..<(resource.data.lowerBound - 4)]
            result.appendBigEndian(records.count, width: 4)
            result += records
            if records.count % 2 == 1 { result.append(0) }
        }
        return (result, true)
    }

    /// Removes the location datasets from IPTC records (ImageMagick's `iptc` profile, or resource 0x0404's data).
    ///
    /// - Returns: the records without them, and whether any were there.
    /// - Throws: ``MetadataError`` when a record runs past the end.
    package static func removingLocation(
        fromRecords bytes: [UInt8]
    ) throws(MetadataError) -> (bytes: [UInt8], removed: Bool) {
        var result: [UInt8] = []
        var removed = false
        var offset = 0
        while offset < bytes.count {
            // Padding after the last record is allowed.
            if bytes[offset] == 0 {
                result += bytes[offset...]
                break
            }
            guard bytes[offset] == 0x1C, let record = bytes.bigEndian(at: offset + 1, width: 1),
                let dataset = bytes.bigEndian(at: offset + 2, width: 1),
                var length = bytes.bigEndian(at: offset + 3, width: 2)
            else { throw MetadataError("IPTC", at: offset, "not a record") }
            var header = 5
            if length & 0x8000 != 0 {
                let width = length & 0x7FFF
                guard width <= 4, let extended = bytes.bigEndian(at: offset + 5, width: width) else {
                    throw MetadataError("IPTC", at: offset, "an extended length that cannot be read")
                }
                header += width
                length = extended
            }
            guard length <= bytes.count - offset - header else {
                throw MetadataError("IPTC", at: offset, "a record runs past the end")
            }
            let end = offset + header + length
            if record == 2, Self.locationDatasets.contains(dataset) {
                removed = true
            } else {
                result += bytes[offset..<end]
            }
            offset = end
        }
        return (result, removed)
    }
}
