import Foundation
import SystemPackage
import Testing

@testable import ChuteMagick

/// The WebP header reader agrees with ImageMagick on lossy, lossless and extended (alpha, animation) files.
@Suite struct WebPHeaderTests {
    @Test(arguments: [
        ("lossy", ["-quality", "80"], 321, 123),
        ("lossless", ["-define", "webp:lossless=true"], 17, 4000),
        ("alpha", ["-alpha", "set", "-channel", "A", "-evaluate", "set", "50%", "+channel"], 640, 480),
    ])
    func readsTheCanvasSize(_ name: String, _ arguments: [String], _ width: Int, _ height: Int) throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("\(name).webp")
        try MagickTool.convert(["-size", "\(width)x\(height)", "gradient:red-blue"] + arguments + [path.string])
        let data = try Data(contentsOf: URL(fileURLWithPath: path.string))
        let header = data.withUnsafeBytes { WebPHeader($0) }
        #expect(header == WebPHeader(width: width, height: height), "\(name)")
    }

    @Test func refusesWhatIsNotWebP() {
        let bytes: [UInt8] = Array("RIFF\u{0}\u{0}\u{0}\u{0}WAVEfmt ".utf8) + Array(repeating: 0, count: 20)
        #expect(bytes.withUnsafeBytes { WebPHeader($0) } == nil)
        #expect([UInt8](repeating: 0, count: 8).withUnsafeBytes { WebPHeader($0) } == nil)
    }
}
