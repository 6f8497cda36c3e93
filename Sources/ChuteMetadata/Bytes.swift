/// Bounded reads of big- and little-endian integers from a byte array.
extension Array where Element == UInt8 {
    /// The big-endian integer of `width` bytes at `offset`, or `nil` when those bytes are not all in the array.
    func bigEndian(at offset: Int, width: Int) -> Int? {
        guard offset >= 0, width <= 8, offset <= self.count - width else { return nil }
        return self[offset..<(offset + width)].reduce(0) { $0 << 8 | Int($1) }
    }

    /// The little-endian integer of `width` bytes at `offset`, or `nil` when those bytes are not all in the array.
    func littleEndian(at offset: Int, width: Int) -> Int? {
        guard offset >= 0, width <= 8, offset <= self.count - width else { return nil }
        return self[offset..<(offset + width)].reversed().reduce(0) { $0 << 8 | Int($1) }
    }

    /// Whether the bytes at `offset` are `prefix`.
    func hasBytes(_ prefix: [UInt8], at offset: Int) -> Bool {
        offset >= 0 && offset <= self.count - prefix.count
            && self[offset..<(offset + prefix.count)].elementsEqual(prefix)
    }

    /// Whether `pattern` occurs anywhere in the array.
    func contains(bytes pattern: [UInt8]) -> Bool {
        guard let first = pattern.first, pattern.count <= self.count else { return false }
        var index = 0
        while index <= self.count - pattern.count {
            if self[index] == first, self.hasBytes(pattern, at: index) { return true }
            index += 1
        }
        return false
    }

    /// Appends `value` as `width` big-endian bytes.
    mutating func appendBigEndian(_ value: Int, width: Int) {
        for shift in stride(from: (width - 1) * 8, through: 0, by: -8) {
            self.append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }

    /// Appends `value` as `width` little-endian bytes.
    mutating func appendLittleEndian(_ value: Int, width: Int) {
        for shift in stride(from: 0, to: width * 8, by: 8) {
            self.append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }
}

/// The ASCII bytes of `text`.
func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }
