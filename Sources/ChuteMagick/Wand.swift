import CMagickWand
import ChuteCore

#if canImport(Glibc)
import Glibc
#endif

/// Owns one `MagickWand`: a list of images and a cursor into it.
///
/// Most operations act on the current image, chosen with ``selectImage(at:)``. Failures throw ``MagickError``
/// with the message ImageMagick recorded for that call.
///
/// - Important: a wand is not thread-safe and never leaves the conversion that created it.
struct Wand: ~Copyable {
    /// A warning or error that ImageMagick recorded while it worked, on the wand or on one of its images.
    struct Diagnostic: Equatable {
        /// `WarningException` (300) and above; see ``MagickError/severity``.
        var severity: UInt32
        /// ImageMagick's text.
        var message: String

        /// Whether the problem is an error rather than a warning.
        var isError: Bool { self.severity >= ErrorException.rawValue }
        /// Whether a decoder found damaged pixel data (a truncated file, a broken stream) and filled in for it.
        var isCorruptPixelData: Bool { self.severity == CorruptImageWarning.rawValue }
    }

    private let handle: OpaquePointer

    /// Creates an empty wand. The corresponding C function is `NewMagickWand`.
    init() {
        _ = MagickLibrary.shared
        // NewMagickWand aborts the process rather than return NULL when memory runs out.
        self.handle = NewMagickWand()
    }

    /// Adopts a wand that a MagickWand function returned, such as `MagickCoalesceImages`.
    private init(takingOwnershipOf handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        _ = DestroyMagickWand(self.handle)
    }

    // MARK: Reading and writing

    /// Decodes an encoded image from memory with the named coder, appending its frames to the wand.
    ///
    /// The wand's file name is set to `"CODER:"` first: that makes ImageMagick use this coder instead of guessing
    /// one from the bytes, and it is the only "file name" ImageMagick ever sees, so nothing in a real path
    /// (`fmt:`, `[…]`, `%d`, `|`) is interpreted.
    /// The corresponding C functions are `MagickSetFilename` and `MagickReadImageBlob`, or `MagickPingImageBlob`
    /// when `headersOnly` is set (the coder reads the image's size and frames but no pixels).
    ///
    /// - Parameters:
    ///   - bytes: the encoded image.
    ///   - coder: the ImageMagick coder to decode with, such as `JPEG`.
    ///   - headersOnly: whether to read the headers only.
    /// - Throws: ``MagickError`` with code `decode` when the coder failed or produced no image.
    func read(_ bytes: UnsafeRawBufferPointer, coder: String, headersOnly: Bool = false) throws(MagickError) {
        try self.check(MagickSetFilename(self.handle, "\(coder):"), .decode, "MagickSetFilename")
        guard let start = bytes.baseAddress else {
            throw MagickError(code: .decode, function: "MagickReadImageBlob", severity: 0, message: "empty input")
        }
        let function = headersOnly ? "MagickPingImageBlob" : "MagickReadImageBlob"
        let status =
            headersOnly
            ? MagickPingImageBlob(self.handle, start, bytes.count)
            : MagickReadImageBlob(self.handle, start, bytes.count)
        guard status == MagickTrue else {
            var error = self.takeError(.decode, function)
            error.coder = coder
            throw error
        }
        guard self.imageCount > 0 else {
            throw MagickError(
                code: .decode,
                function: function,
                severity: 0,
                message: "no image in the input",
                coder: coder
            )
        }
    }

    /// Sets the width, height and bits per sample of the raw samples the next read decodes: the `RGB` and `YUV`
    /// coders read headerless pixels and cannot find these in the bytes.
    /// The corresponding C functions are `MagickSetSize` and `MagickSetDepth`.
    func setRawGeometry(width: Int, height: Int, depth: Int) throws(MagickError) {
        try self.check(MagickSetSize(self.handle, width, height), .decode, "MagickSetSize")
        try self.check(MagickSetDepth(self.handle, depth), .decode, "MagickSetDepth")
    }

