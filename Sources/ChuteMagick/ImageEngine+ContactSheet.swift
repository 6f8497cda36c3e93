import ChuteCatalog
import ChuteCore
import SystemPackage

extension ImageEngine {
    /// The largest cell of a contact sheet whose rule sets no `width` or `height`, in pixels a side.
    static let contactSheetCell = 480

    /// Lays the images of a group (`request.inputs`, in order) on one contact sheet: a grid of `tiles`
    /// (COLUMNSxROWS) cells, row by row, each image fitted into its cell and centred.
    ///
    /// Each image is read through its own descriptor and decoded as a single input is (its first frame, turned
    /// upright, in sRGB). The cells are the first image's shape, within `width`/COLUMNS and `height`/ROWS when the
    /// rule bounds the sheet, else within ``contactSheetCell`` pixels a side (a first image smaller than that keeps
    /// its size, and so do the cells); every other image is fitted into that cell (enlarged
    /// or reduced, keeping its aspect ratio). Cells left empty and the margins of fitted images are `background`
    /// (white by default; `transparent` where the target holds alpha). `quality` applies to lossy targets;
    /// `maxFileSize` as for any image.
    ///
    /// - Returns: the output's size, the decoders' warnings, and the details `inputFiles`, `tiles`, `cellWidth`,
    ///   `cellHeight`, `outputWidth` and `outputHeight`.
    /// - Throws: ``ConversionFailure``: `limitExceeded` for more images than the grid has cells; a file's own
    ///   failure, naming the file and its place in the group.
    func contactSheet(
        _ inputs: [FilePath],
        grid: TileGrid,
        request: ConversionRequest,
        progress: (JobProgress) -> Void
    ) throws(ConversionFailure) -> ConversionReport {
        let cells = grid.columns * grid.rows
        guard inputs.count <= cells else {
            throw ConversionFailure(
                .limitExceeded,
                "the group has \(inputs.count) images, more than the \(cells) cells of a \(grid) contact sheet"
            )
        }
        let library = MagickLibrary.shared
        library.limitThreads(to: self.threadsPerJob)
        let options = request.options
        let background = options[ImageOptions.background].flatMap(ImageColor.init) ?? .white
        var box: (width: Int?, height: Int?) = (
            options[CommonOptions.width].map { max(1, $0 / grid.columns) },
            options[CommonOptions.height].map { max(1, $0 / grid.rows) }
        )
        if box == (nil, nil) {
            box = (Self.contactSheetCell, Self.contactSheetCell)
        }
        var report = ConversionReport(outputBytes: 0)
        var sheet: Wand?
        var cell = (width: 1, height: 1)
        for (index, input) in inputs.enumerated() {
            do throws(ConversionFailure) {
                let image = try Self.groupImage(input, request: request, library: library, report: &report)
                try Self.withMagick(library) { () throws(MagickError) in
                    if sheet == nil {
                        cell =
                            ImageOperation.fittedSize(width: image.width, height: image.height, box: box)
                            ?? (image.width, image.height)
                        sheet = try Wand.makeCanvas(width: cell.width * grid.columns, height: cell.height * grid.rows)
                    }
                    try image.fit(into: cell, background: background)
                    try sheet!.composite(
                        image,
                        x: index % grid.columns * cell.width,
                        y: index / grid.columns * cell.height
                    )
                }
            } catch {
                throw error.inGroup(input, index: index, count: inputs.count)
            }
            progress(JobProgress(fraction: 0.8 * Double(index + 1) / Double(inputs.count)))
        }
        guard let sheet else { throw ConversionFailure(.unsupportedInput, "the group has no image") }
        try Self.withMagick(library) { () throws(MagickError) in
            if background.isOpaque {
                // The empty cells, still transparent.
                try sheet.removeAlpha(onto: PixelColor(named: background.name))
            }
            if ImageOperation.lossyTargets.contains(request.format.name) {
                try sheet.setQuality(ImageOperation.quality(options))
            }
        }
        try Self.write(sheet, of: inputs, request: request, library: library, report: &report)
        progress(JobProgress(fraction: 1))
        report.details["tiles"] = grid.description
        report.details["cellWidth"] = String(cell.width)
        report.details["cellHeight"] = String(cell.height)
        report.details["outputWidth"] = String(sheet.width)
        report.details["outputHeight"] = String(sheet.height)
        return report
    }
}
