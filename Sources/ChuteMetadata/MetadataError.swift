/// A file whose structure could not be followed while its metadata was removed.
///
/// Every length and offset is checked before it is used, so a damaged or hostile file gives this error, never a
/// crash. The message names the structure, never the metadata's contents.
package struct MetadataError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The container being read: `JPEG`, `PNG`, `WebP`, `EXIF`, `IPTC`.
    package var container: String
    /// The byte offset in the container where the problem was found.
    package var offset: Int
    /// What is wrong there.
    package var message: String

    package init(_ container: String, at offset: Int, _ message: String) {
        self.container = container
        self.offset = offset
        self.message = message
    }

    package var description: String { "malformed \(self.container) at byte \(self.offset): \(self.message)" }
}
