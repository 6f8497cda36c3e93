import SystemPackage

/// The ICC profiles that turn print colours into sRGB: Ghostscript's, which Debian ships in `libgs-common` (a
/// dependency of the package), read once per worker.
struct ColorProfiles: Sendable {
    /// The profile assumed for CMYK pictures that carry none: Ghostscript's default, for coated paper (SWOP-like).
    var cmyk: [UInt8]
    /// The sRGB profile the pixels are transformed into, and that the output then carries.
    var sRGB: [UInt8]

    /// Where Debian's `libgs-common` puts Ghostscript's profiles.
    static let folder = FilePath("/usr/share/color/icc/ghostscript")
    /// The largest profile read; Ghostscript's default CMYK profile takes 183 KiB.
    static let maximumSize = 4 << 20

    /// The profiles, or `nil` when either file is missing or unreadable: CMYK then goes through ImageMagick's
    /// formula (`MagickTransformImageColorspace`), which ignores the ink's real colours.
    static let installed: ColorProfiles? = {
        guard let cmyk = Self.read("default_cmyk.icc"), let sRGB = Self.read("srgb.icc") else { return nil }
        return ColorProfiles(cmyk: cmyk, sRGB: sRGB)
    }()

    /// The bytes of the profile `name` in ``folder``; `nil` when it cannot be read whole.
    private static func read(_ name: String) -> [UInt8]? {
        do {
            let descriptor = try FileDescriptor.open(Self.folder.appending(name), .readOnly, options: [.closeOnExec])
            defer { try? descriptor.close() }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }
                if count == 0 { return bytes.isEmpty ? nil : bytes }
                bytes += chunk[..<count]
                guard bytes.count <= Self.maximumSize else { return nil }
            }
        } catch {
            return nil
        }
    }
}
