/// What a conversion does with the metadata that says where and who: the rule key `metadata`.
///
/// `strip: true` in a rule means ``strip``.
package enum MetadataPolicy: String, Sendable, Codable, CaseIterable, OptionValueConvertible {
    /// Keep the metadata the output format can hold.
    case keep
    /// Remove EXIF (with its thumbnail), GPS, XMP, IPTC, maker notes, comments and PNG text; keep the ICC profile,
    /// and bake the orientation into the pixels first.
    case strip
    /// Remove only location: the EXIF GPS directory, XMP location properties and IPTC location fields.
    case location
}
