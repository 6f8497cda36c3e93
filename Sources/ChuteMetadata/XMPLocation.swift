/// Finds location properties in an XMP packet.
///
/// The test is on property names, in any namespace and whatever prefix the packet binds: a name starting with
/// `GPS` (EXIF's `exif:GPSLatitude` and its siblings, DJI's `GpsLatitude`), or one of the IPTC and Photoshop
/// location names (`City`, `State`, `Country`, `Location`, `LocationCreated`, …). It errs towards finding one: a
/// packet that is not UTF-8 counts as one that has location. Location mode removes such a packet whole rather than
/// rewrite it.
package enum XMPLocation {
    /// Property names that are location wherever they appear.
    private static let names: Set<String> = [
        "City", "State", "Country", "CountryCode", "CountryName", "Location", "LocationCreated", "LocationShown",
        "Sublocation", "ProvinceState", "WorldRegion", "Latitude", "Longitude", "Altitude", "AbsoluteAltitude",
        "RelativeAltitude",
    ]

    /// Whether `packet` has a location property.
    package static func mentionsLocation(_ packet: some Collection<UInt8>) -> Bool {
        let bytes = Array(packet)
        if bytes.prefix(64).contains(0) { return true }  // UTF-16 or UTF-32: not read, so not kept.
        var index = 0
        while index < bytes.count {
            // A qualified name's local part follows the prefix's colon.
            guard bytes[index] == UInt8(ascii: ":") else {
                index += 1
                continue
            }
            var end = index + 1
            while end < bytes.count, Self.isNameCharacter(bytes[end]) { end += 1 }
            if Self.isLocationName(String(decoding: bytes[(index + 1)..<end], as: UTF8.self)) { return true }
            index = end
        }
        return false
    }

    /// Whether a property's local name (after its prefix) is one of location: `GPS…` or a location name.
    package static func isLocationName(_ name: some StringProtocol) -> Bool {
        name.uppercased().hasPrefix("GPS") || Self.names.contains(String(name))
    }

    /// Whether `byte` can continue an XML name (ASCII letters, digits, `_`, `-`, `.`).
    private static func isNameCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."):
            true
        default: false
        }
    }
}
