import ChuteCore

/// A file with metadata removed, and what was removed.
package struct MetadataRemoval: Sendable, Equatable {
    /// The file without the metadata: its image data byte for byte as it was.
    package var bytes: [UInt8]
    /// The kinds of metadata that were removed (the values are never kept).
    package var removed: Set<MetadataKind>
    /// The EXIF orientation of the input (2 to 8), or `nil` when it had none or said "upright" (1).
    package var orientation: Int?
    /// When the input was taken, from its EXIF (``EXIF/captureTime``), or `nil` when it says nothing.
    package var captureTime: CaptureTime?

    package init(bytes: [UInt8], removed: Set<MetadataKind>, orientation: Int?, captureTime: CaptureTime? = nil) {
        self.bytes = bytes
        self.removed = removed
        self.orientation = orientation
        self.captureTime = captureTime
    }

    /// The container formats whose metadata can be removed without decoding the image.
    package enum Container: String, Sendable {
        case jpeg, png, webp
    }

    /// Removes the metadata that `policy` names from a JPEG, PNG or WebP file, leaving the image data as it is.
    ///
    /// `strip` removes every kind of ``MetadataKind`` but keeps what decoding needs: the ICC profile (JPEG APP2,
    /// PNG `iCCP`, WebP `ICCP`), JPEG's JFIF and Adobe segments (the Adobe one says how to read the colours), and
    /// PNG's colour and density chunks. `location` removes only location: the EXIF GPS IFD, XMP packets that hold
    /// any location property, the IPTC location fields, and images appended after the end of a JPEG. The
    /// orientation is not applied: that is the caller's business (see ``orientation``).
    ///
    /// - Parameters:
    ///   - policy: what to remove; `keep` returns the file as it is.
    ///   - bytes: the whole file.
    ///   - container: its format.
    /// - Throws: ``MetadataError`` when the file's structure is malformed or truncated.
    package static func removing(
        _ policy: MetadataPolicy,
        from bytes: [UInt8],
        container: Container
    ) throws(MetadataError) -> MetadataRemoval {
        switch container {
        case .jpeg: try JPEGMetadata.removing(policy, from: bytes)
        case .png: try PNGMetadata.removing(policy, from: bytes)
        case .webp: try WebPMetadata.removing(policy, from: bytes)
        }
    }

    /// The removed kinds, sorted and comma-separated, for a sidecar (`exif,gps,xmp`), or `none`.
    package var removedList: String { Self.list(self.removed) }

    /// The orientation of an EXIF block, treating an upright or unreadable one as none.
    static func orientation(ofEXIF bytes: [UInt8]) -> Int? {
        guard let orientation = (try? EXIF(bytes))?.orientation, orientation != 1 else { return nil }
        return orientation
    }

    /// What `strip` removes with an EXIF block: `exif`, plus `gps` and `thumbnail` when it had them.
    package static func exifKinds(_ bytes: [UInt8]) -> Set<MetadataKind> {
        guard let exif = try? EXIF(bytes) else { return [.exif] }
        var kinds: Set<MetadataKind> = [.exif]
        if exif.hasGPS { kinds.insert(.gps) }
        if exif.hasThumbnail { kinds.insert(.thumbnail) }
        return kinds
    }

    /// An EXIF block without location (see ``EXIF/removeLocation()``), or `nil` when it is malformed and must go
    /// whole.
    package static func exifWithoutLocation(_ bytes: [UInt8]) -> (bytes: [UInt8], removed: Set<MetadataKind>)? {
        guard var exif = try? EXIF(bytes), let removed = try? exif.removeLocation() else { return nil }
        return (exif.bytes, removed)
    }
}

extension MetadataRemoval {
    /// `kinds`, sorted and comma-separated, for a sidecar (`exif,gps,xmp`), or `none`.
    package static func list(_ kinds: Set<MetadataKind>) -> String {
        kinds.isEmpty ? "none" : kinds.sorted().map(\.rawValue).joined(separator: ",")
    }
}
