import ChuteCore

/// The grid of `tiles: COLUMNSxROWS`: how a picture is cut into tiles, each its own output.
///
/// Column `c` of `C` spans the pixels from `⌊c·W/C⌋` to `⌊(c+1)·W/C⌋` of a picture `W` wide, and rows likewise, so the
/// tiles cover the picture exactly, differ by at most a pixel, and the later ones take the remainder.
package struct TileGrid: Equatable, CustomStringConvertible {
    /// One tile: its label (`r2c3`, row then column, from 1) and its box in the picture.
    package struct Tile: Equatable {
        package var label: String
        package var x: Int
        package var y: Int
        package var width: Int
        package var height: Int
    }

    /// The picture is too small for the grid: a tile would have no pixels.
    package struct TooSmall: Error, CustomStringConvertible {
        package var grid: TileGrid
        package var width: Int
        package var height: Int

        package var description: String {
            "the image is \(self.width)x\(self.height) pixels, too small to cut into \(self.grid.columns) columns and "
                + "\(self.grid.rows) rows"
        }
    }

    /// The most tiles a grid may have: each is an output, and a job's outputs are at most ``OutputPart/limit``.
    package static let maximumTiles = OutputPart.limit

    package var columns: Int
    package var rows: Int

    /// Reads `3x3` (columns x rows); `nil` unless both are whole numbers and the grid has 2 to ``maximumTiles``
    /// tiles.
    package init?(_ text: String) {
        let parts = text.split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { ("0"..."9").contains($0) } }),
            let columns = Int(parts[0]), let rows = Int(parts[1]), columns >= 1, rows >= 1,
            columns <= Self.maximumTiles, rows <= Self.maximumTiles, (2...Self.maximumTiles).contains(columns * rows)
        else { return nil }
        self.columns = columns
        self.rows = rows
    }

    package var description: String { "\(self.columns)x\(self.rows)" }

    /// The tiles of a `width` × `height` picture, row by row.
    ///
    /// - Throws: ``TooSmall`` when the picture has fewer columns or rows of pixels than the grid.
    package func tiles(width: Int, height: Int) throws(TooSmall) -> [Tile] {
        guard width >= self.columns, height >= self.rows else {
            throw TooSmall(grid: self, width: width, height: height)
        }
        func edge(_ index: Int, of count: Int, across length: Int) -> Int { index * length / count }
        return (0..<self.rows).flatMap { row in
            (0..<self.columns).map { column in
                let (left, top) = (
                    edge(column, of: self.columns, across: width), edge(row, of: self.rows, across: height)
                )
                return Tile(
                    label: "r\(row + 1)c\(column + 1)",
                    x: left,
                    y: top,
                    width: edge(column + 1, of: self.columns, across: width) - left,
                    height: edge(row + 1, of: self.rows, across: height) - top
                )
            }
        }
    }
}
