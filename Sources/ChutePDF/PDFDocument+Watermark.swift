import CQPDF
import ChuteCore
import Foundation

extension PDFDocument {
    /// A mark to lay on every page: a line of text or a picture, placed by `position`, at `opacity`, `size` of the
    /// page's width wide, turned by `rotation`.
    struct Watermark: Sendable {
        /// What is drawn.
        enum Mark: Sendable {
            /// Text in Latin-1 (WinAnsi) bytes, which the standard Helvetica font shows without embedding a font.
            case text([UInt8])
            /// A picture of 8-bit samples, with its transparency.
            case picture(Stamp)
        }

        /// A picture's samples: grey or RGB, row by row, and an alpha level a pixel when it has transparency.
        struct Stamp: Sendable {
            var samples: [UInt8]
            var alpha: [UInt8]?
            var width: Int
            var height: Int
            var isGray: Bool
        }

        var mark: Mark
        var position: Gravity
        /// From 0 (invisible) to 1 (opaque).
        var opacity: Double
        /// The mark's width as a fraction of the page's width (before it is turned).
        var size: Double
        /// Degrees anticlockwise, as the page shows it.
        var rotation: Double

        /// A rule's `watermark` text, or `nil` when it has a character beyond Latin-1.
        init?(_ text: String, position: Gravity, opacity: Double, size: Double, rotation: Double) {
            var bytes: [UInt8] = []
            for scalar in text.unicodeScalars {
                guard scalar.value <= 0xFF else { return nil }
                bytes.append(UInt8(scalar.value))
            }
            self.init(mark: .text(bytes), position: position, opacity: opacity, size: size, rotation: rotation)
        }

        init(mark: Mark, position: Gravity, opacity: Double, size: Double, rotation: Double) {
            self.mark = mark
            self.position = position
            self.opacity = opacity
            self.size = size
            self.rotation = rotation
        }

        /// Helvetica's advance widths of the characters 32 to 126, in thousandths of the font size (its AFM file).
        private static let widths: [Int] = [
            278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556,
            556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667, 611, 778, 722, 278,
            500, 667, 556, 833, 722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469,
            556, 333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500,
            278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,
        ]
        /// Helvetica's cap height and descender, in font sizes.
        private static let (capHeight, descender) = (0.718, 0.207)

        /// The width of `text` at a font size of 1 (characters beyond ASCII counted as a digit is).
        private static func width(of text: [UInt8]) -> Double {
            Double(text.reduce(0) { $0 + ((32...126).contains($1) ? Self.widths[Int($1) - 32] : 556) }) / 1000
        }

