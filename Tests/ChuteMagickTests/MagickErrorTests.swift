import Testing

@testable import ChuteMagick

/// What a failed read says in plain words before ImageMagick's own message.
@Suite struct MagickErrorTests {
    private func reason(_ message: String, coder: String?, code: MagickError.Code = .decode) -> String? {
        MagickError(code: code, function: "MagickReadImageBlob", severity: 425, message: message, coder: coder)
            .plainReason.map { "\($0.sentence) / \($0.library)" }
    }

    @Test func commonDecodingFailuresAreSaidInPlainWords() {
        #expect(
            self.reason("Read error on strip 0; got 18446744073709550836 bytes, expected 1012.", coder: "TIFF")
                == "the TIFF is cut short or damaged: a strip could not be read / libtiff"
        )
        #expect(
            self.reason("Can not read TIFF directory count. `TIFFFetchDirectory'", coder: "TIFF")
                == "the TIFF is cut short or damaged: its directory of images could not be read / libtiff"
        )
        #expect(
            self.reason("Compression scheme 34712 tile decoding is not implemented. `JP2K'", coder: "TIFF")
                == "the TIFF uses a compression that this build cannot decode / libtiff"
        )
        #expect(
            self.reason("Not a JPEG file: starts with 0x89 0x50", coder: "JPEG")
                == "the file is not a valid JPEG, whatever its name says, or its header is damaged / libjpeg"
        )
        #expect(self.reason("", coder: "PNG") == "the PNG is cut short or damaged / libpng")
        // Other failures, and failures that are not a read's, keep ImageMagick's message alone.
        #expect(self.reason("unrecognized color `foo'", coder: "PNG") == nil)
        #expect(self.reason("Read error on strip 0", coder: nil) == nil)
        #expect(self.reason("Read error on strip 0", coder: "TIFF", code: .encode) == nil)
    }
}
