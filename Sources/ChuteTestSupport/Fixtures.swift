import Foundation
import SystemPackage

/// Makes media files at test time with the real command-line tools. No binary media is committed.
package enum Fixtures {
    /// The ImageMagick 6 CLI itself (`/usr/local/bin/convert` may be a slower wrapper).
    package static let convert = "convert-im6.q16"
    package static let identify = "identify-im6.q16"

    /// Writes an image of the given size and format (by extension), with a gradient and noise so that encoders work.
    package static func makeImage(
        at path: FilePath,
        width: Int = 320,
        height: Int = 240,
        extraArguments: [String] = []
    )
        throws
    {
        try CommandLineTool.run(
            [
                self.convert, "-size", "\(width)x\(height)", "gradient:#204080-#f0c020", "-attenuate", "0.3", "+noise",
                "Uniform",
            ] + extraArguments + [path.string]
        )
    }

    /// Writes `bytes` bytes of noise: a fixed text start (so that it can never begin like a real format by chance, as
    /// random bytes starting `FF E3` would look like MP3), then random bytes.
    package static func makeRandomFile(at path: FilePath, bytes: Int) throws {
        var generator = SystemRandomNumberGenerator()
        let start = Array("noise, not media\n".utf8.prefix(bytes))
        let data = Data(start + (start.count..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
        try data.write(to: URL(fileURLWithPath: path.string))
    }

    /// Copies `source` to `destination`, keeping only the first `fraction` of its bytes.
    package static func truncatedCopy(of source: FilePath, to destination: FilePath, keeping fraction: Double) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: source.string))
        try data.prefix(Int(Double(data.count) * fraction)).write(to: URL(fileURLWithPath: destination.string))
    }

    /// What `identify` says about an image: format, width, height, JPEG quality (0 when not applicable).
    package struct ImageInfo: Sendable, Equatable {
        package var format: String
        package var width: Int
        package var height: Int
        package var quality: Int
        package var orientation: String
    }

    /// Runs `identify` on the first frame of an image.
    package static func identify(_ path: FilePath) throws -> ImageInfo {
        let result = try CommandLineTool.run([self.identify, "-format", "%m %w %h %Q %[orientation]\n", path.string])
        let fields = result.standardOutput.split(separator: "\n").first?.split(separator: " ").map(String.init) ?? []
        guard fields.count >= 5, let width = Int(fields[1]), let height = Int(fields[2]) else {
            throw CommandLineTool.Failure(command: [self.identify, path.string], result: result)
        }
        return ImageInfo(
            format: fields[0],
            width: width,
            height: height,
            quality: Int(fields[3]) ?? 0,
            orientation: fields[4]
        )
    }
}
