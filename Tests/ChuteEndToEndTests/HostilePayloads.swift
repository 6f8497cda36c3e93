import ChuteTestSupport
import Foundation
import SystemPackage

/// Hostile file contents, made at test time: text that decoders would interpret, and media whose headers lie.
///
/// Binary payloads start from a small real file made by the CLI tools and patch its header, so that every other byte
/// is what a decoder expects.
enum HostilePayloads {
    // MARK: Text posing as media or images

    /// An HLS playlist whose segments are a loopback URL, a `file:` URL and an absolute path.
    static func hls(url: String, marker: FilePath) -> String {
        """
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-TARGETDURATION:2
        #EXTINF:2.0,
        \(url)/hls/segment0.ts
        #EXTINF:2.0,
        file://\(marker)
        #EXTINF:2.0,
        \(marker)
        #EXT-X-ENDLIST

        """
    }

    /// An ID3v2 tag followed by an HLS playlist: the tag makes it look like MP3 to a magic-byte check, and FFmpeg's
    /// probe skips ID3 tags before it recognises the playlist.
    static func id3ThenHLS(url: String, marker: FilePath) -> Data {
        Self.id3Tag(frames: [Self.id3Frame("TIT2", Data([0x03]) + Data("song".utf8))])
            + Data(Self.hls(url: url, marker: marker).utf8)
    }

    /// A concat demuxer script naming an absolute path outside the root and a loopback URL.
    static func ffconcat(url: String, marker: FilePath) -> String {
        "ffconcat version 1.0\nfile \(marker)\nfile \(url)/concat.mp4\nfile ../../outside.mp4\n"
    }

    /// A PLS playlist.
    static func pls(url: String, marker: FilePath) -> String {
        "[playlist]\nFile1=\(url)/radio.mp3\nFile2=\(marker)\nNumberOfEntries=2\nVersion=2\n"
    }

    /// An XSPF playlist.
    static func xspf(url: String, marker: FilePath) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <playlist version="1" xmlns="http://xspf.org/ns/0/"><trackList>
        <track><location>\(url)/xspf.mp3</location></track>
        <track><location>file://\(marker)</location></track>
        </trackList></playlist>

