import ChuteCore
import Testing

/// Names in natural order: numbers by value, text without regard to case, and a total order for names equal that way.
@Suite struct NaturalOrderTests {
    @Test func numbersCompareByTheirValue() {
        let names = ["10.jpg", "2.jpg", "1.jpg", "scan-10.pdf", "scan-9.pdf", "scan-100.pdf", "20.jpg", "3.jpg"]
        #expect(
            names.sorted(by: NaturalOrder.areInIncreasingOrder)
                == ["1.jpg", "2.jpg", "3.jpg", "10.jpg", "20.jpg", "scan-9.pdf", "scan-10.pdf", "scan-100.pdf"]
        )
    }

    @Test func textIgnoresCaseAndTiesAreSettled() {
        #expect(
            ["b.pdf", "A.pdf", "a2.pdf", "a10.pdf", "a.pdf"].sorted(by: NaturalOrder.areInIncreasingOrder)
                == ["A.pdf", "a.pdf", "a2.pdf", "a10.pdf", "b.pdf"]
        )
        // Fewer leading zeros first, then a prefix before the longer name.
        #expect(["007.jpg", "7.jpg"].sorted(by: NaturalOrder.areInIncreasingOrder) == ["7.jpg", "007.jpg"])
        #expect(["page10b", "page10"].sorted(by: NaturalOrder.areInIncreasingOrder) == ["page10", "page10b"])
        #expect(!NaturalOrder.areInIncreasingOrder("same", "same"))
    }

    @Test func numbersLongerThanAnyIntegerStillCompare() {
        let big = "99999999999999999999999999.pdf"
        #expect(NaturalOrder.areInIncreasingOrder("9.pdf", big))
        #expect(!NaturalOrder.areInIncreasingOrder(big, "9.pdf"))
    }

    @Test func pathsCompareComponentByComponent() {
        let paths = [["b", "1.pdf"], ["a", "10.pdf"], ["a", "2.pdf"], ["10.pdf"], ["2.pdf"]]
        #expect(
            paths.sorted(by: NaturalOrder.areInIncreasingOrder(components:_:))
                == [["2.pdf"], ["10.pdf"], ["a", "2.pdf"], ["a", "10.pdf"], ["b", "1.pdf"]]
        )
    }
}
