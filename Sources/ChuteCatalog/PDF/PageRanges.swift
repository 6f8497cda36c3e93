/// Pages of a PDF as a rule names them, in the grammar of qpdf's page ranges.
///
/// The grammar (documented in docs/rules.md): ranges separated by commas; a range is a page `N` (from 1), `z` (the
/// last page), or `A-B` between two of those, backwards when `A` is after `B` (`z-1` is every page in reverse). A
/// range written `xA-B` or `xN` leaves out those pages from what the ranges before it chose (from every page when
/// it comes first): `1-z,x3` is every page but the third. Spaces around the commas are allowed.
package struct PageRanges: Sendable, Equatable, CustomStringConvertible {
    /// A page number in a range.
    package enum Bound: Sendable, Equatable {
        /// A page, counted from 1.
        case page(Int)
        /// The last page, `z`.
        case last

        /// The page's number in a document of `count` pages.
        func number(in count: Int) -> Int {
            switch self {
            case .page(let number): number
            case .last: count
            }
        }
    }

    /// One range of the list.
    package struct Range: Sendable, Equatable {
        var from: Bound
        var to: Bound
        /// Whether it leaves pages out (`x…`) rather than choosing them.
        var excludes: Bool

        /// Its pages in a document of `count` pages, in order, counted from 1.
        ///
        /// - Throws: ``Problem`` when a page is past the end.
        package func pages(in count: Int) throws(Problem) -> [Int] {
            let (from, to) = (self.from.number(in: count), self.to.number(in: count))
            guard max(from, to) <= count else {
                throw Problem("page \(max(from, to)) is past the end of a PDF of \(count) pages")
            }
            return from <= to ? Array(from...to) : Array((to...from).reversed())
        }
    }

    /// Why a text is not a page list, or does not fit a document.
    package struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        package var message: String
        package init(_ message: String) { self.message = message }
        package var description: String { self.message }
    }

    /// The grammar in a few words, for `chute check` and the docs.
    package static let grammarName = "page ranges such as `1-3,5` (`z` is the last page, `x2` leaves page 2 out)"
    /// A regular expression for editors (ECMA 262, as JSON Schema uses).
    package static let pattern =
        #"^ *x?([1-9][0-9]*|z)(-([1-9][0-9]*|z))?( *, *x?([1-9][0-9]*|z)(-([1-9][0-9]*|z))?)* *$"#

    package var ranges: [Range]

    /// Reads a page list.
    ///
    /// - Throws: ``Problem`` saying which part is not a range.
    package init(parsing text: String) throws(Problem) {
        var ranges: [Range] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: false) {
            var item = item.trimmingCharacters(in: " ")
            let excludes = item.hasPrefix("x")
            if excludes { item.removeFirst() }
            let ends = item.split(separator: "-", omittingEmptySubsequences: false)
            guard (1...2).contains(ends.count), let from = Self.bound(ends[0]), let to = Self.bound(ends.last!) else {
                throw Problem("'\(item)' is not a page, `z` or a range such as 2-5 (expected \(Self.grammarName))")
            }
            ranges.append(Range(from: from, to: to, excludes: excludes))
        }
        self.ranges = ranges
    }

    private static func bound(_ text: Substring) -> Bound? {
        if text == "z" { return .last }
        guard let number = Int(text), number >= 1, text.first != "0", text.first != "+" else { return nil }
        return .page(number)
    }

    /// The pages chosen from a document of `count` pages, in order, counted from 1.
    ///
    /// - Throws: ``Problem`` when a range goes past the end, or nothing is left.
    package func selection(in count: Int) throws(Problem) -> [Int] {
        var pages: [Int] = self.ranges.first?.excludes == true && count > 0 ? Array(1...count) : []
        for range in self.ranges {
            let named = try range.pages(in: count)
            if range.excludes {
                let left = Set(named)
                pages.removeAll { left.contains($0) }
            } else {
                pages += named
            }
        }
        guard !pages.isEmpty else { throw Problem("no page of the PDF's \(count) is left") }
        return pages
    }

    /// Whether some range leaves pages out, which only a selection (`pages`) may do.
    package var excludes: Bool { self.ranges.contains(where: \.excludes) }

    package var description: String {
        self.ranges.map { range in
            func text(_ bound: Bound) -> String {
                switch bound {
                case .page(let number): String(number)
                case .last: "z"
                }
            }
            let ends = range.from == range.to ? text(range.from) : "\(text(range.from))-\(text(range.to))"
            return (range.excludes ? "x" : "") + ends
        }.joined(separator: ",")
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in character: Character) -> String {
        String(self.drop { $0 == character }.reversed().drop { $0 == character }.reversed())
    }
}
