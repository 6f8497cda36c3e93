/// A file type recognised from the first bytes of a file's content, never from its name.
package enum MediaType: String, Sendable, Hashable, Codable, CaseIterable {
    // Images Chute decodes.
    case jpeg, png, gif, webp, heif, avif, tiff, bmp, jpeg2000, openexr, netpbm, tga, psd, ico, radiance, sgi,
        sunraster, xwd
    // Camera RAW: Adobe DNG, Canon CR2 and CR3, Nikon NEF, Sony ARW, Fujifilm RAF, Olympus ORF, Panasonic RW2.
    case dng, cr2, cr3, nef, arw, raf, orf, rw2
    // Video and audio containers.
    case mp4, quicktime, matroska, avi, mpegts, mpegps, flv, asf, ogg, mp3, flac, wav, aiff, aac, amr, ac3, ape,
        wavpack, musepack, dsf, caf
    // Documents.
    case pdf
    // Office documents, which the document engine opens: word processing (Word 97 DOC, DOCX, ODT, RTF), web pages,
    // plain text, spreadsheets (XLSX, ODS) and presentations (PPTX, ODP).
    case doc, docx, odt, rtf, html, text, xlsx, ods, pptx, odp
    // Text that poses as media: manifests, playlists, scripts and vector formats that decoders would interpret.
    case playlist, svg, postscript, script

    /// The category a rule's `type:` filter compares with; `nil` for the refused text kinds.
    package var category: MediaCategory? {
        switch self {
        case .jpeg, .png, .gif, .webp, .heif, .avif, .tiff, .bmp, .jpeg2000, .openexr, .netpbm, .tga, .psd, .ico,
            .radiance, .sgi, .sunraster, .xwd, .dng, .cr2, .cr3, .nef, .arw, .raf, .orf, .rw2:
            return .image
        case .mp4, .quicktime, .matroska, .avi, .mpegts, .mpegps, .flv, .asf:
            return .video
        case .ogg, .mp3, .flac, .wav, .aiff, .aac, .amr, .ac3, .ape, .wavpack, .musepack, .dsf, .caf:
            return .audio
        case .pdf:
            return .pdf
        case .doc, .docx, .odt, .rtf, .html, .text, .xlsx, .ods, .pptx, .odp:
            return .document
        case .playlist, .svg, .postscript, .script:
            return nil
        }
    }

    /// The type a file with this extension usually holds (`pdf` → ``pdf``, `m4a` → ``mp4``), or `nil` for an
    /// extension Chute does not know. Only `chute check` uses it, to say what a `match` pattern will bring in: the
    /// daemon itself always goes by the content.
    ///
    /// - Parameter fileExtension: the extension without its dot, in any case.
    package static func usual(forExtension fileExtension: String) -> MediaType? {
        Self.usualTypes[fileExtension.lowercased()]
    }

    private static let usualTypes: [String: MediaType] = [
        "jpg": .jpeg, "jpeg": .jpeg, "jpe": .jpeg, "png": .png, "gif": .gif, "webp": .webp, "heic": .heif,
        "heif": .heif, "avif": .avif, "tif": .tiff, "tiff": .tiff, "bmp": .bmp, "jp2": .jpeg2000, "j2k": .jpeg2000,
        "exr": .openexr, "pbm": .netpbm, "pgm": .netpbm, "ppm": .netpbm, "pnm": .netpbm, "pam": .netpbm,
        "pfm": .netpbm, "tga": .tga, "sgi": .sgi, "ras": .sunraster, "sun": .sunraster, "xwd": .xwd, "psd": .psd,
        "ico": .ico, "hdr": .radiance, "dng": .dng, "cr2": .cr2, "cr3": .cr3, "nef": .nef, "arw": .arw,
        "raf": .raf, "orf": .orf, "rw2": .rw2, "mp4": .mp4, "m4v": .mp4, "m4a": .mp4, "3gp": .mp4,
        "mov": .quicktime, "mkv": .matroska, "webm": .matroska, "mka": .matroska, "avi": .avi, "ts": .mpegts,
        "m2ts": .mpegts, "mts": .mpegts, "mpg": .mpegps, "mpeg": .mpegps, "vob": .mpegps, "flv": .flv, "wmv": .asf,
        "wma": .asf, "asf": .asf, "ogg": .ogg, "oga": .ogg, "ogv": .ogg, "opus": .ogg, "mp3": .mp3, "flac": .flac,
        "wav": .wav, "aif": .aiff, "aiff": .aiff, "aac": .aac, "amr": .amr, "ac3": .ac3, "ape": .ape,
        "wv": .wavpack, "mpc": .musepack, "dsf": .dsf, "caf": .caf, "pdf": .pdf, "m3u": .playlist,
        "m3u8": .playlist, "pls": .playlist, "mpd": .playlist, "svg": .svg, "ps": .postscript, "eps": .postscript,
        "doc": .doc, "docx": .docx, "odt": .odt, "rtf": .rtf, "html": .html, "htm": .html, "txt": .text,
        "text": .text, "xlsx": .xlsx, "ods": .ods, "pptx": .pptx, "odp": .odp,
    ]

    /// How many of a file's first bytes ``sniff(_:)`` looks at. Camera RAW files that are TIFF inside (DNG, NEF,
    /// ARW) are told from a plain TIFF by the tags of their first directory, which can end a few kilobytes in.
    package static let headerLength = 4096

    /// Recognises a file from its first bytes (at least 64 are needed for every check; fewer simply match less,
    /// and a camera RAW that is TIFF inside needs its first directory, within ``headerLength`` bytes).
    ///
    /// - Parameter header: the start of the file.
    /// - Returns: the type, or `nil` when nothing is recognised.
    package static func sniff(_ header: some Collection<UInt8>) -> MediaType? {
        let bytes = Array(header.prefix(Self.headerLength))
        func at(_ offset: Int, _ signature: [UInt8]) -> Bool {
            bytes.count >= offset + signature.count && Array(bytes[offset..<(offset + signature.count)]) == signature
        }
        func ascii(_ offset: Int, _ text: String) -> Bool { at(offset, Array(text.utf8)) }

        if at(0, [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if at(0, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if ascii(0, "GIF87a") || ascii(0, "GIF89a") { return .gif }
        if ascii(0, "RIFF") && ascii(8, "WEBP") { return .webp }
        if ascii(0, "RIFF") && ascii(8, "AVI ") { return .avi }
        if ascii(0, "RIFF") && ascii(8, "WAVE") { return .wav }
        if ascii(0, "RF64") && ascii(8, "WAVE") { return .wav }
        if ascii(0, "FORM") && (ascii(8, "AIFF") || ascii(8, "AIFC")) { return .aiff }
        if ascii(0, "FUJIFILMCCD-RAW ") { return .raf }
        if ascii(0, "IIRO") || ascii(0, "IIRS") || ascii(0, "MMOR") { return .orf }
        if at(0, [0x49, 0x49, 0x55, 0x00]) { return .rw2 }
        if at(0, [0x49, 0x49, 0x2A, 0x00]) || at(0, [0x4D, 0x4D, 0x00, 0x2A]) {
            return Self.tiffBasedRaw(bytes) ?? .tiff
        }
        if at(0, [0x49, 0x49, 0x2B, 0x00]) || at(0, [0x4D, 0x4D, 0x00, 0x2B]) { return .tiff }
        if ascii(0, "BM") && bytes.count >= 26 { return .bmp }
        if at(0, [0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20]) || at(0, [0xFF, 0x4F, 0xFF, 0x51]) {
            return .jpeg2000
        }
        if at(0, [0x76, 0x2F, 0x31, 0x01]) { return .openexr }
        if ascii(0, "8BPS") { return .psd }
        if ascii(0, "#?RADIANCE") || ascii(0, "#?RGBE") { return .radiance }
        if at(0, [0x00, 0x00, 0x01, 0x00]) && bytes.count > 6 { return .ico }
        if bytes.count >= 2, bytes[0] == UInt8(ascii: "P"),
            (UInt8(ascii: "1")...UInt8(ascii: "7")).contains(bytes[1])
                || bytes[1] == UInt8(ascii: "F") || bytes[1] == UInt8(ascii: "f")
        {
            if bytes.count >= 3, [0x0A, 0x0D, 0x20, 0x09].contains(bytes[2]) { return .netpbm }
        }
        if Self.looksLikeSGI(bytes) { return .sgi }
        if at(0, [0x59, 0xA6, 0x6A, 0x95]) { return .sunraster }
        if Self.looksLikeXWD(bytes) { return .xwd }
        if ascii(4, "ftyp") { return Self.isoBrand(bytes) }
        if ascii(4, "moov") || ascii(4, "mdat") || ascii(4, "wide") || ascii(4, "free") { return .quicktime }
        if at(0, [0x1A, 0x45, 0xDF, 0xA3]) { return .matroska }
        if ascii(0, "OggS") { return .ogg }
        if ascii(0, "fLaC") { return .flac }
        if ascii(0, "ID3") { return .mp3 }
        if ascii(0, "FLV") { return .flv }
        if at(0, [0x30, 0x26, 0xB2, 0x75, 0x8E, 0x66, 0xCF, 0x11]) { return .asf }
        if at(0, [0x00, 0x00, 0x01, 0xBA]) { return .mpegps }
        if bytes.count >= 189, bytes[0] == 0x47, bytes[188] == 0x47 { return .mpegts }
        if ascii(0, "#!AMR") { return .amr }
        if at(0, [0x0B, 0x77]) { return .ac3 }
        if ascii(0, "MAC ") { return .ape }
        if ascii(0, "wvpk") { return .wavpack }
        if ascii(0, "MPCK") || ascii(0, "MP+") { return .musepack }
        if ascii(0, "DSD ") { return .dsf }
        if ascii(0, "caff") { return .caf }
        if ascii(0, "%PDF-") { return .pdf }
        if at(0, [0x50, 0x4B, 0x03, 0x04]), let office = Self.officeDocument(inZip: bytes) { return office }
        // An OLE2 compound file: Word 97 to 2003 (Excel's and PowerPoint's old files are such files too, and
        // LibreOffice tells them apart by their streams).
        if at(0, [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]) { return .doc }
        if ascii(0, "{\\rtf") { return .rtf }
        if ascii(0, "%!PS") || at(0, [0xC5, 0xD0, 0xD3, 0xC6]) { return .postscript }
        // UTF-16 text's byte order mark FF FE could start an MPEG audio frame: text that decodes is taken first.
        if at(0, [0xFF, 0xFE]) || at(0, [0xFE, 0xFF]),
            [.utf16LittleEndian, .utf16BigEndian].contains(TextEncoding.detect(bytes[...], isPrefix: true))
        {
            return .text
        }
        if bytes.count >= 2, bytes[0] == 0xFF, bytes[1] & 0xF6 == 0xF0 { return .aac }
        if bytes.count >= 2, bytes[0] == 0xFF, bytes[1] & 0xE0 == 0xE0 { return .mp3 }
        if bytes.count >= 4, bytes[3] == 0x00, ascii(0, "TGA") == false, Self.looksLikeTGA(bytes) { return .tga }
        // Text kinds are judged on the first 512 bytes, as before the header grew for camera RAW; what is none of
        // them may still be a web page or plain text, judged on the whole header.
        return Self.sniffText(Array(bytes.prefix(512))) ?? Self.sniffDocumentText(bytes)
    }

    /// The office document in a ZIP file, told by its member names.
    ///
    /// An OpenDocument file starts with an uncompressed member `mimetype` that holds its MIME type. An Office Open
    /// XML file has no fixed first member (Word puts `[Content_Types].xml` first, LibreOffice `_rels/.rels`), so the
    /// names of the local headers within `bytes` are read: a `word/`, `xl/` or `ppt/` member makes a DOCX, XLSX or
    /// PPTX. ``sniff(_:)`` looks at ``headerLength`` bytes only, so an OOXML file whose first such member comes later
    /// (after a large thumbnail) is not recognised there; the document engine, which reads the whole file, calls
    /// this with all of it.
    ///
    /// - Parameter bytes: the start of a ZIP file, or all of it.
    /// - Returns: the type, or `nil` when the members seen do not make an office document.
    package static func officeDocument(inZip bytes: [UInt8]) -> MediaType? {
        func integer(_ offset: Int, _ width: Int) -> Int? {
            guard offset >= 0, offset + width <= bytes.count else { return nil }
            return bytes[offset..<(offset + width)].reversed().reduce(0) { $0 << 8 | Int($1) }
        }
        var names: [String] = []
        var offset = 0
        // Walks the local file headers: a signature, then 26 bytes of fields (the flags at 6, the compressed size at
        // 18, the lengths of the name and of the extra field at 26 and 28), the name, the extra field, the data.
        while names.count < 10_000, integer(offset, 4) == 0x0403_4B50, let flags = integer(offset + 6, 2),
            let compressed = integer(offset + 18, 4), let nameLength = integer(offset + 26, 2),
            let extraLength = integer(offset + 28, 2), offset + 30 + nameLength <= bytes.count
        {
            let name = String(decoding: bytes[(offset + 30)..<(offset + 30 + nameLength)], as: UTF8.self)
            names.append(name)
            let data = offset + 30 + nameLength + extraLength
            if names.count == 1, name == "mimetype" {
                let end = min(bytes.count, data + compressed)
                guard data < end else { return nil }
                switch String(decoding: bytes[data..<end], as: UTF8.self) {
                case "application/vnd.oasis.opendocument.text": return .odt
                case "application/vnd.oasis.opendocument.spreadsheet": return .ods
                case "application/vnd.oasis.opendocument.presentation": return .odp
                default: return nil
                }
            }
            // A member written as a stream (bit 3) has its sizes after its data: where the next one starts is unknown.
            guard flags & 0x08 == 0 else { break }
            offset = data + compressed
        }
        if names.contains(where: { $0.hasPrefix("word/") }) { return .docx }
        if names.contains(where: { $0.hasPrefix("xl/") }) { return .xlsx }
        if names.contains(where: { $0.hasPrefix("ppt/") }) { return .pptx }
        return nil
    }

    /// A web page or plain text, judged after every other kind.
    ///
    /// A web page starts (after a byte order mark and white space) with `<!DOCTYPE html`, `<html`, `<head` or
    /// `<body`, or with an HTML comment followed by one of those, in any charset that keeps ASCII. Plain text has no
    /// signature, so Chute takes as text what can only be text (``TextEncoding/detect(_:isPrefix:)``): UTF-8 with or
    /// without a byte order mark, UTF-16 with one, or Windows-1252 (Latin-1) that is mostly ASCII, with no control
    /// character but tab, line feed, form feed and carriage return, and at least one letter or digit.
    private static func sniffDocumentText(_ bytes: [UInt8]) -> MediaType? {
        var body = bytes[...]
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        // A web page may be in any charset that keeps ASCII (its <meta> says which): its start is read as ASCII.
        let start = String(decoding: body.drop { [0x20, 0x09, 0x0A, 0x0D].contains($0) }.prefix(512), as: UTF8.self)
            .lowercased()
        let pageStarts = ["<!doctype html", "<html", "<head", "<body"]
        if pageStarts.contains(where: { start.hasPrefix($0) }) { return .html }
        if start.hasPrefix("<!--"), pageStarts.contains(where: { start.contains($0) }) { return .html }
        return TextEncoding.detect(bytes[...], isPrefix: true) == nil ? nil : .text
    }

    private static func isoBrand(_ bytes: [UInt8]) -> MediaType {
        let brand = bytes.count >= 12 ? String(decoding: bytes[8..<12], as: UTF8.self) : ""
        switch brand {
        case "heic", "heix", "heim", "heis", "hevc", "hevx", "mif1", "msf1": return .heif
        case "avif", "avis": return .avif
        case "crx ": return .cr3
        case "qt  ": return .quicktime
        default: return .mp4
        }
    }

    /// The camera RAW kind of a classic TIFF file, or `nil` for a plain TIFF.
    ///
    /// Canon's CR2 says `CR` right after the TIFF header. The others are told by the tags of the first directory
    /// (IFD0), read only within `bytes`: a `DNGVersion` tag (0xC612) makes a DNG; a Nikon or Sony `Make` makes a NEF
    /// or an ARW only together with the tags their raw files always have in IFD0 and that a TIFF saved by an editor
    /// from such a photo does not: `SubIFDs` (0x014A, where the raw image is) for both, or Sony's `SR2Private`
    /// (0xC634). A file whose IFD0 lies beyond `bytes` stays a TIFF.
    private static func tiffBasedRaw(_ bytes: [UInt8]) -> MediaType? {
        if bytes.count >= 10, bytes[8] == UInt8(ascii: "C"), bytes[9] == UInt8(ascii: "R") { return .cr2 }
        let littleEndian = bytes[0] == 0x49
        func integer(_ offset: Int, _ width: Int) -> Int? {
            guard offset >= 0, offset + width <= bytes.count else { return nil }
            let slice = bytes[offset..<(offset + width)]
            return (littleEndian ? slice.reversed() : Array(slice)).reduce(0) { $0 << 8 | Int($1) }
        }
        guard let directory = integer(4, 4), let count = integer(directory, 2) else { return nil }
        var tags: Set<Int> = []
        var make = ""
        for index in 0..<count {
            let entry = directory + 2 + 12 * index
            guard let tag = integer(entry, 2) else { break }
            tags.insert(tag)
            // Make (ASCII): inline when it fits in four bytes, else at the offset that the entry holds.
            if tag == 0x010F, let length = integer(entry + 4, 4), length > 4, let start = integer(entry + 8, 4),
                start + length <= bytes.count
            {
                make = String(decoding: bytes[start..<(start + length)].prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        if tags.contains(0xC612) { return .dng }
        let uppercased = make.uppercased()
        if uppercased.hasPrefix("NIKON"), tags.contains(0x014A) { return .nef }
        if uppercased.hasPrefix("SONY"), tags.contains(0x014A) || tags.contains(0xC634) { return .arw }
        return nil
    }

    private static func looksLikeTGA(_ bytes: [UInt8]) -> Bool {
        // TGA has no magic number (a TGA 2.0 file ends with a footer, but only the first bytes are sniffed): the
        // 18-byte header's fields, each within the values the specification allows, are the best cheap evidence.
        guard bytes.count >= 18 else { return false }
        let hasColorMap = bytes[1] == 1
        let imageType = bytes[2]
        let width = Int(bytes[12]) | Int(bytes[13]) << 8
        let height = Int(bytes[14]) | Int(bytes[15]) << 8
        let descriptor = bytes[17]
        guard bytes[1] <= 1, [1, 2, 3, 9, 10, 11].contains(imageType), [8, 15, 16, 24, 32].contains(bytes[16]),
            width > 0, height > 0,
            // Bits 6 and 7 (interleaving) must be zero; the low four bits count alpha bits.
            descriptor & 0xC0 == 0, descriptor & 0x0F <= 8
        else { return false }
        // Colour-mapped types need a colour map, of a known entry size. Without one, the specification only says the
        // map's five bytes should be zero, so they are not looked at.
        if imageType == 1 || imageType == 9 {
            return hasColorMap && [15, 16, 24, 32].contains(bytes[7])
        }
        return !hasColorMap || [15, 16, 24, 32].contains(bytes[7])
    }

    /// An SGI (Iris) image: the magic number 474 (`01 DA`), then storage (0 verbatim, 1 run-length), bytes per
    /// channel (1 or 2), dimension (1 to 3) and a non-zero width and height, all big-endian.
    private static func looksLikeSGI(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 12, bytes[0] == 0x01, bytes[1] == 0xDA else { return false }
        let dimension = Int(bytes[4]) << 8 | Int(bytes[5])
        let width = Int(bytes[6]) << 8 | Int(bytes[7])
        let height = Int(bytes[8]) << 8 | Int(bytes[9])
        return bytes[2] <= 1 && (bytes[3] == 1 || bytes[3] == 2) && (1...3).contains(dimension) && width > 0
            && height > 0
    }

    /// An X Window dump (XWD, X11): a header size of at least the 100 bytes of the fixed header (the window name
    /// follows it), then file version 7, a pixmap format of 0 to 2 and a depth of 1 to 32, in either byte order
    /// (the writer's).
    private static func looksLikeXWD(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 16 else { return false }
        func field(_ offset: Int, bigEndian: Bool) -> UInt32 {
            let slice = bytes[offset..<(offset + 4)]
            return bigEndian
                ? slice.reduce(0) { $0 << 8 | UInt32($1) } : slice.reversed().reduce(0) { $0 << 8 | UInt32($1) }
        }
        for bigEndian in [true, false] where field(4, bigEndian: bigEndian) == 7 {
            let headerSize = field(0, bigEndian: bigEndian)
            // The window name is short in practice; a bound keeps random bytes with a 7 in them out.
            return (100...(100 + 4096)).contains(headerSize) && field(8, bigEndian: bigEndian) <= 2
                && (1...32).contains(field(12, bigEndian: bigEndian))
        }
        return false
    }

    private static func sniffText(_ bytes: [UInt8]) -> MediaType? {
        var text = String(decoding: bytes, as: UTF8.self)
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        let trimmed = text.drop { $0.isWhitespace }.lowercased()
        if trimmed.hasPrefix("#extm3u") || trimmed.hasPrefix("ffconcat") || trimmed.hasPrefix("[playlist]")
            || trimmed.contains("<mpd") || trimmed.hasPrefix("<?wpl") || trimmed.hasPrefix("<asx")
        {
            return .playlist
        }
        if trimmed.contains("<svg") || trimmed.hasPrefix("<?xml") || trimmed.hasPrefix("<!doctype svg") {
            return .svg
        }
        if trimmed.hasPrefix("push graphic-context") || trimmed.hasPrefix("viewbox") || trimmed.hasPrefix("<image")
            || trimmed.hasPrefix("#!")
        {
            return .script
        }
        return nil
    }
}
