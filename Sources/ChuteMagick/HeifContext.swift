import CHeif

/// Owns one `heif_context` that has parsed a HEIF file held in memory.
///
/// The corresponding C functions are `heif_context_alloc`, `heif_context_read_from_memory_without_copy` and
/// `heif_context_free`.
///
/// - Important: the context reads the caller's bytes without copying them, so the bytes must outlive it: create,
///   use and free it inside one `withUnsafeBytes` scope. It is not thread-safe.
struct HeifContext: ~Copyable {
    private let context: OpaquePointer

    /// Parses the boxes of a HEIF file (no image is decoded).
    ///
    /// - Parameter bytes: the whole file; it must stay valid and unchanged for the context's lifetime.
    /// - Throws: ``HeifError`` when the bytes are not a HEIF file libheif can read.
    init(reading bytes: UnsafeRawBufferPointer) throws(HeifError) {
        guard let context = heif_context_alloc() else {
            throw HeifError(function: "heif_context_alloc", code: 0, subcode: 0, message: "out of memory")
        }
        do {
            try HeifError.check(
                heif_context_read_from_memory_without_copy(context, bytes.baseAddress, bytes.count, nil),
                "heif_context_read_from_memory_without_copy"
            )
        } catch {
            heif_context_free(context)
            throw error
        }
        self.context = context
    }

    deinit {
        heif_context_free(self.context)
    }

    /// Sets how many threads decode the tiles of a grid image (a phone's photo is a grid of 512 × 512 tiles), which
    /// libheif otherwise sets to 4 whatever the machine: 1 decodes them on the calling thread.
    /// The corresponding C function is `heif_context_set_max_decoding_threads`.
    func limitDecodingThreads(to count: Int) {
        // libheif's 0 is the calling thread; 1 would be one thread besides it, which waits.
        heif_context_set_max_decoding_threads(self.context, Int32(count > 1 ? count : 0))
    }

    /// The image a viewer shows.
    /// The corresponding C function is `heif_context_get_primary_image_handle`.
    func primaryImage() throws(HeifError) -> HeifImageHandle {
        var handle: OpaquePointer?
        try HeifError.check(
            heif_context_get_primary_image_handle(self.context, &handle),
            "heif_context_get_primary_image_handle"
        )
        guard let handle else {
            throw HeifError(
                function: "heif_context_get_primary_image_handle",
                code: 0,
                subcode: 0,
                message: "no primary image"
            )
        }
        return HeifImageHandle(takingOwnershipOf: handle)
    }
}
