import CHeif

/// Owns one `heif_image_handle`: an image of a HEIF file, with its properties and metadata items, undecoded.
///
/// The handle keeps its context's data alive inside libheif, but not the caller's bytes that the context reads
/// without copying (see ``HeifContext``). The corresponding C function for release is `heif_image_handle_release`.
struct HeifImageHandle: ~Copyable {
    private let handle: OpaquePointer

    /// Adopts a handle that `heif_context_get_primary_image_handle` returned.
    init(takingOwnershipOf handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        heif_image_handle_release(self.handle)
    }

    /// The width and height that decoding gives, after the file's own rotation and crop.
    /// The corresponding C functions are `heif_image_handle_get_width` and `heif_image_handle_get_height`.
    var size: (width: Int, height: Int) {
        (Int(heif_image_handle_get_width(self.handle)), Int(heif_image_handle_get_height(self.handle)))
    }

    /// Decodes the image to interleaved RGB, or RGBA when it has an alpha plane, with its rotation, mirroring and
    /// crop applied: 8 bits per sample, or 16 (little-endian, at the image's own bit depth) for a deeper image.
    /// The corresponding C functions are `heif_image_handle_has_alpha_channel`,
    /// `heif_image_handle_get_luma_bits_per_pixel` and `heif_decode_image`.
    func decodeRGB() throws(HeifError) -> HeifImage {
        let alpha = heif_image_handle_has_alpha_channel(self.handle) != 0
        let deep = heif_image_handle_get_luma_bits_per_pixel(self.handle) > 8
        let chroma =
            switch (alpha, deep) {
            case (false, false): heif_chroma_interleaved_RGB
            case (true, false): heif_chroma_interleaved_RGBA
            case (false, true): heif_chroma_interleaved_RRGGBB_LE
            case (true, true): heif_chroma_interleaved_RRGGBBAA_LE
            }
        var image: OpaquePointer?
        try HeifError.check(
            heif_decode_image(self.handle, &image, heif_colorspace_RGB, chroma, nil),
            "heif_decode_image"
        )
        guard let image else {
            throw HeifError(function: "heif_decode_image", code: 0, subcode: 0, message: "no image was decoded")
        }
        return HeifImage(takingOwnershipOf: image, channels: alpha ? "RGBA" : "RGB")
    }

    /// The image's ICC colour profile (a `colr` box of type `prof` or `rICC`), or `nil` when it has none or only
    /// an `nclx` description. The corresponding C functions are `heif_image_handle_get_color_profile_type`,
    /// `heif_image_handle_get_raw_color_profile_size` and `heif_image_handle_get_raw_color_profile`.
    func iccProfile() throws(HeifError) -> [UInt8]? {
        let type = heif_image_handle_get_color_profile_type(self.handle)
        guard type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC else { return nil }
        let size = heif_image_handle_get_raw_color_profile_size(self.handle)
        guard size > 0 else { return nil }
        var profile = [UInt8](repeating: 0, count: size)
        let error = profile.withUnsafeMutableBytes {
            heif_image_handle_get_raw_color_profile(self.handle, $0.baseAddress)
        }
        try HeifError.check(error, "heif_image_handle_get_raw_color_profile")
        return profile
    }

    /// The image's first `Exif` metadata item exactly as stored, or `nil` when it has none.
    /// The corresponding C functions are `heif_image_handle_get_list_of_metadata_block_IDs`,
    /// `heif_image_handle_get_metadata_size` and `heif_image_handle_get_metadata`.
    func exifItem() throws(HeifError) -> [UInt8]? {
        var id: heif_item_id = 0
        guard heif_image_handle_get_list_of_metadata_block_IDs(self.handle, "Exif", &id, 1) == 1 else { return nil }
        let size = heif_image_handle_get_metadata_size(self.handle, id)
        guard size > 0 else { return nil }
        var item = [UInt8](repeating: 0, count: size)
        let error = item.withUnsafeMutableBytes { heif_image_handle_get_metadata(self.handle, id, $0.baseAddress) }
        try HeifError.check(error, "heif_image_handle_get_metadata")
        return item
    }
}