    /// Decodes an encoded image held in an array, as the `UnsafeRawBufferPointer` variant does.
    func read(_ bytes: [UInt8], coder: String, headersOnly: Bool = false) throws(MagickError) {
        // Array.withUnsafeBytes only rethrows untyped errors, so the typed error travels out in a Result.
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(MagickError) in try self.read(buffer, coder: coder, headersOnly: headersOnly) }
        }.get()
    }

    /// Appends an image made from pixels in memory, which are copied.
    ///
    /// The corresponding C function is `MagickConstituteImage`.
    ///
    /// - Parameters:
    ///   - width: the image's width in pixels.
    ///   - height: its height in pixels.
    ///   - channels: the order of the samples of one pixel, such as `RGB`, or `I` for grey.
    ///   - bitsPerChannel: 8 or 16 (16-bit samples in the machine's byte order).
    ///   - pixels: `width` × `height` pixels, row by row, without padding.
    /// - Throws: ``MagickError`` with code `decode`.
    func constitute(
        width: Int,
        height: Int,
        channels: String,
        bitsPerChannel: Int,
        pixels: UnsafeRawBufferPointer
    ) throws(MagickError) {
        let needed = width * height * channels.count * (bitsPerChannel / 8)
        guard let start = pixels.baseAddress, pixels.count >= needed, bitsPerChannel == 8 || bitsPerChannel == 16
        else {
            throw MagickError(
                code: .decode,
                function: "MagickConstituteImage",
                severity: 0,
                message: "\(pixels.count) bytes of \(bitsPerChannel)-bit pixels do not make a \(width)x\(height) image"
            )
        }
        let storage = bitsPerChannel == 16 ? ShortPixel : CharPixel
        try self.check(
            MagickConstituteImage(self.handle, width, height, channels, storage, start),
            .decode,
            "MagickConstituteImage"
        )
    }

    /// Encodes the current image, or every image, with the named coder.
    ///
    /// The corresponding C functions are `MagickSetFilename` (`"CODER:"`, replacing the decoder's name, which would
    /// otherwise choose the output format), `MagickSetImageFormat` on each image, and `MagickGetImageBlob` or
    /// `MagickGetImagesBlob`.
    ///
    /// - Parameters:
    ///   - coder: the ImageMagick coder to encode with, such as `WEBP`.
    ///   - allImages: whether to write every image into one file (animation, pages) or only the current one.
    /// - Returns: the encoded bytes.
    /// - Throws: ``MagickError`` with code `encode`.
    func encode(coder: String, allImages: Bool) throws(MagickError) -> MagickBlob {
        try self.check(MagickSetFilename(self.handle, "\(coder):"), .encode, "MagickSetFilename")
        let current = MagickGetIteratorIndex(self.handle)
        try self.forEachImage { () throws(MagickError) in
            try self.check(MagickSetImageFormat(self.handle, coder), .encode, "MagickSetImageFormat")
        }
        try self.selectImage(at: current)
        var length = 0
        let function = allImages ? "MagickGetImagesBlob" : "MagickGetImageBlob"
        let bytes = allImages ? MagickGetImagesBlob(self.handle, &length) : MagickGetImageBlob(self.handle, &length)
        guard let bytes else { throw self.takeError(.encode, function) }
        return MagickBlob(takingOwnershipOf: bytes, count: length)
    }

    /// Encodes the current image with the named coder through a C stream in memory rather than a blob, for a coder
    /// whose writer reports a failure that is not one.
    ///
    /// ImageMagick 6.9.11's `YUV` writer writes every byte, then returns `MagickFalse` without recording any
    /// exception (`convert` exits 1 after writing a correct file as well), and `MagickGetImageBlob` drops the bytes
    /// on that status. Through a stream the bytes survive. A failure that comes with an exception still throws;
    /// one without is let through, so the caller must check the bytes (raw samples have an exact size).
    /// The corresponding C functions are `open_memstream`, `MagickSetImageFormat`, `MagickWriteImageFile` and
    /// `AcquireQuantumMemory`.
    ///
    /// - Parameter coder: the ImageMagick coder to encode with, such as `YUV`.
    /// - Returns: the encoded bytes, in memory that ImageMagick owns.
    /// - Throws: ``MagickError`` with code `encode`.
    func encodeThroughStream(coder: String) throws(MagickError) -> MagickBlob {
        try self.check(MagickSetFilename(self.handle, "\(coder):"), .encode, "MagickSetFilename")
        try self.check(MagickSetImageFormat(self.handle, coder), .encode, "MagickSetImageFormat")
        var buffer: UnsafeMutablePointer<CChar>?
        var length = 0
        guard let stream = open_memstream(&buffer, &length) else {
            throw MagickError(code: .encode, function: "open_memstream", severity: 0, message: "errno \(errno)")
        }
        let status = MagickWriteImageFile(self.handle, stream)
        // fclose flushes the stream and sets buffer and length for the last time.
        fclose(stream)
        defer { free(buffer) }
        if status != MagickTrue {
            let error = self.takeError(.encode, "MagickWriteImageFile")
            if error.severity != 0 { throw error }
        }
        guard let buffer, length > 0,
            let copy = AcquireQuantumMemory(length, 1)?.assumingMemoryBound(to: UInt8.self)
        else {
            throw MagickError(code: .encode, function: "MagickWriteImageFile", severity: 0, message: "no bytes written")
        }
        copy.update(from: UnsafeRawPointer(buffer).assumingMemoryBound(to: UInt8.self), count: length)
        return MagickBlob(takingOwnershipOf: copy, count: length)
    }

    // MARK: The image list

    /// The number of images (frames, pages) in the wand. The corresponding C function is `MagickGetNumberImages`.
    var imageCount: Int { MagickGetNumberImages(self.handle) }

    /// Makes the image at `index` current. The corresponding C function is `MagickSetIteratorIndex`.
    func selectImage(at index: Int) throws(MagickError) {
        try self.check(MagickSetIteratorIndex(self.handle, index), .process, "MagickSetIteratorIndex")
    }

    /// Runs `body` once per image, each time with that image current.
    func forEachImage<E: Error>(_ body: () throws(E) -> Void) throws(E) {
        for index in 0..<self.imageCount {
            // Cannot fail: the index is within the list.
            _ = MagickSetIteratorIndex(self.handle, index)
            try body()
        }
    }

    /// Removes every image but the first, which becomes current.
    /// The corresponding C functions are `MagickSetLastIterator` and `MagickRemoveImage`.
    func keepFirstImage() throws(MagickError) {
        while self.imageCount > 1 {
            MagickSetLastIterator(self.handle)
            try self.check(MagickRemoveImage(self.handle), .process, "MagickRemoveImage")
        }
        try self.selectImage(at: 0)
    }

    /// Appends a copy of `other`'s current image after this wand's last, and makes it current. The corresponding C
    /// functions are `MagickSetLastIterator` and `MagickAddImage`.
    func append(_ other: borrowing Wand) throws(MagickError) {
        MagickSetLastIterator(self.handle)
        try self.check(MagickAddImage(self.handle, other.handle), .process, "MagickAddImage")
    }

    /// Makes the current image an animation frame shown for `ticks` hundredths of a second, cleared to the
    /// background before the next, in an animation that loops forever. The corresponding C functions are
    /// `MagickSetImageDelay`, `MagickSetImageDispose` and `MagickSetImageIterations`.
    func makeFrame(ticks: Int) throws(MagickError) {
        try self.check(MagickSetImageDelay(self.handle, ticks), .process, "MagickSetImageDelay")
        try self.check(MagickSetImageDispose(self.handle, BackgroundDispose), .process, "MagickSetImageDispose")
        try self.check(MagickSetImageIterations(self.handle, 0), .process, "MagickSetImageIterations")
    }

    /// Returns a wand whose images are full-canvas renderings of this wand's animation frames, with each frame's
    /// offset and disposal applied, so that frames can be resized and re-encoded independently.
    /// The corresponding C function is `MagickCoalesceImages`.
    func coalesced() throws(MagickError) -> Wand {
        guard let handle = MagickCoalesceImages(self.handle) else {
            throw self.takeError(.process, "MagickCoalesceImages")
        }
        return Wand(takingOwnershipOf: handle)
    }

    /// Returns a new wand holding the `width` × `height` region at `x`, `y` of each of this wand's images, their
    /// page geometry reset before and after the cut, so that the box is in the image's own pixels and no offset is
    /// written. The encoder settings (quality, depth) go with the copy.
    /// The corresponding C functions are `CloneMagickWand`, `MagickResetImagePage` and `MagickCropImage`.
    func cropped(x: Int, y: Int, width: Int, height: Int) throws(MagickError) -> Wand {
        guard let handle = CloneMagickWand(self.handle) else {
            throw self.takeError(.process, "CloneMagickWand")
        }
        let copy = Wand(takingOwnershipOf: handle)
        try copy.forEachImage { () throws(MagickError) in
            try copy.check(MagickResetImagePage(copy.handle, nil), .process, "MagickResetImagePage")
            try copy.check(MagickCropImage(copy.handle, width, height, x, y), .process, "MagickCropImage")
            try copy.check(MagickResetImagePage(copy.handle, nil), .process, "MagickResetImagePage")
        }
        try copy.selectImage(at: 0)
        return copy
    }

    /// Returns a copy of the wand: its images, their settings and the cursor. The corresponding C function is
    /// `CloneMagickWand`.
    func cloned() throws(MagickError) -> Wand {
        guard let handle = CloneMagickWand(self.handle) else {
            throw self.takeError(.process, "CloneMagickWand")
        }
        return Wand(takingOwnershipOf: handle)
    }

    // MARK: The current image

    /// The current image's width in pixels. The corresponding C function is `MagickGetImageWidth`.
    var width: Int { MagickGetImageWidth(self.handle) }

    /// The current image's height in pixels. The corresponding C function is `MagickGetImageHeight`.
    var height: Int { MagickGetImageHeight(self.handle) }

    /// The coder that read the current image, such as `JPEG`. The corresponding C function is
    /// `MagickGetImageFormat`.
    var format: String {
        guard let format = MagickGetImageFormat(self.handle) else { return "" }
        defer { _ = MagickRelinquishMemory(format) }
        return String(cString: format)
    }

    /// Whether the current image has an alpha channel. The corresponding C function is `MagickGetImageAlphaChannel`.
    var hasAlpha: Bool { MagickGetImageAlphaChannel(self.handle) == MagickTrue }

    /// The current image's resolution in dots per inch, or `nil` when the file gives none (no unit, or zero).
    /// The corresponding C functions are `MagickGetImageResolution` and `MagickGetImageUnits`.
    var dotsPerInch: (x: Double, y: Double)? {
        var (x, y) = (0.0, 0.0)
        guard MagickGetImageResolution(self.handle, &x, &y) == MagickTrue, x > 0, y > 0 else { return nil }
        switch MagickGetImageUnits(self.handle) {
        case PixelsPerInchResolution: return (x, y)
        case PixelsPerCentimeterResolution: return (x * 2.54, y * 2.54)
        default: return nil
        }
    }

    /// The current image's EXIF orientation, 1 to 8 (1 when it has none). The corresponding C function is
    /// `MagickGetImageOrientation`.
    var orientation: Int {
        let value = Int(MagickGetImageOrientation(self.handle).rawValue)
        return (1...8).contains(value) ? value : 1
    }

    /// The bits per sample of the current image. The corresponding C function is `MagickGetImageDepth`.
    var depth: Int { MagickGetImageDepth(self.handle) }

    /// Whether the current image is stored as red, green and blue (sRGB or linear RGB). The corresponding C function
    /// is `MagickGetImageColorspace`.
    var isRGB: Bool { [sRGBColorspace, RGBColorspace].contains(MagickGetImageColorspace(self.handle)) }

    /// Whether the current image is stored as grey levels. The corresponding C function is
    /// `MagickGetImageColorspace`.
    var isGray: Bool { MagickGetImageColorspace(self.handle) == GRAYColorspace }

    /// Whether the current image is stored as cyan, magenta, yellow and black. The corresponding C function is
    /// `MagickGetImageColorspace`.
    var isCMYK: Bool { MagickGetImageColorspace(self.handle) == CMYKColorspace }

    /// Converts the current image's pixels from CMYK to sRGB through ICC profiles, as `convert in.jpg -profile
    /// CMYK.icc -profile sRGB.icc out.jpg` does: an image without an ICC profile is given `defaultCMYK` first, then
    /// the pixels are transformed into `sRGB` (by Little CMS), which becomes the image's profile. The corresponding
    /// C function is `MagickProfileImage`, which assigns a profile to an image that has none and transforms the
    /// pixels of one that has.
    func transformCMYK(defaultCMYK: [UInt8], into sRGB: [UInt8]) throws(MagickError) {
        if self.profile("icc") == nil {
            let status = defaultCMYK.withUnsafeBytes {
                MagickProfileImage(self.handle, "icc", $0.baseAddress, $0.count)
            }
            try self.check(status, .process, "MagickProfileImage")
        }
        let status = sRGB.withUnsafeBytes { MagickProfileImage(self.handle, "icc", $0.baseAddress, $0.count) }
        try self.check(status, .process, "MagickProfileImage")
    }

    /// Converts the current image's pixels to sRGB (from CMYK, Lab, …); an sRGB image is left as it is.
    /// The corresponding C function is `MagickTransformImageColorspace`.
    func makeSRGB() throws(MagickError) {
        try self.check(
            MagickTransformImageColorspace(self.handle, sRGBColorspace),
            .process,
            "MagickTransformImageColorspace"
        )
    }

    /// The current image's pixels, 8 bits a sample, row by row without padding, in the order of `channels` (`RGB`,
    /// or `I` for grey). The corresponding C function is `MagickExportImagePixels`.
    ///
    /// - Throws: ``MagickError`` with code `process`.
    func exportPixels(channels: String) throws(MagickError) -> [UInt8] {
        let (width, height) = (self.width, self.height)
        var pixels = [UInt8](repeating: 0, count: width * height * channels.count)
        let status = pixels.withUnsafeMutableBytes {
            MagickExportImagePixels(self.handle, 0, 0, width, height, channels, CharPixel, $0.baseAddress)
        }
        try self.check(status, .process, "MagickExportImagePixels")
        return pixels
    }

    /// Sets the bits per sample that the encoder writes for the current image (8 or 16 for the raw coders).
    /// The corresponding C function is `MagickSetImageDepth`.
    func setDepth(_ depth: Int) throws(MagickError) {
        try self.check(MagickSetImageDepth(self.handle, depth), .process, "MagickSetImageDepth")
    }

    /// Marks the current image as top-left without touching its pixels, for a coder whose orientation only tells how
    /// the rows were stored and which has already put them in display order (TGA's bottom-left origin).
    /// The corresponding C function is `MagickSetImageOrientation`.
    func markTopLeft() throws(MagickError) {
        try self.check(
            MagickSetImageOrientation(self.handle, TopLeftOrientation),
            .process,
            "MagickSetImageOrientation"
        )
    }

    /// Rotates and flips the current image's pixels as its EXIF orientation says, and sets the orientation to
    /// top-left. The corresponding C function is `MagickAutoOrientImage`.
    func autoOrient() throws(MagickError) {
        try self.check(MagickAutoOrientImage(self.handle), .process, "MagickAutoOrientImage")
    }

    /// Resamples the current image to exactly `width` × `height` with a Lanczos filter, then resets its page
    /// geometry so that no stale canvas size or offset is written. The corresponding C functions are
    /// `MagickResizeImage` and `MagickResetImagePage`.
    func resize(width: Int, height: Int) throws(MagickError) {
        try self.check(MagickResizeImage(self.handle, width, height, LanczosFilter, 1.0), .process, "MagickResizeImage")
        try self.check(MagickResetImagePage(self.handle, nil), .process, "MagickResetImagePage")
    }

    /// Keeps the `width` × `height` box at (`x`, `y`) of the current image, then resets its page geometry so that
    /// no stale canvas size or offset is written. The corresponding C functions are `MagickCropImage` and
    /// `MagickResetImagePage`.
    func crop(width: Int, height: Int, x: Int, y: Int) throws(MagickError) {
        try self.check(MagickCropImage(self.handle, width, height, x, y), .process, "MagickCropImage")
        try self.check(MagickResetImagePage(self.handle, nil), .process, "MagickResetImagePage")
    }

    /// Turns the current image clockwise by `degrees`, enlarging the canvas to hold it and filling the uncovered
    /// corners with `background`; multiples of 90 move pixels exactly. The page geometry is reset afterwards.
    /// The corresponding C functions are `MagickSetImageAlphaChannel` (for a transparent background on an image
    /// without alpha, when corners are uncovered), `MagickRotateImage` and `MagickResetImagePage`.
    func rotate(degrees: Double, background: ImageColor) throws(MagickError) {
        if degrees.truncatingRemainder(dividingBy: 90) != 0 {
            try self.makeRoom(for: background)
        }
        let color = PixelColor(named: background.name)
        let status = color.withUnsafeHandle { MagickRotateImage(self.handle, $0, degrees) }
        try self.check(status, .process, "MagickRotateImage")
        try self.check(MagickResetImagePage(self.handle, nil), .process, "MagickResetImagePage")
    }

    /// Gives the current image an (opaque) alpha channel when `background` is not opaque, so that what an
    /// operation adds in that colour stays transparent. The corresponding C function is `MagickSetImageAlphaChannel`.
    private func makeRoom(for background: ImageColor) throws(MagickError) {
        guard !background.isOpaque, !self.hasAlpha else { return }
        try self.check(
            MagickSetImageAlphaChannel(self.handle, OpaqueAlphaChannel),
            .process,
            "MagickSetImageAlphaChannel"
        )
    }

    /// Puts the current image on a `width` × `height` canvas of `background`, its top-left corner at (`x`, `y`), then
    /// resets the page geometry. The corresponding C functions are `MagickSetImageBackgroundColor`,
    /// `MagickExtentImage` (whose offsets are the canvas's, relative to the image: hence negated) and
    /// `MagickResetImagePage`.
    func extend(width: Int, height: Int, x: Int, y: Int, background: ImageColor) throws(MagickError) {
        try self.makeRoom(for: background)
        let color = PixelColor(named: background.name)
        let status = color.withUnsafeHandle { MagickSetImageBackgroundColor(self.handle, $0) }
        try self.check(status, .process, "MagickSetImageBackgroundColor")
        try self.check(MagickExtentImage(self.handle, width, height, -x, -y), .process, "MagickExtentImage")
        try self.check(MagickResetImagePage(self.handle, nil), .process, "MagickResetImagePage")
    }

    /// Fits the current image into `size`, enlarged or reduced keeping its aspect ratio, and centres it on a canvas
    /// of exactly that size in `background`.
    func fit(into size: (width: Int, height: Int), background: ImageColor) throws(MagickError) {
        let scale = min(Double(size.width) / Double(self.width), Double(size.height) / Double(self.height))
        let fitted = (
            width: max(1, Int((Double(self.width) * scale).rounded())),
            height: max(1, Int((Double(self.height) * scale).rounded()))
        )
        if fitted != (self.width, self.height) {
            try self.resize(width: fitted.width, height: fitted.height)
        }
        if fitted != size {
            try self.extend(
                width: size.width,
                height: size.height,
                x: (size.width - fitted.width) / 2,
                y: (size.height - fitted.height) / 2,
                background: background
            )
        }
    }

    /// Makes a wand holding one transparent `width` × `height` image. The corresponding C function is
    /// `MagickNewImage`.
    static func makeCanvas(width: Int, height: Int) throws(MagickError) -> Wand {
        let canvas = Wand()
        let transparent = PixelColor(named: "transparent")
        let status = transparent.withUnsafeHandle { MagickNewImage(canvas.handle, width, height, $0) }
        try canvas.check(status, .process, "MagickNewImage")
        return canvas
    }

    /// The size of `text` drawn in `style`: its advance width, its height, and the ascender (from the top of the
    /// line to the baseline). The corresponding C functions are `MagickQueryFontMetrics`, which needs an image in
    /// the wand, and `MagickRelinquishMemory`.
    func textMetrics(
        _ text: String,
        style: borrowing TextStyle
    ) throws(MagickError) -> (width: Double, height: Double, ascender: Double) {
        let metrics = style.withUnsafeHandle { MagickQueryFontMetrics(self.handle, $0, text) }
        guard let metrics else { throw self.takeError(.process, "MagickQueryFontMetrics") }
        defer { _ = MagickRelinquishMemory(metrics) }
        // Its 13 values: character width and height, ascender, descender, text width and height, maximum advance,
        // the bounds, and the origin.
        return (metrics[4], metrics[5], metrics[2])
    }

    /// Draws `text` in `style` on the current image, its baseline starting at (`x`, `y`). The corresponding C
    /// function is `MagickAnnotateImage`.
    func annotate(_ text: String, style: borrowing TextStyle, x: Double, y: Double) throws(MagickError) {
        let status = style.withUnsafeHandle { MagickAnnotateImage(self.handle, $0, x, y, 0, text) }
        try self.check(status, .process, "MagickAnnotateImage")
    }

    /// Multiplies the current image's alpha by `opacity`, giving it an alpha channel first if it has none.
    /// The corresponding C functions are `MagickSetImageAlphaChannel` and `MagickEvaluateImageChannel`.
    func fade(to opacity: Double) throws(MagickError) {
        if !self.hasAlpha {
            try self.check(
                MagickSetImageAlphaChannel(self.handle, OpaqueAlphaChannel),
                .process,
                "MagickSetImageAlphaChannel"
            )
        }
        guard opacity < 1 else { return }
        try self.check(
            MagickEvaluateImageChannel(self.handle, AlphaChannel, MultiplyEvaluateOperator, opacity),
            .process,
            "MagickEvaluateImageChannel"
        )
    }

    /// Lays `other`'s current image over the current image with its top-left corner at (`x`, `y`).
    /// The corresponding C function is `MagickCompositeImage` with `OverCompositeOp`.
    func composite(_ other: borrowing Wand, x: Int, y: Int) throws(MagickError) {
        try self.check(
            MagickCompositeImage(self.handle, other.handle, OverCompositeOp, x, y),
            .process,
            "MagickCompositeImage"
        )
    }

    /// Mirrors the current image top to bottom. The corresponding C function is `MagickFlipImage`.
    func flip() throws(MagickError) {
        try self.check(MagickFlipImage(self.handle), .process, "MagickFlipImage")
    }

    /// Converts the current image to shades of grey. The corresponding C function is
    /// `MagickTransformImageColorspace` with `GRAYColorspace`.
    func makeGray() throws(MagickError) {
        try self.check(
            MagickTransformImageColorspace(self.handle, GRAYColorspace),
            .process,
            "MagickTransformImageColorspace"
        )
    }

    /// Mirrors the current image left to right. The corresponding C function is `MagickFlopImage`.
    func flop() throws(MagickError) {
        try self.check(MagickFlopImage(self.handle), .process, "MagickFlopImage")
    }

    /// Sets the encoder quality, 1–100, for the current image and for the wand (some coders, HEIC among them, read
    /// the wand's). The corresponding C functions are `MagickSetImageCompressionQuality` and
    /// `MagickSetCompressionQuality`.
    func setQuality(_ quality: Int) throws(MagickError) {
        try self.check(
            MagickSetImageCompressionQuality(self.handle, quality),
            .process,
            "MagickSetImageCompressionQuality"
        )
        try self.check(MagickSetCompressionQuality(self.handle, quality), .process, "MagickSetCompressionQuality")
    }

    /// Removes the current image's profiles (EXIF with its thumbnail and GPS, XMP, IPTC, Photoshop resources),
    /// comments and the properties read from them, but keeps its ICC colour profile, so colours still render as
    /// before.
    ///
    /// `MagickStripImage` is not used: besides removing the ICC profile, it tells the PNG writer to leave out the
    /// text chunks and, with them, `iCCP` (ImageMagick 6 drops `iCCP` whenever both `tEXt` and `zTXt` are
    /// excluded), so a profile put back afterwards would still be missing from a PNG. Here every property but the
    /// coders' own (`jpeg:`, `png:`) is deleted, so that no text is left for the PNG writer to put in chunks, and it
    /// is told to leave out `tEXt`, `iTXt`, `eXIf`, `tIME` and the dates.
    /// The corresponding C functions are `MagickGetImageProfiles`, `MagickRemoveImageProfile`,
    /// `MagickGetImageProperties`, `MagickDeleteImageProperty` and `MagickSetImageArtifact`.
    func stripMetadataKeepingColorProfile() throws(MagickError) {
        for name in self.profileNames where name != "icc" && name != "icm" {
            self.removeProfile(name)
        }
        self.deleteProperties { !$0.hasPrefix("jpeg:") && !$0.hasPrefix("png:") }
        try self.check(
            MagickSetImageArtifact(self.handle, "png:exclude-chunk", "eXIf,iTXt,tEXt,date,tIME"),
            .process,
            "MagickSetImageArtifact"
        )
    }

    /// Deletes the current image's properties whose names `selected` picks.
    /// The corresponding C functions are `MagickGetImageProperties` and `MagickDeleteImageProperty`.
    func deleteProperties(where selected: (String) -> Bool) {
        var count = 0
        guard let names = MagickGetImageProperties(self.handle, "*", &count) else { return }
        defer { _ = MagickRelinquishMemory(names) }
        for index in 0..<count {
            guard let name = names[index] else { continue }
            if selected(String(cString: name)) {
                _ = MagickDeleteImageProperty(self.handle, name)
            }
            _ = MagickRelinquishMemory(name)
        }
    }

    /// Sets the current image's orientation, which ``autoOrient()`` then applies, as EXIF numbers it (1 to 8).
    /// The corresponding C function is `MagickSetImageOrientation`.
    func setOrientation(_ orientation: Int) throws(MagickError) {
        let status = MagickSetImageOrientation(self.handle, OrientationType(rawValue: UInt32(orientation)))
        try self.check(status, .process, "MagickSetImageOrientation")
    }

    /// The names of the current image's profiles (`icc`, `exif`, `xmp`, `iptc`, `8bim`, …), lowercased.
    /// The corresponding C function is `MagickGetImageProfiles`.
    var profileNames: [String] {
        var count = 0
        guard let names = MagickGetImageProfiles(self.handle, "*", &count) else { return [] }
        defer { _ = MagickRelinquishMemory(names) }
        return (0..<count).compactMap { index in
            guard let name = names[index] else { return nil }
            defer { _ = MagickRelinquishMemory(name) }
            return String(cString: name).lowercased()
        }
    }

    /// The current image's profile `name`, or `nil` when it has none. The corresponding C function is
    /// `MagickGetImageProfile`.
    func profile(_ name: String) -> [UInt8]? {
        var length = 0
        guard let bytes = MagickGetImageProfile(self.handle, name, &length) else { return nil }
        defer { _ = MagickRelinquishMemory(bytes) }
        return Array(UnsafeBufferPointer(start: bytes, count: length))
    }

    /// The current image's property `name` (such as `comment`), or `nil`. The corresponding C function is
    /// `MagickGetImageProperty`.
    func property(_ name: String) -> String? {
        guard let value = MagickGetImageProperty(self.handle, name) else { return nil }
        defer { _ = MagickRelinquishMemory(value) }
        return String(cString: value)
    }

    /// Sets the current image's profile `name` (`icc`, `exif`, …) to `bytes`, replacing any it had, without
    /// changing its pixels. The corresponding C function is `MagickSetImageProfile`.
    func setProfile(_ name: String, to bytes: [UInt8]) throws(MagickError) {
        let status = bytes.withUnsafeBytes { MagickSetImageProfile(self.handle, name, $0.baseAddress, $0.count) }
        try self.check(status, .process, "MagickSetImageProfile")
    }

    /// Removes the current image's profile `name`, if it has one. The corresponding C function is
    /// `MagickRemoveImageProfile`, which returns the removed profile.
    func removeProfile(_ name: String) {
        var length = 0
        if let removed = MagickRemoveImageProfile(self.handle, name, &length) {
            _ = MagickRelinquishMemory(removed)
        }
    }

    /// Composites the current image onto `background` and drops its alpha channel.
    /// The corresponding C functions are `MagickSetImageBackgroundColor` and `MagickSetImageAlphaChannel` with
    /// `RemoveAlphaChannel`.
    func removeAlpha(onto background: borrowing PixelColor) throws(MagickError) {
        let status = background.withUnsafeHandle { MagickSetImageBackgroundColor(self.handle, $0) }
        try self.check(status, .process, "MagickSetImageBackgroundColor")
        try self.check(
            MagickSetImageAlphaChannel(self.handle, RemoveAlphaChannel),
            .process,
            "MagickSetImageAlphaChannel"
        )
    }

    // MARK: Errors and warnings

    /// Takes every warning and error that ImageMagick recorded so far, then clears them.
    ///
    /// Coders report some problems on the wand and others only on the image they were decoding (libjpeg's
    /// "Premature end of JPEG file", for one), where no wand call looks until a later call copies the worst one
    /// over. This reads both: the wand's, and every entry in each image's exception list.
    /// The corresponding C functions are `MagickGetException`, `MagickClearException`, `GetImageFromMagickWand`,
    /// `GetNextValueInLinkedList`, `GetLocaleExceptionMessage` and `ClearMagickException`.
    ///
    /// - Returns: the problems, in the order recorded, without duplicates.
    private func takeDiagnostics() -> [Diagnostic] {
        var diagnostics: [Diagnostic] = []
        func record(_ diagnostic: Diagnostic) {
            if diagnostic.severity != 0, !diagnostics.contains(diagnostic) { diagnostics.append(diagnostic) }
        }
        let current = MagickGetIteratorIndex(self.handle)
        self.forEachImage {
            guard let image = GetImageFromMagickWand(self.handle), let list = image.pointee.exception.exceptions else {
                return
            }
            let entries = OpaquePointer(list)
            ResetLinkedListIterator(entries)
            while let entry = GetNextValueInLinkedList(entries)?.assumingMemoryBound(to: ExceptionInfo.self) {
                record(Self.diagnostic(from: entry.pointee))
            }
            ClearMagickException(&image.pointee.exception)
        }
        _ = MagickSetIteratorIndex(self.handle, current)
        let (severity, message) = self.takeException()
        record(Diagnostic(severity: severity, message: message))
        return diagnostics
    }

    /// Takes the recorded diagnostics (see ``takeDiagnostics()``) after `function` has returned.
    ///
    /// - Parameters:
    ///   - code: the stage, for the error.
    ///   - function: the C function whose work recorded the diagnostics.
    ///   - coder: the coder that read the image, for the error of a read (``MagickError/coder``).
    ///   - isFatal: which diagnostics fail the stage.
    /// - Returns: the messages of the others, the warnings.
    /// - Throws: ``MagickError`` for the first diagnostic that `isFatal` selects.
    func takeWarnings(
        _ code: MagickError.Code,
        after function: String,
        coder: String? = nil,
        failingOn isFatal: (Diagnostic) -> Bool
    ) throws(MagickError) -> [String] {
        let diagnostics = self.takeDiagnostics()
        if let fatal = diagnostics.first(where: isFatal) {
            throw MagickError(
                code: code,
                function: function,
                severity: fatal.severity,
                message: fatal.message,
                coder: coder
            )
        }
        return diagnostics.map(\.message)
    }

    /// Formats one entry of an image's exception list as `MagickGetException` formats the wand's.
    private static func diagnostic(from exception: ExceptionInfo) -> Diagnostic {
        var parts: [String] = []
        if let reason = exception.reason {
            parts.append(String(cString: GetLocaleExceptionMessage(exception.severity, reason)))
        }
        if let description = exception.description {
            parts.append(String(cString: GetLocaleExceptionMessage(exception.severity, description)))
        }
        return Diagnostic(severity: exception.severity.rawValue, message: parts.joined(separator: " "))
    }

    /// Throws the wand's recorded error unless `status` is `MagickTrue`.
    private func check(_ status: MagickBooleanType, _ code: MagickError.Code, _ function: String) throws(MagickError) {
        guard status == MagickTrue else { throw self.takeError(code, function) }
    }

    /// Reads and clears the wand's recorded error, as the error of `function`.
    private func takeError(_ code: MagickError.Code, _ function: String) -> MagickError {
        let (severity, message) = self.takeException()
        return MagickError(code: code, function: function, severity: severity, message: message)
    }

    /// Reads and clears the wand's worst recorded exception.
    /// The corresponding C functions are `MagickGetException`, `MagickRelinquishMemory` and `MagickClearException`.
    private func takeException() -> (severity: UInt32, message: String) {
        var severity = UndefinedException
        let message: String
        if let text = MagickGetException(self.handle, &severity) {
            message = String(cString: text)
            _ = MagickRelinquishMemory(text)
        } else {
            message = ""
        }
        _ = MagickClearException(self.handle)
        return (severity.rawValue, message)
    }
}
