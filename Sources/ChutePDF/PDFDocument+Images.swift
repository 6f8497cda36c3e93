import CQPDF

extension PDFDocument {
    /// An image to lay on a page of its own.
    struct PageImage {
        /// The image's data as the PDF stores it.
        enum Data {
            /// A JPEG file, stored as it is (`/DCTDecode`).
            case jpeg([UInt8])
            /// 8-bit samples, row by row, which qpdf compresses with Flate when it writes the file.
            case pixels([UInt8])
        }

        var data: Data
        /// The width and height in pixels, as stored.
        var width: Int
        var height: Int
        /// Whether the samples are grey levels (one a pixel) rather than RGB.
        var isGray: Bool
        /// The page's `/Rotate` (0, 90, 180 or 270) that shows the stored image upright, for a JPEG whose EXIF
        /// orientation says it is stored turned.
        var rotation: Int
    }

    /// Appends a page that shows `image`, centred, on a page of `pageSize` points (as displayed, after the
    /// rotation), drawn at `drawnSize` points (as displayed). The corresponding C functions are
    /// `qpdf_oh_new_stream`, `qpdf_oh_replace_stream_data`, `qpdf_make_indirect_object` and `qpdf_add_page`.
    ///
    /// - Throws: ``PDFError`` with code `pages`.
    func appendImagePage(
        _ image: PageImage,
        pageSize: (width: Double, height: Double),
        drawnSize: (width: Double, height: Double)
    ) throws(PDFError) {
        let handle = self.handle
        // The page and the image as stored, before the page's /Rotate turns them for display.
        let turned = image.rotation % 180 != 0
        let page = turned ? (pageSize.height, pageSize.width) : (pageSize.width, pageSize.height)
        let drawn = turned ? (drawnSize.height, drawnSize.width) : (drawnSize.width, drawnSize.height)
        let number = Self.number

        let picture: qpdf_oh
        switch image.data {
        case .jpeg(let bytes): picture = self.makeStream(bytes, filter: "/DCTDecode")
        case .pixels(let bytes): picture = self.makeStream(bytes)
        }
        let dictionary = qpdf_oh_get_dict(handle, picture)
        let entries = [
            ("/Type", qpdf_oh_new_name(handle, "/XObject")), ("/Subtype", qpdf_oh_new_name(handle, "/Image")),
            ("/Width", qpdf_oh_new_integer(handle, Int64(image.width))),
            ("/Height", qpdf_oh_new_integer(handle, Int64(image.height))),
            ("/ColorSpace", qpdf_oh_new_name(handle, image.isGray ? "/DeviceGray" : "/DeviceRGB")),
            ("/BitsPerComponent", qpdf_oh_new_integer(handle, 8)),
        ]
        for (key, value) in entries {
            qpdf_oh_replace_key(handle, dictionary, key, value)
        }
        let content =
            "q \(number(drawn.0)) 0 0 \(number(drawn.1)) \(number((page.0 - drawn.0) / 2)) "
            + "\(number((page.1 - drawn.1) / 2)) cm /ChuteImage Do Q\n"
        let pageObject = qpdf_oh_parse(
            handle,
            "<< /Type /Page /MediaBox [0 0 \(number(page.0)) \(number(page.1))] /Rotate \(image.rotation) "
                + "/Resources << /XObject << >> >> >>"
        )
        let resources = qpdf_oh_get_key(handle, pageObject, "/Resources")
        qpdf_oh_replace_key(handle, qpdf_oh_get_key(handle, resources, "/XObject"), "/ChuteImage", picture)
        qpdf_oh_replace_key(handle, pageObject, "/Contents", self.makeStream(Array(content.utf8)))
        let indirect = qpdf_make_indirect_object(handle, pageObject)
        try self.check(.pages, "qpdf_make_indirect_object")
        guard qpdf_add_page(handle, handle, indirect, QPDF_FALSE) & QPDF_ERRORS == 0 else {
            throw Self.error(of: handle, .pages, "qpdf_add_page")
        }
    }
}