        """
    }

    /// A session description whose RTP stream and RTSP control point at the listener's port.
    static func sdp(port: Int) -> String {
        [
            "v=0", "o=- 0 0 IN IP4 127.0.0.1", "s=hostile", "c=IN IP4 127.0.0.1", "t=0 0",
            "a=control:rtsp://127.0.0.1:\(port)/sdp", "m=video \(port) RTP/AVP 96", "a=rtpmap:96 H264/90000", "",
        ].joined(separator: "\r\n")
    }

    /// A DASH manifest whose base URLs are the listener and a file outside the root.
    static func dash(url: String, marker: FilePath) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT2S" \
        profiles="urn:mpeg:dash:profile:isoff-on-demand:2011"><BaseURL>\(url)/dash/</BaseURL><Period>
        <AdaptationSet mimeType="video/mp4"><Representation id="1" bandwidth="1000">
        <BaseURL>file://\(marker)</BaseURL></Representation></AdaptationSet></Period></MPD>

        """
    }

    /// An SVG that pulls in a loopback URL, a file outside the root by path and by `file:` URL, and a `text:` coder.
    static func svg(url: String, marker: FilePath, secret: FilePath, declaration: Bool) -> String {
        (declaration ? "<?xml version=\"1.0\" standalone=\"no\"?>\n" : "")
            + """
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="64" height="64">
            <image xlink:href="\(url)/svg.png" x="0" y="0" width="64" height="64"/>
            <image href="\(marker)" x="0" y="0" width="64" height="64"/>
            <image xlink:href="file://\(marker)" x="0" y="0" width="64" height="64"/>
            <image xlink:href="text:\(secret)" x="0" y="0" width="64" height="64"/>
            </svg>

            """
    }

    /// An MVG drawing that composites a loopback URL and a file outside the root.
    static func mvg(url: String, marker: FilePath) -> String {
        """
        push graphic-context
        viewbox 0 0 64 64
        image over 0,0 0,0 '\(url)/mvg.png'
        image over 0,0 0,0 '\(marker)'
        pop graphic-context

        """
    }

    /// An MVG drawing that renders a file's text (`@` reads a file), starting with a comment so that it does not
    /// even begin like MVG.
    static func mvgReadingAFile(secret: FilePath) -> String {
        "# a drawing\nviewbox 0 0 64 64\ntext 0,16 '@\(secret)'\nimage over 0,0 0,0 'ephemeral:\(secret)'\n"
    }

    /// An MSL script that reads a file outside the root and writes a copy of it.
    static func msl(marker: FilePath, copy: FilePath, declaration: Bool) -> String {
        (declaration ? "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" : "")
            + "<image>\n<read filename=\"\(marker)\"/>\n<write filename=\"\(copy)\"/>\n</image>\n"
    }

    /// PostScript that opens a file outside the root and prints it.
    static func postScript(secret: FilePath) -> String {
        "%!PS-Adobe-3.0\n/f (\(secret)) (r) file def\nf 256 string readstring pop print\nshowpage\n"
    }

    /// Encapsulated PostScript with its binary (DOS EPS) header, which is how EPS hides behind a `.jpg` name.
    static func binaryEPS(secret: FilePath) -> Data {
        let text = Data(("%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 64 64\n" + Self.postScript(secret: secret)).utf8)
        var header = Data([0xC5, 0xD0, 0xD3, 0xC6])
        for value in [UInt32(30), UInt32(text.count), 0, 0, 0, 0] {
            header += withUnsafeBytes(of: value.littleEndian) { Data($0) }
        }
        return header + Data([0xFF, 0xFF]) + text
    }

    /// A PDF.
    static func pdf() -> String {
        """
        %PDF-1.4
        1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj
        2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj
        trailer << /Root 1 0 R >>
        %%EOF

        """
    }

    // MARK: Bombs

    /// A real 16×16 PNG whose IHDR is rewritten to declare `width`×`height` (CRC fixed), so only its header lies.
    static func pngDeclaring(width: UInt32, height: UInt32, from png: Data) -> Data {
        var bytes = [UInt8](png)
        // Signature (8), length (4), "IHDR" (4), then width and height, big-endian.
        Self.store(width, bigEndianAt: 16, in: &bytes)
        Self.store(height, bigEndianAt: 20, in: &bytes)
        Self.store(Self.crc32(bytes[12..<29]), bigEndianAt: 29, in: &bytes)
        return Data(bytes)
    }

    /// A real PNG with an APNG `acTL` chunk added after IHDR that announces 2³¹−1 frames.
    static func apngAnnouncingFrames(from png: Data) -> Data {
        var body = [UInt8]("acTL".utf8)
        Self.append(UInt32(Int32.max), to: &body)
        Self.append(0, to: &body)
        var chunk: [UInt8] = []
        Self.append(8, to: &chunk)
        chunk += body
        Self.append(Self.crc32(body[...]), to: &chunk)
        var bytes = [UInt8](png)
        bytes.insert(contentsOf: chunk, at: 33)
        return Data(bytes)
    }

    /// A GIF whose logical screen is `screenWidth`×`screenHeight` and which holds `frames` 1×1 frames.
    static func gif(screenWidth: UInt16, screenHeight: UInt16, frames: Int) -> Data {
        var bytes = [UInt8]("GIF89a".utf8)
        bytes += Self.littleEndian(screenWidth) + Self.littleEndian(screenHeight)
        // A global colour table of two entries, black and white.
        bytes += [0x80, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF]
        bytes += [0x21, 0xFF, 0x0B] + Array("NETSCAPE2.0".utf8) + [0x03, 0x01, 0x00, 0x00, 0x00]
        let frame: [UInt8] =
            [0x21, 0xF9, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00]  // graphic control: 10 ms
            + [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0]  // image descriptor: 1×1 at 0,0
            + [0x02, 0x02, 0x44, 0x01, 0x00]  // LZW: one pixel
        for _ in 0..<frames { bytes += frame }
        return Data(bytes + [0x3B])
    }

    /// A real JPEG whose first SOF marker is rewritten to declare `width`×`height`.
    static func jpegDeclaring(width: UInt16, height: UInt16, from jpeg: Data) -> Data? {
        var bytes = [UInt8](jpeg)
        var offset = 2
        while offset + 9 < bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            if (0xC0...0xC3).contains(marker) {
                bytes[offset + 5] = UInt8(height >> 8)
                bytes[offset + 6] = UInt8(height & 0xFF)
                bytes[offset + 7] = UInt8(width >> 8)
                bytes[offset + 8] = UInt8(width & 0xFF)
                return Data(bytes)
            }
            offset += 2 + length
        }
        return nil
    }

    /// A real AVI whose main header and first stream format are rewritten to declare `width`×`height`.
    static func aviDeclaring(width: UInt32, height: UInt32, from avi: Data) -> Data? {
        var bytes = [UInt8](avi)
        guard let main = Self.find("avih", in: bytes), let format = Self.find("strf", in: bytes) else { return nil }
        // avih data: dwWidth at 32, dwHeight at 36; strf (BITMAPINFOHEADER): biWidth at 4, biHeight at 8.
        Self.store(width, littleEndianAt: main + 8 + 32, in: &bytes)
        Self.store(height, littleEndianAt: main + 8 + 36, in: &bytes)
        Self.store(width, littleEndianAt: format + 8 + 4, in: &bytes)
        Self.store(height, littleEndianAt: format + 8 + 8, in: &bytes)
        return Data(bytes)
    }

    // MARK: Tags

    /// An ID3v2.3 tag holding an APIC frame whose MIME type is `mimeType`, which FFmpeg quotes in a warning when it
    /// does not know it.
    static func id3WithPictureType(_ mimeType: [UInt8]) -> Data {
        var body = Data([0x00]) + Data(mimeType) + Data([0x00, 0x03]) + Data("cover\u{0}".utf8)
        body += Data([0x89, 0x50, 0x4E, 0x47])
        return Self.id3Tag(frames: [Self.id3Frame("APIC", body)])
    }

    private static func id3Frame(_ id: String, _ body: Data) -> Data {
        Data(id.utf8) + Data(Self.bigEndian(UInt32(body.count))) + Data([0, 0]) + body
    }

    private static func id3Tag(frames: [Data]) -> Data {
        let size = frames.reduce(0) { $0 + $1.count }
        // The tag size is "syncsafe": 7 bits per byte.
        let syncsafe = [
            UInt8((size >> 21) & 0x7F), UInt8((size >> 14) & 0x7F), UInt8((size >> 7) & 0x7F), UInt8(size & 0x7F),
        ]
        return Data("ID3".utf8) + Data([0x03, 0x00, 0x00] + syncsafe) + frames.reduce(Data(), +)
    }

    // MARK: Bytes

    private static func find(_ fourCC: String, in bytes: [UInt8]) -> Int? {
        let needle = Array(fourCC.utf8)
        guard bytes.count >= needle.count else { return nil }
        return (0...(bytes.count - needle.count)).first { Array(bytes[$0..<($0 + needle.count)]) == needle }
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    private static func littleEndian(_ value: UInt16) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8)]
    }

    private static func append(_ value: UInt32, to bytes: inout [UInt8]) {
        bytes += Self.bigEndian(value)
    }

    private static func store(_ value: UInt32, bigEndianAt offset: Int, in bytes: inout [UInt8]) {
        bytes.replaceSubrange(offset..<(offset + 4), with: Self.bigEndian(value))
    }

    private static func store(_ value: UInt32, littleEndianAt offset: Int, in bytes: inout [UInt8]) {
        bytes.replaceSubrange(offset..<(offset + 4), with: Self.bigEndian(value).reversed())
    }

    /// The CRC-32 that PNG chunks carry (ISO 3309, reflected, polynomial 0xEDB88320).
    private static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
