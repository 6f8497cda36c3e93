import Foundation

/// The one byte range of a `Range: bytes=…` request header (RFC 9110, §14.1.2), within a file's size.
package enum ByteRange {
    /// The range that `header` asks for in a file of `size` bytes: `bytes=START-END`, `bytes=START-` (to the end) or
    /// `bytes=-LENGTH` (the last bytes), an end past the file cut to it.
    ///
    /// - Returns: the first and last byte, or `nil` when the range is not satisfiable (it starts past the end, the
    ///   file is empty, or the header is not one range of bytes).
    package static func parse(_ header: String, size: Int64) -> ClosedRange<Int64>? {
        guard size > 0, header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            guard let length = Int64(last), length > 0 else { return nil }
            return max(0, size - length)...(size - 1)
        }
        guard let start = Int64(first), start >= 0, start < size else { return nil }
        guard !last.isEmpty else { return start...(size - 1) }
        guard let end = Int64(last), end >= start else { return nil }
        return start...min(end, size - 1)
    }
}
