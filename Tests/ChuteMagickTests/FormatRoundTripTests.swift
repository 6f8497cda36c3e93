import ChuteCore
import ChuteMagick
import Foundation
import SystemPackage
import Testing

/// Issue 11's acceptance for image formats: a generated image goes through Chute's own engine to every image target
/// and back to PNG, and must come back at its size and within a pixel difference bound for the format.
///
/// Two sources, both 97x61 (odd sizes catch chroma-subsampling and padding mistakes) and 8 bits per sample: one
/// opaque, one whose alpha fades from opaque to 20 %. Each comes back compared (`compare -metric RMSE`, normalised:
/// 0 is identical, 1 black against white) with what the format can hold: the source itself for formats with alpha;
/// the source flattened onto white (as the engine does) for the others; that in grey for PGM; that in ImageMagick's
/// dithered black and white (`-monochrome`) for PBM, whose output must also hold only black and white. YUV is 4:2:0
/// and needs an even size: it goes from a 96x60 crop of the sources (97x61 is refused, see
/// ``ImageEngineTests``). Raw RGB and YUV come back through the engine's raw reading, at 8 bits per sample.
@Suite struct FormatRoundTripTests {
    /// One target: the type its output must sniff as (`nil` for raw samples, which have no header), whether it holds
    /// alpha, and the largest RMSE accepted for the opaque and the transparent source.
    struct Target: Sendable, CustomStringConvertible {
        var name: String
        var type: MediaType?
        var holdsAlpha: Bool
        var bound: Double
        var alphaBound: Double
        var description: String { self.name }
    }

    /// Lossless formats at 8 bits come back exact; EXR stores half floats. The lossy ones are encoded at the default
    /// quality (0.85); GIF quantises to 256 colours and keeps only binary transparency (of a fade to 20 % alpha).
    /// Flattening onto white rounds differently in the engine and in `convert`: up to one 8-bit level (0.004), as
    /// does ImageMagick's grey of PGM against `-colorspace gray`.
    static let targets: [Target] = [
        Target(name: "jpg", type: .jpeg, holdsAlpha: false, bound: 0.01, alphaBound: 0.01),
        Target(name: "png", type: .png, holdsAlpha: true, bound: 0, alphaBound: 0),
        Target(name: "webp", type: .webp, holdsAlpha: true, bound: 0.02, alphaBound: 0.02),
        Target(name: "heic", type: .heif, holdsAlpha: false, bound: 0.02, alphaBound: 0.02),
        Target(name: "avif", type: .avif, holdsAlpha: false, bound: 0.02, alphaBound: 0.02),
        Target(name: "tiff", type: .tiff, holdsAlpha: true, bound: 0, alphaBound: 0),
        Target(name: "gif", type: .gif, holdsAlpha: true, bound: 0.02, alphaBound: 0.2),
        Target(name: "bmp", type: .bmp, holdsAlpha: true, bound: 0, alphaBound: 0),
        Target(name: "jp2", type: .jpeg2000, holdsAlpha: true, bound: 0.002, alphaBound: 0.002),
        Target(name: "tga", type: .tga, holdsAlpha: true, bound: 0, alphaBound: 0),
        Target(name: "exr", type: .openexr, holdsAlpha: true, bound: 0.001, alphaBound: 0.001),
        Target(name: "pbm", type: .netpbm, holdsAlpha: false, bound: 0.05, alphaBound: 0.05),
        Target(name: "pgm", type: .netpbm, holdsAlpha: false, bound: 0.004, alphaBound: 0.004),
        Target(name: "ppm", type: .netpbm, holdsAlpha: false, bound: 0, alphaBound: 0.004),
        Target(name: "pam", type: .netpbm, holdsAlpha: true, bound: 0, alphaBound: 0),
        Target(name: "pfm", type: .netpbm, holdsAlpha: false, bound: 0.0001, alphaBound: 0.004),
        Target(name: "sgi", type: .sgi, holdsAlpha: true, bound: 0, alphaBound: 0),
        Target(name: "ras", type: .sunraster, holdsAlpha: true, bound: 0, alphaBound: 0),
        Target(name: "xwd", type: .xwd, holdsAlpha: false, bound: 0, alphaBound: 0.004),
        Target(name: "rgb", type: nil, holdsAlpha: false, bound: 0, alphaBound: 0.004),
        Target(name: "yuv", type: nil, holdsAlpha: false, bound: 0.01, alphaBound: 0.01),
    ]

    /// One line of the printed table.
    private struct Row {
        var format: String
        var source: String
        var bytes: Int64
        var size: String
        var sizeIsRight: Bool
        var rmse: Double
        var bound: Double
        /// The engine's failure, when a conversion failed.
        var failure: ConversionFailure?
    }

