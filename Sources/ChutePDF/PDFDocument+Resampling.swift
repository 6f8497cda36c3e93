import CQPDF

#if canImport(Glibc)
import Glibc
#endif

extension PDFDocument {
    /// An image of a page that ``PDFEngine`` may store smaller: 8-bit grey or RGB samples (device or ICC),
    /// compressed as a JPEG (`/DCTDecode`) or losslessly (`/FlateDecode`), without a mask, a stencil or a decode
    /// array.
    struct StoredImage {
        /// The image's stream.
        let object: qpdf_oh
        let width: Int
        let height: Int
        let isGray: Bool
        /// Whether its data is a JPEG file (else samples compressed with Flate).
        let isJPEG: Bool
        /// The size of its data as stored, in bytes.
        let storedBytes: Int
        /// Its resolution as estimated from the pages that show it: the pixels over the page's size, the lowest of
        /// the page's two orientations, the lowest over the pages. An image drawn smaller than its page is finer
        /// than this says, so an image is never taken for finer than it is.
        var dotsPerInch: Double
    }

    /// The images of every page's resources that ``StoredImage`` describes, each once however many pages show it.
    /// Images inside form XObjects, masks, and images in other colour spaces or depths are left out. The
    /// corresponding C functions are `qpdf_oh_get_key`, `qpdf_oh_begin_dict_key_iter`, `qpdf_oh_dict_next_key` and
    /// `qpdf_oh_get_object_id`.
    ///
    /// - Throws: ``PDFError`` with code `pages`.
    func resamplableImages() throws(PDFError) -> [StoredImage] {
        let handle = self.handle
        var images: [Int32: StoredImage] = [:]
        var order: [Int32] = []
        for page in try self.pages() {
            let box = self.mediaBox(of: page)
            let size = (width: (box.2 - box.0) / 72, height: (box.3 - box.1) / 72)
            guard size.width > 0.01, size.height > 0.01 else { continue }
            let resources = qpdf_oh_get_key(handle, page, "/Resources")
            let objects = qpdf_oh_get_key(handle, resources, "/XObject")
            guard qpdf_oh_is_dictionary(handle, objects) == QPDF_TRUE else { continue }
            var names: [String] = []
            qpdf_oh_begin_dict_key_iter(handle, objects)
            while qpdf_oh_dict_more_keys(handle) == QPDF_TRUE {
                if let key = qpdf_oh_dict_next_key(handle) { names.append(String(cString: key)) }
            }
            for name in names {
                let object = qpdf_oh_get_key(handle, objects, name)
                guard var image = self.pageImage(object) else { continue }
                let id = qpdf_oh_get_object_id(handle, object)
                let (width, height) = (Double(image.width), Double(image.height))
                image.dotsPerInch = min(
                    max(width / size.width, height / size.height),
                    max(width / size.height, height / size.width)
                )
                if let seen = images[id] {
                    images[id]?.dotsPerInch = min(seen.dotsPerInch, image.dotsPerInch)
                } else {
                    images[id] = image
                    order.append(id)
                }
            }
        }
        try self.check(.pages, "qpdf_oh_get_key")
        return order.compactMap { images[$0] }
    }

    /// `object` as a ``StoredImage`` (with no resolution yet), or `nil` when it is not one.
    private func pageImage(_ object: qpdf_oh) -> StoredImage? {
        let handle = self.handle
        guard qpdf_oh_is_stream(handle, object) == QPDF_TRUE else { return nil }
        let dictionary = qpdf_oh_get_dict(handle, object)
        func name(_ key: String) -> String? {
            let value = qpdf_oh_get_key(handle, dictionary, key)
            guard qpdf_oh_is_name(handle, value) == QPDF_TRUE else { return nil }
            return qpdf_oh_get_name(handle, value).map { String(cString: $0) }
        }
        func integer(_ key: String) -> Int? {
            let value = qpdf_oh_get_key(handle, dictionary, key)
            return qpdf_oh_is_integer(handle, value) == QPDF_TRUE ? Int(qpdf_oh_get_int_value(handle, value)) : nil
        }
        guard name("/Subtype") == "/Image", integer("/BitsPerComponent") == 8,
            let width = integer("/Width"), let height = integer("/Height"), width > 0, height > 0,
            // A soft mask with `/Matte` must keep the image's size; a colour key would be moved by JPEG's losses.
            !["/Mask", "/SMask", "/Decode", "/ImageMask"].contains(where: { self.has($0, in: dictionary) })
        else { return nil }
        // qpdf undoes Flate's predictors (its `/DecodeParms`); a JPEG's would change how its samples read.
        let filter = name("/Filter")
        guard filter == "/FlateDecode" || (filter == "/DCTDecode" && !self.has("/DecodeParms", in: dictionary))
        else { return nil }
        guard let components = self.colourComponents(qpdf_oh_get_key(handle, dictionary, "/ColorSpace")) else {
            return nil
        }
        let isGray = components == 1
        guard let stored = try? self.streamData(object, decoded: false) else { return nil }
        return StoredImage(
            object: object,
            width: width,
            height: height,
            isGray: isGray,
            isJPEG: filter == "/DCTDecode",
            storedBytes: stored.count,
            dotsPerInch: 0
        )
    }