        /// The content that draws the mark in a page of `box` (x0, y0, x1, y1, in points), in the graphics state
        /// `/ChuteWatermarkState` (its opacity): text white with a dark outline in the font `/ChuteWatermarkFont`, as
        /// the image engine draws it, or the picture `/ChuteWatermarkImage`. The mark's box, turned, is placed by
        /// `position` 2 % of the page's shorter side in from its edges. It starts with `Q`, closing the `q` put
        /// before the page's own content.
        func content(in box: (Double, Double, Double, Double)) -> [UInt8] {
            let (width, height) = (box.2 - box.0, box.3 - box.1)
            let margin = 0.02 * min(width, height)
            // The mark's own size, before it is turned.
            let mark: (width: Double, height: Double)
            var fontSize = 0.0
            switch self.mark {
            case .text(let text):
                fontSize = min(self.size * width / max(Self.width(of: text), 0.001), height / 2)
                mark = (Self.width(of: text) * fontSize, (Self.capHeight + Self.descender) * fontSize)
            case .picture(let stamp):
                // As wide as `size` says, but never higher than half the page, as text is.
                let aspect = Double(stamp.height) / Double(stamp.width)
                let drawn = min(self.size * width, height / 2 / aspect)
                mark = (drawn, drawn * aspect)
            }
            let radians = self.rotation * .pi / 180
            let (cosine, sine) = (cos(radians), sin(radians))
            let turned = (
                abs(mark.width * cosine) + abs(mark.height * sine), abs(mark.width * sine) + abs(mark.height * cosine)
            )
            let centre: (x: Double, y: Double)
            switch self.position {
            case .west, .northwest, .southwest: centre.x = box.0 + margin + turned.0 / 2
            case .east, .northeast, .southeast: centre.x = box.2 - margin - turned.0 / 2
            case .center, .north, .south: centre.x = box.0 + width / 2
            }
            switch self.position {
            case .north, .northeast, .northwest: centre.y = box.3 - margin - turned.1 / 2
            case .south, .southeast, .southwest: centre.y = box.1 + margin + turned.1 / 2
            case .center, .east, .west: centre.y = box.1 + height / 2
            }
            let number = PDFDocument.number
            // The mark's centre at the origin, turned, then moved to its place.
            let place =
                "\(number(cosine)) \(number(sine)) \(number(-sine)) \(number(cosine)) \(number(centre.x)) "
                + "\(number(centre.y)) cm\n"
            let (left, bottom) = (-mark.width / 2, -mark.height / 2)
            switch self.mark {
            case .text(let text):
                var escaped: [UInt8] = []
                for byte in text {
                    if byte == UInt8(ascii: "(") || byte == UInt8(ascii: ")") || byte == UInt8(ascii: "\\") {
                        escaped.append(UInt8(ascii: "\\"))
                    }
                    escaped.append(byte)
                }
                let head =
                    "Q\nq /ChuteWatermarkState gs " + place
                    + "1 g 0.2 G \(number(max(fontSize * 0.03, 0.3))) w 2 Tr\n"
                    + "BT /ChuteWatermarkFont \(number(fontSize)) Tf \(number(left)) "
                    + "\(number(bottom + Self.descender * fontSize)) Td ("
                return Array(head.utf8) + escaped + Array(") Tj ET Q\n".utf8)
            case .picture:
                let draw =
                    "Q\nq /ChuteWatermarkState gs " + place
                    + "\(number(mark.width)) 0 0 \(number(mark.height)) \(number(left)) \(number(bottom)) cm "
                    + "/ChuteWatermarkImage Do Q\n"
                return Array(draw.utf8)
            }
        }
    }

    /// Lays `watermark` on every page, over its content, which is left as it is (its text stays selectable): the
    /// page's content is put between `q` and `Q`, so that whatever it changes in the graphics state cannot move
    /// the watermark, and the watermark's own content follows, with its font (Helvetica, not embedded) or picture
    /// (one image, with a soft mask for its transparency, shared by every page) and its opacity in the page's
    /// resources. It is placed in the page's own coordinates (its media box): on a page turned by `/Rotate` it turns
    /// with the page. The corresponding C functions are `qpdf_oh_new_stream`, `qpdf_oh_replace_stream_data` and
    /// `qpdf_oh_replace_key`.
    ///
    /// - Throws: ``PDFError`` with code `pages`.
    func addWatermark(_ watermark: Watermark) throws(PDFError) {
        let handle = self.handle
        let opacity = Self.number(watermark.opacity)
        var picture: qpdf_oh?
        if case .picture(let stamp) = watermark.mark {
            picture = self.makeImage(stamp)
        }
        for page in try self.pages() {
            let box = self.mediaBox(of: page)
            let contents = qpdf_oh_new_array(handle)
            qpdf_oh_append_item(handle, contents, self.makeStream(Array("q\n".utf8)))
            let old = qpdf_oh_get_key(handle, page, "/Contents")
            if qpdf_oh_is_array(handle, old) != QPDF_FALSE {
                for index in 0..<qpdf_oh_get_array_n_items(handle, old) {
                    qpdf_oh_append_item(handle, contents, qpdf_oh_get_array_item(handle, old, index))
                }
            } else if qpdf_oh_is_stream(handle, old) != QPDF_FALSE {
                qpdf_oh_append_item(handle, contents, old)
            }
            qpdf_oh_append_item(handle, contents, self.makeStream(watermark.content(in: box)))
            qpdf_oh_replace_key(handle, page, "/Contents", contents)

            let resources = self.dictionary(at: "/Resources", in: page)
            if let picture {
                qpdf_oh_replace_key(
                    handle,
                    self.dictionary(at: "/XObject", in: resources),
                    "/ChuteWatermarkImage",
                    picture
                )
            } else {
                qpdf_oh_replace_key(
                    handle,
                    self.dictionary(at: "/Font", in: resources),
                    "/ChuteWatermarkFont",
                    qpdf_oh_parse(
                        handle,
                        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
                    )
                )
            }
            qpdf_oh_replace_key(
                handle,
                self.dictionary(at: "/ExtGState", in: resources),
                "/ChuteWatermarkState",
                qpdf_oh_parse(handle, "<< /Type /ExtGState /ca \(opacity) /CA \(opacity) >>")
            )
            try self.check(.pages, "qpdf_oh_replace_key")
        }
    }