    @Test func everyImageFormatGoesThereAndBackWithinItsBound() throws {
        let directory = try TemporaryDirectory()
        let opaque = directory.file("opaque.png")
        try MagickTool.convert([
            "-size", "97x61", "gradient:#d02030-#20a0f0", "(", "-size", "61x97", "gradient:#ffff00-#00a040",
            "-rotate", "90", ")", "-compose", "blend", "-define", "compose:args=50", "-composite", "-depth", "8",
            opaque.string,
        ])
        let translucent = directory.file("translucent.png")
        try MagickTool.convert([
            opaque.string, "(", "-size", "97x61", "gradient:white-#333333", ")", "-alpha", "off", "-compose",
            "copy_opacity", "-composite", "-depth", "8", translucent.string,
        ])
        try #require(try MagickTool.identify("%wx%h %A", translucent) == "97x61 True")

        var rows: [Row] = []
        for (label, source) in [("opaque", opaque), ("alpha", translucent)] {
            for target in Self.targets {
                do {
                    rows.append(try Self.roundTrip(source, label: label, to: target, in: directory))
                } catch let failure as ConversionFailure {
                    rows.append(
                        Row(
                            format: target.name,
                            source: label,
                            bytes: 0,
                            size: "-",
                            sizeIsRight: false,
                            rmse: 1,
                            bound: 0,
                            failure: failure
                        )
                    )
                }
            }
        }

        print(Self.table(rows))
        for row in rows {
            #expect(
                row.failure == nil,
                "\(row.format) from the \(row.source) source: \(row.failure.map(String.init) ?? "")"
            )
            #expect(row.sizeIsRight, "\(row.format) from the \(row.source) source came back \(row.size)")
            #expect(row.rmse <= row.bound, "\(row.format) from the \(row.source) source: RMSE \(row.rmse)")
        }
    }

    /// Converts `source` to `target` and back to PNG through the engine, and measures the result.
    private static func roundTrip(
        _ source: FilePath,
        label: String,
        to target: Target,
        in directory: borrowing TemporaryDirectory
    ) throws -> Row {
        let stem = "\(label)-\(target.name)"
        var input = source
        var width = 97
        var height = 61
        if target.name == "yuv" {
            input = directory.file("\(stem)-even.png")
            try MagickTool.convert([source.string, "-crop", "96x60+0+0", "+repage", input.string])
            (width, height) = (96, 60)
        }
        let encoded = directory.file("\(stem).\(target.name)")
        let report = try Conversion.run(input, to: target.name, output: encoded)
        if let type = target.type {
            #expect(MediaType.sniff(try encoded.readBytes()) == type, "\(target.name) output sniffs as another type")
        }
        let raw = try RawPixelLayout.Samples(rawValue: target.name).map { samples in
            try RawPixelLayout(samples: samples, width: width, height: height, depth: 8)
        }
        let back = directory.file("\(stem)-back.png")
        _ = try Conversion.run(encoded, to: "png", output: back, rawInput: raw)

        let reference = directory.file("\(stem)-reference.png")
        var arguments = [input.string]
        if !target.holdsAlpha {
            arguments += ["-background", "white", "-alpha", "remove", "-alpha", "off"]
        }
        if target.name == "pgm" {
            arguments += ["-colorspace", "gray"]
        }
        if target.name == "pbm" {
            arguments += ["-monochrome"]
            #expect(
                try MagickTool.identify("%k", back) == "2",
                "the PBM output holds other colours than black and white"
            )
        }
        try MagickTool.convert(arguments + [reference.string])
        let size = try MagickTool.identify("%wx%h", back)
        return Row(
            format: target.name,
            source: label,
            bytes: report.outputBytes,
            size: size,
            sizeIsRight: size == "\(width)x\(height)",
            rmse: try MagickTool.rmse(reference, back),
            bound: label == "alpha" ? target.alphaBound : target.bound,
            failure: nil
        )
    }

    /// The rows as a fixed-width table.
    private static func table(_ rows: [Row]) -> String {
        func pad(_ text: String, _ width: Int) -> String {
            text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
        }
        var lines = ["format  source  bytes   size    dims ok  RMSE       bound"]
        for row in rows {
            lines.append(
                pad(row.format, 8) + pad(row.source, 8) + pad(String(row.bytes), 8) + pad(row.size, 8)
                    + pad(row.sizeIsRight ? "yes" : "NO", 9) + pad(String(format: "%.6f", row.rmse), 11)
                    + String(format: "%.4f", row.bound) + (row.failure.map { "  \($0)" } ?? "")
            )
        }
        return lines.joined(separator: "\n")
    }
}
