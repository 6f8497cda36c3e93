/// Orders names as people number them: a run of digits compares by its value, so `2.jpg` comes before `10.jpg`, and
/// `scan-9` before `scan-10`.
///
/// Text between the numbers compares without regard to case; names that are equal that way fall back on fewer
/// leading zeros first (`7` before `007`), then on their exact bytes, so that the order is total and the same on
/// every run.
package enum NaturalOrder {
    /// Whether `left` comes before `right`.
    package static func areInIncreasingOrder(_ left: String, _ right: String) -> Bool {
        switch Self.compare(Array(left.unicodeScalars), Array(right.unicodeScalars)) {
        case .some(let ascending): return ascending
        case nil: return Array(left.utf8).lexicographicallyPrecedes(Array(right.utf8))
        }
    }

    /// Whether the path `left` comes before `right`, comparing their components in turn: the files of a folder
    /// together, folders among themselves as names.
    package static func areInIncreasingOrder(components left: [String], _ right: [String]) -> Bool {
        for (a, b) in zip(left, right) where a != b {
            return Self.areInIncreasingOrder(a, b)
        }
        return left.count < right.count
    }

    /// `true` when `left` sorts first, `false` when `right` does, `nil` when they are equal but for case or
    /// exact bytes.
    private static func compare(_ left: [Unicode.Scalar], _ right: [Unicode.Scalar]) -> Bool? {
        var (i, j) = (0, 0)
        var zerosTieBreak: Bool?
        while i < left.count && j < right.count {
            if Self.isDigit(left[i]) && Self.isDigit(right[j]) {
                let (leftEnd, rightEnd) = (Self.digitsEnd(left, from: i), Self.digitsEnd(right, from: j))
                let leftDigits = Self.significant(left[i..<leftEnd])
                let rightDigits = Self.significant(right[j..<rightEnd])
                if leftDigits.count != rightDigits.count { return leftDigits.count < rightDigits.count }
                for (a, b) in zip(leftDigits, rightDigits) where a != b { return a.value < b.value }
                let (leftWidth, rightWidth) = (leftEnd - i, rightEnd - j)
                if zerosTieBreak == nil && leftWidth != rightWidth { zerosTieBreak = leftWidth < rightWidth }
                (i, j) = (leftEnd, rightEnd)
                continue
            }
            let (a, b) = (Self.folded(left[i]), Self.folded(right[j]))
            if a != b { return a < b }
            i += 1
            j += 1
        }
        if (left.count - i) != (right.count - j) { return left.count - i < right.count - j }
        return zerosTieBreak
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(scalar)
    }

    private static func digitsEnd(_ scalars: [Unicode.Scalar], from start: Int) -> Int {
        var end = start
        while end < scalars.count && Self.isDigit(scalars[end]) { end += 1 }
        return end
    }

    /// The digits without their leading zeros (`0` stays one digit).
    private static func significant(_ digits: ArraySlice<Unicode.Scalar>) -> ArraySlice<Unicode.Scalar> {
        let trimmed = digits.drop { $0 == "0" }
        return trimmed.isEmpty ? digits.suffix(1) : trimmed
    }

    /// The scalar's value with ASCII letters folded to lower case.
    private static func folded(_ scalar: Unicode.Scalar) -> UInt32 {
        ("A"..."Z").contains(scalar) ? scalar.value + 32 : scalar.value
    }
}
