import CMagickWand
import ChuteCatalog
import ChuteCore
import ChuteMetadata

extension ImageEngine {
    /// The metadata policy that `options` ask for: `metadata`, else `strip: true` as ``MetadataPolicy/strip``,
    /// else ``MetadataPolicy/keep``.
    static func metadataPolicy(of options: ConversionOptions) -> MetadataPolicy {
        CommonOptions.metadataPolicy(in: options)
    }

    /// The container whose metadata can be cut out without touching the image data: when metadata is to go, the
    /// input is already the target's format (JPEG, PNG, WebP), and no option changes the pixels or their encoding
    /// (a CMYK input becomes sRGB unless the rule says `colorspace: keep`).
    static func losslessContainer(
        type: MediaType,
        request: ConversionRequest,
        policy: MetadataPolicy,
        cmyk: Bool
    ) -> MetadataRemoval.Container? {
        let options = request.options
        // Only the metadata options may be set: any other changes the pixels or their encoding.
        let metadataKeys: Set<String> = [
            CommonOptions.metadata.key, CommonOptions.strip.key, ImageOptions.colorspace.key,
        ]
        guard policy != .keep, options.values.keys.allSatisfy(metadataKeys.contains),
            !cmyk || options[ImageOptions.colorspace] == .keep
        else { return nil }
        switch (type, request.format.name) {
        case (.jpeg, "jpg"): return .jpeg
        case (.png, "png"): return .png
        case (.webp, "webp"): return .webp
        default: return nil
        }
    }

    /// Removes the metadata from a JPEG, PNG or WebP file without re-encoding it.
    ///
    /// Under `strip`, an EXIF orientation would be lost with the EXIF, so the image is first turned upright: a JPEG
    /// by a lossless DCT transform when its size allows it. When it does not, or for a PNG or WebP with an
    /// orientation, this returns `nil` and says why in `report.details["pixels"]`: the caller re-encodes through
    /// ImageMagick, which applies the orientation.
    ///
    /// - Returns: the output bytes, checked to read back at the expected size; `nil` when the image must be
    ///   re-encoded.
    /// - Throws: ``ConversionFailure`` (`corruptInput`) when the file's structure is malformed.
    static func removeMetadataLosslessly(
        from bytes: [UInt8],
        container: MetadataRemoval.Container,
        policy: MetadataPolicy,
        library: MagickLibrary,
        report: inout ConversionReport
    ) throws(ConversionFailure) -> [UInt8]? {
        var removal: MetadataRemoval
        do {
            removal = try MetadataRemoval.removing(policy, from: bytes, container: container)
        } catch {
            throw ConversionFailure(.corruptInput, "cannot remove the metadata: \(error)")
        }
        var pixels = "unchanged"
        var swapped = false
        if policy == .strip, let orientation = removal.orientation {
            guard container == .jpeg, let operation = JPEGTransformer.Operation(orientation: orientation) else {
                report.details["pixels"] = "reencoded (orientation \(orientation) in a \(container.rawValue) file)"
                return nil
            }
            do {
                let rotated = try JPEGTransformer().transform(bytes, operation)
                let removed = removal.removed
                removal = try MetadataRemoval.removing(.strip, from: rotated, container: .jpeg)
                removal.removed.formUnion(removed)
            } catch let error as TurboJPEGError {
                report.details["pixels"] = "reencoded (orientation \(orientation): \(error.message))"
                return nil
            } catch {
                throw ConversionFailure(.internalError, "cannot remove the metadata of the rotated JPEG: \(error)")
            }
            pixels = "rotated losslessly (orientation \(orientation))"
            swapped = operation.swapsDimensions
        }
        let width = Int(report.details["inputWidth"] ?? "") ?? 0
        let height = Int(report.details["inputHeight"] ?? "") ?? 0
        let expected = swapped ? (width: height, height: width) : (width: width, height: height)
        try Self.withMagick(library) { () throws(MagickError) in
            try Self.verify(removal.bytes, container: container, width: expected.width, height: expected.height)
        }
        report.details["metadataRemoved"] = removal.removedList
        report.details["pixels"] = pixels
        report.details["outputWidth"] = String(expected.width)
        report.details["outputHeight"] = String(expected.height)
        report.details["outputFrames"] = report.details["inputFrames"]
        return removal.bytes
    }

    /// The EXIF orientation of a PNG (`eXIf`) or WebP (`EXIF`), which ImageMagick 6 does not read, so that it can
    /// be applied before the EXIF is stripped; `nil` for other types, and when there is none.
    static func exifOrientation(of bytes: [UInt8], type: MediaType) -> Int? {
        let container: MetadataRemoval.Container
        switch type {
        case .png: container = .png
        case .webp: container = .webp
        default: return nil
        }
        return (try? MetadataRemoval.removing(.keep, from: bytes, container: container))?.orientation
    }