    /// The samples a pixel of `space` has, when it is grey or RGB: `/DeviceGray`, `/DeviceRGB`, or an ICC profile
    /// of 1 or 3 components (which stays the image's colour space: resampling keeps the samples' meaning).
    private func colourComponents(_ space: qpdf_oh) -> Int? {
        let handle = self.handle
        if qpdf_oh_is_name_and_equals(handle, space, "/DeviceGray") == QPDF_TRUE { return 1 }
        if qpdf_oh_is_name_and_equals(handle, space, "/DeviceRGB") == QPDF_TRUE { return 3 }
        guard qpdf_oh_is_array(handle, space) == QPDF_TRUE, qpdf_oh_get_array_n_items(handle, space) == 2,
            qpdf_oh_is_name_and_equals(handle, qpdf_oh_get_array_item(handle, space, 0), "/ICCBased") == QPDF_TRUE
        else { return nil }
        let profile = qpdf_oh_get_array_item(handle, space, 1)
        guard qpdf_oh_is_stream(handle, profile) == QPDF_TRUE else { return nil }
        let count = qpdf_oh_get_key(handle, qpdf_oh_get_dict(handle, profile), "/N")
        guard qpdf_oh_is_integer(handle, count) == QPDF_TRUE else { return nil }
        let components = Int(qpdf_oh_get_int_value(handle, count))
        return components == 1 || components == 3 ? components : nil
    }

    /// Whether `dictionary` has `key` with a value other than null.
    private func has(_ key: String, in dictionary: qpdf_oh) -> Bool {
        qpdf_oh_has_key(self.handle, dictionary, key) == QPDF_TRUE
            && qpdf_oh_is_null(self.handle, qpdf_oh_get_key(self.handle, dictionary, key)) == QPDF_FALSE
    }

    /// A stream's data: as stored, or with its general-purpose filters (Flate) undone. The corresponding C functions
    /// are `qpdf_oh_get_stream_data` and `free`.
    ///
    /// - Throws: ``PDFError`` with code `write`.
    func streamData(_ stream: qpdf_oh, decoded: Bool) throws(PDFError) -> [UInt8] {
        var buffer: UnsafeMutablePointer<UInt8>?
        var length = 0
        var filtered: QPDF_BOOL = QPDF_FALSE
        let status = qpdf_oh_get_stream_data(
            self.handle,
            stream,
            decoded ? qpdf_dl_generalized : qpdf_dl_none,
            &filtered,
            &buffer,
            &length
        )
        defer { free(buffer) }
        guard status & QPDF_ERRORS == 0, let buffer else {
            throw Self.error(of: self.handle, .write, "qpdf_oh_get_stream_data")
        }
        return Array(UnsafeBufferPointer(start: buffer, count: length))
    }

    /// Stores `jpeg`, a JPEG file of `width` × `height` pixels of the image's samples, as the image's data. The
    /// corresponding C functions are `qpdf_oh_replace_stream_data` and `qpdf_oh_replace_key`.
    func replaceImage(_ image: StoredImage, jpeg: [UInt8], width: Int, height: Int) {
        let handle = self.handle
        jpeg.withUnsafeBytes { bytes in
            qpdf_oh_replace_stream_data(
                handle,
                image.object,
                bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                bytes.count,
                qpdf_oh_new_name(handle, "/DCTDecode"),
                qpdf_oh_new_null(handle)
            )
        }
        let dictionary = qpdf_oh_get_dict(handle, image.object)
        qpdf_oh_replace_key(handle, dictionary, "/Width", qpdf_oh_new_integer(handle, Int64(width)))
        qpdf_oh_replace_key(handle, dictionary, "/Height", qpdf_oh_new_integer(handle, Int64(height)))
    }
}
