import CChuteLinux
import ChuteApp
import ChuteCatalog
import ChuteCore
import ChuteMagick
import Foundation
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under the system's temporary directory, removed with everything in it when dropped.
struct TemporaryDirectory: ~Copyable {
    let path: FilePath

    init() throws {
        var template = Array("\(NSTemporaryDirectory())/chute-magick-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw FixtureError("mkdtemp failed: errno \(errno)") }
        self.path = FilePath(String(cString: created))
    }

    deinit {
        try? FileManager.default.removeItem(atPath: self.path.string)
    }

    /// The path of `name` inside the directory.
    func file(_ name: String) -> FilePath {
        self.path.appending(name)
    }
}

/// A fixture could not be made.
struct FixtureError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// The ImageMagick command-line tools that make and inspect fixtures; the real binaries, not the `convert` on PATH.
enum MagickTool {
    static let convert = "/usr/bin/convert-im6.q16"
    static let identify = "/usr/bin/identify-im6.q16"

    /// Runs `convert` with `arguments`.
    static func convert(_ arguments: [String]) throws {
        _ = try self.run(self.convert, arguments)
    }

    /// Returns what `identify -format FORMAT PATH` prints, for the first frame only unless `allFrames` is set.
    static func identify(_ format: String, _ path: FilePath, allFrames: Bool = false) throws -> String {
        try self.run(self.identify, ["-format", format, allFrames ? path.string : "\(path.string)[0]"])
    }

    static let compare = "/usr/bin/compare-im6.q16"

    /// The normalised root-mean-square difference between two images of the same size, as `compare -metric RMSE`
    /// prints it (0 for identical pixels, 1 for black against white).
    static func rmse(_ reference: FilePath, _ candidate: FilePath) throws -> Double {
        // compare exits 1 when the images differ at all: only its text tells.
        let text = try self.run(
            self.compare,
            ["-metric", "RMSE", reference.string, candidate.string, "null:"],
            acceptedStatuses: [0, 1],
            keepingErrorOutput: true
        )
        guard let open = text.firstIndex(of: "("), let close = text.firstIndex(of: ")"),
            let value = Double(text[text.index(after: open)..<close])
        else {
            throw FixtureError("compare printed no RMSE: \(text)")
        }
        return value
    }

    private static func run(
        _ executable: String,
        _ arguments: [String],
        acceptedStatuses: Set<Int32> = [0],
        keepingErrorOutput: Bool = false
    ) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let text = output.fileHandleForReading.readDataToEndOfFile()
        let errorText = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard acceptedStatuses.contains(process.terminationStatus) else {
            throw FixtureError(
                "\(executable) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): "
                    + String(decoding: errorText, as: UTF8.self)
            )
        }
        return String(decoding: keepingErrorOutput ? errorText : text, as: UTF8.self)
    }
}

/// Helpers around one engine conversion.
enum Conversion {
    /// Converts `input` to the format `name` (`jpg`, `webp`, …), writing `output`.
    static func run(
        _ input: FilePath,
        to name: String,
        output: FilePath,
        options: ConversionOptions = ConversionOptions(),
        rawInput: RawPixelLayout? = nil
    ) throws(ConversionFailure) -> ConversionReport {
        guard let format = Engines.registry.format(named: name) else { preconditionFailure("unknown format \(name)") }
        let request = ConversionRequest(
            jobID: "test",
            engine: .image,
            input: input,
            output: output,
            format: format,
            options: options.declaring(rawInput)
        )
        return try ImageEngine().convert(request) { _ in }
    }

    /// Runs a conversion that must fail, and returns its failure.
    static func failure(
        _ input: FilePath,
        to name: String,
        output: FilePath,
        rawInput: RawPixelLayout? = nil
    ) -> ConversionFailure? {
        do {
            _ = try self.run(input, to: name, output: output, rawInput: rawInput)
            return nil
        } catch {
            return error
        }
    }
}

/// Fixture bytes that the command-line tools cannot make: ImageMagick 6 writes no EXIF of its own.
enum FixtureBytes {
    /// Inserts an EXIF APP1 segment right after a JPEG's SOI marker, with an IFD0 that holds `Make` and/or
    /// `Orientation`.
    static func addingEXIF(make: String? = nil, orientation: UInt16? = nil, to jpeg: [UInt8]) -> [UInt8] {
        let entryCount = (make == nil ? 0 : 1) + (orientation == nil ? 0 : 1)
        let dataOffset = UInt32(8 + 2 + 12 * entryCount + 4)
        // Big-endian TIFF header, then IFD0 at offset 8; entries in tag order; values over 4 bytes after the IFD.
        var tiff: [UInt8] = Array("MM".utf8) + [0x00, 0x2A] + bigEndian(8)
        tiff += [0x00, UInt8(entryCount)]
        var data: [UInt8] = []
        if let make {
            let value = Array(make.utf8) + [0]
            tiff += [0x01, 0x0F, 0x00, 0x02] + bigEndian(UInt32(value.count)) + bigEndian(dataOffset)
            data += value
        }
        if let orientation {
            tiff +=
                [0x01, 0x12, 0x00, 0x03] + bigEndian(1) + [UInt8(orientation >> 8), UInt8(orientation & 0xFF), 0, 0]
        }
        tiff += bigEndian(0)  // no next IFD
        tiff += data
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        let length = UInt16(payload.count + 2)
        let segment: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        return Array(jpeg[0..<2]) + segment + Array(jpeg[2...])
    }

    /// A minimal ICC profile: a 128-byte header (display class, RGB data, XYZ connection space) and no tags.
    static let iccProfile: [UInt8] = {
        var profile = [UInt8](repeating: 0, count: 132)
        profile.replaceSubrange(0..<4, with: bigEndian(132))
        profile.replaceSubrange(8..<12, with: [0x02, 0x10, 0x00, 0x00])
        profile.replaceSubrange(12..<16, with: Array("mntr".utf8))
        profile.replaceSubrange(16..<20, with: Array("RGB ".utf8))
        profile.replaceSubrange(20..<24, with: Array("XYZ ".utf8))
        profile.replaceSubrange(36..<40, with: Array("acsp".utf8))
        return profile
    }()

    /// Inserts ``iccProfile`` as an APP2 `ICC_PROFILE` segment right after a JPEG's SOI marker.
    static func addingICCProfile(to jpeg: [UInt8]) -> [UInt8] {
        let payload = Array("ICC_PROFILE".utf8) + [0, 1, 1] + self.iccProfile
        let length = UInt16(payload.count + 2)
        let segment: [UInt8] = [0xFF, 0xE2, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        return Array(jpeg[0..<2]) + segment + Array(jpeg[2...])
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}

extension FilePath {
    /// The file's bytes.
    func readBytes() throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: self.string)))
    }

    /// Replaces the file's content with `bytes`.
    func write(_ bytes: [UInt8]) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: self.string))
    }

    /// Whether anything, even a dangling symbolic link, exists at this path.
    var exists: Bool {
        var status = Glibc.stat()
        return lstat(self.string, &status) == 0
    }
}

extension ConversionOptions {
    /// These options with a rule's `rawFormat`, `rawSize` and `rawDepth` for `layout`.
    fileprivate func declaring(_ layout: RawPixelLayout?) -> ConversionOptions {
        guard let layout else { return self }
        var options = self
        options[ImageOptions.rawFormat] = layout.samples
        options[ImageOptions.rawSize] = "\(layout.width)x\(layout.height)"
        options[ImageOptions.rawDepth] = layout.depth
        return options
    }
}