    /// When the picture was taken, from its EXIF (``EXIF/captureTime``): a JPEG's, PNG's or WebP's EXIF block, the
    /// directories of a TIFF or of a camera RAW that is TIFF inside, a HEIF or AVIF file's EXIF item; `nil` for the
    /// other types, and when the EXIF says nothing.
    package static func captureTime(of bytes: [UInt8], type: MediaType) -> CaptureTime? {
        let container: MetadataRemoval.Container
        switch type {
        case .jpeg: container = .jpeg
        case .png: container = .png
        case .webp: container = .webp
        case .tiff: return (try? EXIF(bytes))?.captureTime
        case _ where Self.tiffStructuredRawTypes.contains(type): return (try? EXIF(bytes))?.captureTime
        case _ where Self.heifTypes.contains(type):
            return Self.heifEXIF(of: bytes).flatMap { try? EXIF($0) }?.captureTime
        default: return nil
        }
        return (try? MetadataRemoval.removing(.keep, from: bytes, container: container))?.captureTime
    }

    /// Reads back the headers of a losslessly edited file and compares the first frame's size.
    private static func verify(
        _ bytes: [UInt8],
        container: MetadataRemoval.Container,
        width: Int,
        height: Int
    ) throws(MagickError) {
        let read: (width: Int, height: Int)
        if container == .webp {
            let header = bytes.withUnsafeBytes { WebPHeader($0) }
            read = (header?.width ?? 0, header?.height ?? 0)
        } else {
            let headers = Wand()
            try headers.read(bytes, coder: container == .jpeg ? "JPEG" : "PNG", headersOnly: true)
            try headers.selectImage(at: 0)
            read = (headers.width, headers.height)
        }
        guard read == (width, height) else {
            throw MagickError(
                code: .verify,
                function: "MagickPingImageBlob",
                severity: 0,
                message: "the \(container.rawValue) output reads back as \(read.width)x\(read.height), not "
                    + "\(width)x\(height)"
            )
        }
    }

    /// Strips the current image's metadata but its colour profile (see ``Wand/stripMetadataKeepingColorProfile()``).
    ///
    /// - Returns: the kinds that were there.
    static func strip(_ images: borrowing Wand) throws(MagickError) -> Set<MetadataKind> {
        var removed: Set<MetadataKind> = []
        for name in images.profileNames {
            switch name {
            case "exif": removed.formUnion(images.profile(name).map(MetadataRemoval.exifKinds) ?? [.exif])
            case "xmp": removed.insert(.xmp)
            case "iptc": removed.insert(.iptc)
            case "8bim": removed.insert(.photoshop)
            case "icc", "icm": break
            default: removed.insert(.vendor)
            }
        }
        if removed.contains(.iptc) { removed.remove(.photoshop) }
        if images.property("comment") != nil { removed.insert(.comment) }
        try images.stripMetadataKeepingColorProfile()
        return removed
    }

    /// Removes only location from the current image's EXIF, XMP, IPTC and Photoshop profiles, editing their bytes
    /// as ``MetadataRemoval`` does and setting them back; a profile that cannot be read goes whole.
    ///
    /// - Returns: the kinds removed.
    static func removeLocation(from images: borrowing Wand) throws(MagickError) -> Set<MetadataKind> {
        var removed: Set<MetadataKind> = []
        if let exif = images.profile("exif") {
            if let (edited, kinds) = MetadataRemoval.exifWithoutLocation(exif) {
                if !kinds.isEmpty { try images.setProfile("exif", to: edited) }
                removed.formUnion(kinds)
            } else {
                images.removeProfile("exif")
                removed.insert(.exif)
            }
        }
        // The properties ImageMagick read from the profiles, which the PNG writer would put in text chunks.
        images.deleteProperties { name in
            name.lowercased().contains("gps") || XMPLocation.isLocationName(name.split(separator: ":").last ?? "")
        }
        if let xmp = images.profile("xmp"), XMPLocation.mentionsLocation(xmp) {
            images.removeProfile("xmp")
            removed.insert(.xmp)
        }
        // ImageMagick reads the IPTC records out of the Photoshop resources again when those are set, so the
        // resources go first.
        if let resources = images.profile("8bim") {
            if let (edited, found) = try? PhotoshopResources.removingLocation(from: resources) {
                if found {
                    try images.setProfile("8bim", to: edited)
                    removed.insert(.iptcLocation)
                }
            } else {
                images.removeProfile("8bim")
                removed.insert(.photoshop)
            }
        }
        if let records = images.profile("iptc") {
            if let (edited, found) = try? PhotoshopResources.removingLocation(fromRecords: records) {
                if found {
                    try images.setProfile("iptc", to: edited)
                    removed.insert(.iptcLocation)
                }
            } else {
                images.removeProfile("iptc")
                removed.insert(.iptc)
            }
        }
        return removed
    }
}