    /// An image XObject of `stamp`'s samples (compressed with Flate when the file is written), with its alpha as a
    /// soft mask; a stream is an indirect object already, which every page refers to.
    private func makeImage(_ stamp: Watermark.Stamp) -> qpdf_oh {
        let handle = self.handle
        func image(_ samples: [UInt8], gray: Bool) -> qpdf_oh {
            let stream = self.makeStream(samples)
            let dictionary = qpdf_oh_get_dict(handle, stream)
            let entries = [
                ("/Type", qpdf_oh_new_name(handle, "/XObject")), ("/Subtype", qpdf_oh_new_name(handle, "/Image")),
                ("/Width", qpdf_oh_new_integer(handle, Int64(stamp.width))),
                ("/Height", qpdf_oh_new_integer(handle, Int64(stamp.height))),
                ("/ColorSpace", qpdf_oh_new_name(handle, gray ? "/DeviceGray" : "/DeviceRGB")),
                ("/BitsPerComponent", qpdf_oh_new_integer(handle, 8)),
            ]
            for (key, value) in entries {
                qpdf_oh_replace_key(handle, dictionary, key, value)
            }
            return stream
        }
        let picture = image(stamp.samples, gray: stamp.isGray)
        if let alpha = stamp.alpha {
            qpdf_oh_replace_key(handle, qpdf_oh_get_dict(handle, picture), "/SMask", image(alpha, gray: true))
        }
        return picture
    }

    /// A number as PDF content writes it, with three decimals: `-12.5` → `-12.500` (never an exponent).
    static func number(_ value: Double) -> String {
        let thousandths = Int((value * 1000).rounded())
        let whole = abs(thousandths) / 1000
        let fraction = String(abs(thousandths) % 1000)
        return (thousandths < 0 ? "-" : "") + "\(whole)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// The page's media box (x0, y0, x1, y1), or US Letter when it has none that reads.
    func mediaBox(of page: qpdf_oh) -> (Double, Double, Double, Double) {
        let box = qpdf_oh_get_key(self.handle, page, "/MediaBox")
        guard qpdf_oh_is_array(self.handle, box) != QPDF_FALSE, qpdf_oh_get_array_n_items(self.handle, box) == 4 else {
            return (0, 0, 612, 792)
        }
        let values = (0..<4).map {
            qpdf_oh_get_numeric_value(self.handle, qpdf_oh_get_array_item(self.handle, box, $0))
        }
        return (
            min(values[0], values[2]), min(values[1], values[3]), max(values[0], values[2]), max(values[1], values[3])
        )
    }

    /// The dictionary at `key` in `holder`, made (empty) when there is none.
    private func dictionary(at key: String, in holder: qpdf_oh) -> qpdf_oh {
        let value = qpdf_oh_get_key(self.handle, holder, key)
        if qpdf_oh_is_dictionary(self.handle, value) != QPDF_FALSE { return value }
        let made = qpdf_oh_new_dictionary(self.handle)
        qpdf_oh_replace_key(self.handle, holder, key, made)
        return made
    }

    /// A new stream holding `data`: unfiltered (qpdf compresses it with Flate when it writes the file), or already
    /// encoded with `filter`, such as `/DCTDecode` for a JPEG.
    func makeStream(_ data: [UInt8], filter: String? = nil) -> qpdf_oh {
        let stream = qpdf_oh_new_stream(self.handle)
        data.withUnsafeBytes { bytes in
            qpdf_oh_replace_stream_data(
                self.handle,
                stream,
                bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                bytes.count,
                filter.map { qpdf_oh_new_name(self.handle, $0) } ?? qpdf_oh_new_null(self.handle),
                qpdf_oh_new_null(self.handle)
            )
        }
        return stream
    }
}
