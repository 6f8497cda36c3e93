import Foundation
import SystemPackage

/// Writes small Adobe DNG files, the one camera RAW format Chute's tests can make themselves: no tool on Debian 12
/// writes DNG (ImageMagick cannot, `dcraw` only reads, `exiftool` edits but does not create one).
///
/// The file is what a camera's DNG holds at its simplest: one uncompressed 16-bit Bayer mosaic (RGGB) in IFD0, with
/// the DNG tags LibRaw needs to develop it (version, colour matrix, white balance as shot, white level). The
/// camera's colour matrix is the XYZ-to-linear-sRGB one, so the mosaic's samples are linear sRGB intensities.
package enum DNGFixture {
    /// A linear-light RGB colour, each channel 0…1.
    package typealias Colour = (red: Double, green: Double, blue: Double)

    /// The camera maker, model and capture time written into the file.
    package static let make = "Chute"
    package static let model = "Test Camera"
    package static let dateTime = "2024:06:01 10:00:00"

    /// Makes the bytes of a DNG whose image is `width` × `height` (both even) with the colour `colour(x, y)` at each
    /// pixel, shown upright after `orientation` (the EXIF value, 1–8).
    package static func make(
        width: Int,
        height: Int,
        orientation: Int = 1,
        colour: (_ x: Int, _ y: Int) -> Colour
    ) -> [UInt8] {
        precondition(width % 2 == 0 && height % 2 == 0, "a Bayer mosaic needs even sizes")
        var pixels: [UInt8] = []
        pixels.reserveCapacity(width * height * 2)
        for y in 0..<height {
            for x in 0..<width {
                let sample = colour(x, y)
                // RGGB: red on even rows and columns, blue on odd ones, green elsewhere.
                let value =
                    y % 2 == 0 ? (x % 2 == 0 ? sample.red : sample.green) : (x % 2 == 0 ? sample.green : sample.blue)
                let level = UInt16(max(0, min(1, value)) * 65535)
                pixels += [UInt8(level & 0xFF), UInt8(level >> 8)]
            }
        }
        func short(_ values: Int...) -> [UInt8] { values.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8 & 0xFF)] } }
        func long(_ values: Int...) -> [UInt8] {
            values.flatMap { value in (0..<4).map { UInt8(value >> (8 * $0) & 0xFF) } }
        }
        func text(_ value: String) -> [UInt8] { Array(value.utf8) + [0] }
        func rationals(_ values: [Double]) -> [UInt8] {
            values.flatMap { value -> [UInt8] in
                let numerator = Int32((value * 10000).rounded())
                return long(Int(UInt32(bitPattern: numerator)), 10000)
            }
        }
        // XYZ (D65) to linear sRGB: with it as ColorMatrix1, the camera's RGB is sRGB.
        let xyzToSRGB = [3.2406, -1.5372, -0.4986, -0.9689, 1.8758, 0.0415, 0.0557, -0.2040, 1.0570]
        // (tag, TIFF type, count, value bytes): types 1 BYTE, 2 ASCII, 3 SHORT, 4 LONG, 5 RATIONAL, 10 SRATIONAL.
        var entries: [(Int, Int, Int, [UInt8])] = [
            (0x00FE, 4, 1, long(0)),
            (0x0100, 4, 1, long(width)),
            (0x0101, 4, 1, long(height)),
            (0x0102, 3, 1, short(16)),
            (0x0103, 3, 1, short(1)),
            (0x0106, 3, 1, short(32803)),
            (0x010F, 2, text(Self.make).count, text(Self.make)),
            (0x0110, 2, text(Self.model).count, text(Self.model)),
            (0x0111, 4, 1, long(0)),  // the strip's offset, filled in below
            (0x0112, 3, 1, short(orientation)),
            (0x0115, 3, 1, short(1)),
            (0x0116, 4, 1, long(height)),
            (0x0117, 4, 1, long(pixels.count)),
            (0x011C, 3, 1, short(1)),
            (0x0132, 2, text(Self.dateTime).count, text(Self.dateTime)),
            (0x828D, 3, 2, short(2, 2)),
            (0x828E, 1, 4, [0, 1, 1, 2]),
            (0xC612, 1, 4, [1, 4, 0, 0]),
            (0xC613, 1, 4, [1, 1, 0, 0]),
            (0xC614, 2, text(Self.model).count, text(Self.model)),
            (0xC61D, 4, 1, long(65535)),
            (0xC621, 10, 9, rationals(xyzToSRGB)),
            (0xC628, 5, 3, rationals([1, 1, 1])),
            (0xC65A, 3, 1, short(21)),
        ]
        let directoryLength = 2 + 12 * entries.count + 4
        var data: [UInt8] = []
        var offsets: [Int] = []
        for entry in entries {
            offsets.append(8 + directoryLength + data.count)
            if entry.3.count > 4 {
                data += entry.3
                if data.count % 2 == 1 { data.append(0) }
            }
        }
        let stripOffset = 8 + directoryLength + data.count
        if let index = entries.firstIndex(where: { $0.0 == 0x0111 }) { entries[index].3 = long(stripOffset) }

        var file: [UInt8] = [0x49, 0x49, 0x2A, 0x00] + long(8) + short(entries.count)
        for (index, (tag, type, count, value)) in entries.enumerated() {
            file += short(tag, type) + long(count)
            file += value.count > 4 ? long(offsets[index]) : value + [UInt8](repeating: 0, count: 4 - value.count)
        }
        return file + long(0) + data + pixels
    }

    /// Writes a DNG at `path` (see ``make(width:height:orientation:colour:)``).
    package static func write(
        to path: FilePath,
        width: Int,
        height: Int,
        orientation: Int = 1,
        colour: (_ x: Int, _ y: Int) -> Colour
    ) throws {
        let bytes = Self.make(width: width, height: height, orientation: orientation, colour: colour)
        try Data(bytes).write(to: URL(fileURLWithPath: path.string))
    }

    /// The top half red, the bottom half blue: which way is up shows after any rotation.
    package static func redOverBlue(height: Int) -> (Int, Int) -> Colour {
        { _, y in y < height / 2 ? (0.8, 0.05, 0.05) : (0.05, 0.05, 0.8) }
    }
}
