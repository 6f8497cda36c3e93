/// What a conversion does with the metadata that says where and who: the rule key `metadata`.
///
/// `strip: true` in a rule means ``strip``.
package enum MetadataPolicy: String, Sendable, Codable, CaseIterable, OptionValueConvertible {
    /// Keep the metadata the output format can hold.
    case keep
    /// Remove EXIF (with its thumbnail), GPS, XMP, IPTC, maker notes, comments and PNG text; keep the ICC profile,
    /// and bake the orientation into the pixels first. In video and audio, remove every container and stream tag
    /// but the streams' language; the rotation (a display matrix, not a tag) stays.
    case strip
    /// Remove only location: the EXIF GPS directory, XMP location properties and IPTC location fields; in video and
    /// audio, the location tags (`location`, QuickTime's `©xyz`, Apple's `com.apple.quicktime.location.ISO6709`).
    case location
}
