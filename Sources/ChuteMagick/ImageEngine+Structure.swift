import ChuteCatalog
import ChuteCore

extension ImageEngine {
    /// The input types whose structure is checked before decoding (``Completeness``), because their decoders would
    /// otherwise make an image from a file that is cut short: libheif (from 1.16) reads a HEIF's items lazily and
    /// decodes the primary image even when another item's data lies past the end of the file, and LibRaw reads
    /// past the end of some formats' raw data without a word (a Panasonic RW2 whose strip is cut off develops
    /// into noise).
    static let structureCheckedTypes: Set<MediaType> = Self.rawTypes.union([.heif, .avif])

    /// Refuses an input of a ``structureCheckedTypes`` type whose structure points past its end, as the intake's
    /// check does for a file still being written.
    ///
    /// - Throws: ``ConversionFailure`` `corruptInput`, saying where the file is cut short.
    static func refuseCutShort(_ bytes: [UInt8], type: MediaType) throws(ConversionFailure) {
        guard Self.structureCheckedTypes.contains(type) else { return }
        let verdict = Completeness.judge(type, size: Int64(bytes.count)) { offset, count in
            guard offset >= 0, offset <= Int64(bytes.count) else { return nil }
            return Array(bytes[Int(offset)..<min(bytes.count, Int(offset) + count)])
        }
        if case .incomplete(let reason) = verdict {
            throw ConversionFailure(.corruptInput, "the file is cut short: \(reason)")
        }
    }
}
