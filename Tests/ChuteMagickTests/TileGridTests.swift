import Testing

@testable import ChuteCatalog
@testable import ChuteMagick

@Suite struct TileGridTests {
    @Test func theGridIsColumnsByRowsAndTheLaterTilesTakeTheRemainder() throws {
        let grid = try #require(TileGrid("3x2"))
        let tiles = try grid.tiles(width: 10, height: 5)
        #expect(tiles.map(\.label) == ["r1c1", "r1c2", "r1c3", "r2c1", "r2c2", "r2c3"])
        #expect(tiles.map(\.width) == [3, 3, 4, 3, 3, 4])
        #expect(tiles.map(\.height) == [2, 2, 2, 3, 3, 3])
        #expect(tiles.map(\.x) == [0, 3, 6, 0, 3, 6])
        #expect(tiles.map(\.y) == [0, 0, 0, 2, 2, 2])
    }

    @Test(arguments: ["1x1", "0x3", "3x", "x3", "3*3", "+3x3", "11x10", "3x3x3", " 3x3"])
    func malformedOrTooLargeGridsAreRefused(text: String) {
        #expect(TileGrid(text) == nil)
    }

    @Test func aPictureSmallerThanTheGridIsRefused() throws {
        let grid = try #require(TileGrid("4x1"))
        #expect(throws: TileGrid.TooSmall.self) { try grid.tiles(width: 3, height: 100) }
        #expect(try grid.tiles(width: 4, height: 1).count == 4)
    }
}
