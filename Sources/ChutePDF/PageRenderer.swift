import CPoppler
import ChuteCatalog

/// Owns one poppler document (`PopplerDocument`, a GObject) and draws its pages into cairo image surfaces, encoded
/// as PNG or handed back as pixels.
///
/// Not `Sendable`: create, use and release it on one thread, in one blocking call.
struct PageRenderer: ~Copyable {
    private let document: OpaquePointer

    /// The largest width or height of a rendered page, in pixels (cairo's own limit is 32767).
    static let sideLimit = 20_000

    /// Opens a PDF from its bytes (poppler copies nothing: it keeps a reference to the `GBytes` it is given).
    /// The corresponding C function is `poppler_document_new_from_bytes`.
    ///
    /// - Throws: ``PDFError`` with code `render` and poppler's message.
    init(reading bytes: [UInt8], password: String?) throws(PDFError) {
        let data = bytes.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(data) }
        var error: UnsafeMutablePointer<GError>?
        guard let document = poppler_document_new_from_bytes(data, password, &error) else {
            let message = error.flatMap { $0.pointee.message.map { String(cString: $0) } } ?? ""
            if let error { g_error_free(error) }
            throw PDFError(code: .render, kind: .damaged, function: "poppler_document_new_from_bytes", message: message)
        }
        self.document = document
    }

    deinit {
        g_object_unref(UnsafeMutableRawPointer(self.document))
    }

    /// The number of pages. The corresponding C function is `poppler_document_get_n_pages`.
    var pageCount: Int { Int(poppler_document_get_n_pages(self.document)) }

    /// How ``draw(page:dpi:pixelLimit:as:)`` hands back a drawn page.
    enum Encoding {
        /// A PNG file, which cairo encodes.
        case png
        /// The pixels, 4 bytes each in the order blue, green, red, padding (cairo's `RGB24` on a little-endian
        /// machine), row by row without padding.
        case bgrx
    }

    /// Draws a page, turned as its `/Rotate` says, on white at `dpi` dots per inch.
    /// The corresponding C functions are `poppler_page_render` and `cairo_surface_write_to_png_stream`.
    ///
    /// - Parameters:
    ///   - index: the zero-based page index, within ``pageCount``.
    ///   - dpi: the resolution; a page of 8.5 × 11 inches at 150 dpi is 1275 × 1650 pixels.
    ///   - pixelLimit: the most pixels the picture may have.
    ///   - encoding: a PNG file, or the pixels.
    /// - Returns: the bytes, and the picture's width and height.
    /// - Throws: ``PDFError`` with code `render`; of kind `unsupported` when the picture would exceed
    ///   ``sideLimit`` or `pixelLimit`.
    func draw(
        page index: Int,
        dpi: Double,
        pixelLimit: Int,
        as encoding: Encoding
    ) throws(PDFError) -> (bytes: [UInt8], width: Int, height: Int) {
        guard let page = poppler_document_get_page(self.document, Int32(index)) else {
            throw PDFError(code: .render, kind: .damaged, function: "poppler_document_get_page", message: "no page")
        }
        defer { g_object_unref(UnsafeMutableRawPointer(page)) }
        var (points, pointsHigh) = (0.0, 0.0)
        poppler_page_get_size(page, &points, &pointsHigh)
        let scale = dpi / 72
        let width = Int((points * scale).rounded(.up))
        let height = Int((pointsHigh * scale).rounded(.up))
        guard width >= 1, height >= 1, width <= Self.sideLimit, height <= Self.sideLimit,
            width * height <= pixelLimit
        else {
            throw PDFError(
                code: .render,
                kind: .unsupported,
                function: "poppler_page_get_size",
                message: "page \(index + 1) at \(dpi) dpi would be \(width)x\(height) pixels, over the limit"
            )
        }
        let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(height))
        defer { cairo_surface_destroy(surface) }
        try Self.check(cairo_surface_status(surface), "cairo_image_surface_create")
        let context = cairo_create(surface)
        defer { cairo_destroy(context) }
        cairo_set_source_rgb(context, 1, 1, 1)
        cairo_paint(context)
        cairo_scale(context, scale, scale)
        poppler_page_render(page, context)
        try Self.check(cairo_status(context), "poppler_page_render")
        cairo_surface_flush(surface)

        switch encoding {
        case .bgrx:
            // cairo's rows of RGB24 are 4-byte pixels, so a row is padded only if the stride says so.
            let stride = Int(cairo_image_surface_get_stride(surface))
            guard let data = cairo_image_surface_get_data(surface) else {
                throw PDFError(
                    code: .render,
                    kind: .other,
                    function: "cairo_image_surface_get_data",
                    message: "the surface has no pixels"
                )
            }
            var pixels: [UInt8] = []
            pixels.reserveCapacity(width * height * 4)
            for row in 0..<height {
                pixels.append(contentsOf: UnsafeBufferPointer(start: data + row * stride, count: width * 4))
            }
            return (pixels, width, height)
        case .png:
            let sink = ByteSink()
            let status = cairo_surface_write_to_png_stream(
                surface,
                { closure, data, length in
                    guard let closure, let data else { return CAIRO_STATUS_WRITE_ERROR }
                    let sink = Unmanaged<ByteSink>.fromOpaque(closure).takeUnretainedValue()
                    sink.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(length)))
                    return CAIRO_STATUS_SUCCESS
                },
                Unmanaged.passUnretained(sink).toOpaque()
            )
            try withExtendedLifetime(sink) { () throws(PDFError) in
                try Self.check(status, "cairo_surface_write_to_png_stream")
            }
            return (sink.bytes, width, height)
        }
    }

    /// Throws cairo's message for a status other than success. The corresponding C function is
    /// `cairo_status_to_string`.
    private static func check(_ status: cairo_status_t, _ function: String) throws(PDFError) {
        guard status != CAIRO_STATUS_SUCCESS else { return }
        let message = cairo_status_to_string(status).map { String(cString: $0) } ?? "cairo status \(status.rawValue)"
        throw PDFError(code: .render, kind: .other, function: function, message: message)
    }
}

/// The bytes cairo's PNG writer hands to its callback, collected.
private final class ByteSink {
    var bytes: [UInt8] = []
}
