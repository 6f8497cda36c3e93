import ChuteCatalog
import ChuteCore
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

extension ImageEngine {
    /// Cuts the finished picture into the tiles of `grid` and writes each as a part of the job (``OutputPart``):
    /// encoded, read back at its size, written and synced under its temporary name beside `request.output`.
    ///
    /// - Returns: the report with one part per tile, row by row, `outputBytes` their total, and the details `tiles`
    ///   (the grid) and `outputWidth` and `outputHeight` (the picture that was cut).
    /// - Throws: ``ConversionFailure``; `unsupportedInput` when the picture has fewer pixels than the grid has
    ///   columns or rows. Every tile written so far is removed first.
    static func writeTiles(
        of images: borrowing Wand,
        grid: TileGrid,
        request: ConversionRequest,
        report: ConversionReport,
        progress: (JobProgress) -> Void
    ) throws(ConversionFailure) -> ConversionReport {
        let library = MagickLibrary.shared
        var report = report
        let tiles: [TileGrid.Tile]
        do {
            tiles = try grid.tiles(width: images.width, height: images.height)
        } catch {
            throw ConversionFailure(.unsupportedInput, "cannot cut into tiles: \(error)")
        }
        let (width, height) = (images.width, images.height)
        var written: [FilePath] = []
        do throws(ConversionFailure) {
            for (index, tile) in tiles.enumerated() {
                let piece = try Self.withMagick(library) { () throws(MagickError) -> Wand in
                    try images.cropped(x: tile.x, y: tile.y, width: tile.width, height: tile.height)
                }
                let encoded = try Self.encode(piece, request: request, library: library, report: &report)
                let part = OutputPart(label: tile.label, bytes: Int64(encoded.count))
                let path = part.temporaryPath(beside: request.output)
                try encoded.withUnsafeBytes { (bytes) throws(ConversionFailure) in
                    try TemporaryFile.writeOutput(bytes, at: path)
                }
                written.append(path)
                report.parts.append(part)
                progress(JobProgress(fraction: 0.5 + 0.5 * Double(index + 1) / Double(tiles.count)))
            }
        } catch {
            for path in written {
                _ = path.withPlatformString { unlink($0) }
            }
            throw error
        }
        report.outputBytes = report.parts.reduce(0) { $0 + $1.bytes }
        report.details["tiles"] = grid.description
        report.details["outputWidth"] = String(width)
        report.details["outputHeight"] = String(height)
        return report
    }
}
