/// A kind of metadata a removal took out of a file, as a sidecar names it (never its values).
package enum MetadataKind: String, Sendable, Codable, CaseIterable, Comparable {
    /// EXIF: camera, dates, settings, maker notes (JPEG APP1 `Exif`, PNG `eXIf`, WebP `EXIF`).
    case exif
    /// The EXIF GPS directory: the position where the photo was taken.
    case gps
    /// The EXIF thumbnail (IFD1) or a JFIF extension thumbnail.
    case thumbnail
    /// XMP packets, extended XMP included.
    case xmp
    /// IPTC records (JPEG APP13).
    case iptc
    /// Only the location fields of the IPTC records (city, sublocation, province or state, country).
    case iptcLocation
    /// Photoshop image resources without IPTC (JPEG APP13).
    case photoshop
    /// Comments (JPEG `COM`).
    case comment
    /// PNG text chunks (`tEXt`, `zTXt`, `iTXt`) other than profiles.
    case text
    /// The PNG modification time (`tIME`).
    case time
    /// Other application segments: maker, editor and multi-picture data (JPEG APPn).
    case vendor
    /// Bytes after the end of the image (appended images or videos, trailers).
    case trailer
    /// The video of a motion photo (Google's or Samsung's), appended after a JPEG (listed instead of `trailer`) or in
    /// a HEIC or AVIF file's `mpvd` box.
    case motionPhotoVideo

    package static func < (lhs: Self, rhs: Self) -> Bool {
        (Self.allCases.firstIndex(of: lhs) ?? 0) < (Self.allCases.firstIndex(of: rhs) ?? 0)
    }
}
