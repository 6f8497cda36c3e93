import CLibRaw
import ChuteCatalog

/// Owns one `libraw_data_t` that has opened a camera RAW file held in memory (DNG, CR2, CR3, NEF, ARW, RAF, ORF,
/// RW2), and turns its raw sensor data into an image.
///
/// Opening parses the file's headers only: ``size`` and ``rawSize`` are known before any pixel memory is taken.
/// ``develop()`` then unpacks the sensor data and processes it the way `dcraw -w -o 1 -4 -g 2.4 12.92` would, with
/// these settings, chosen to give what the camera showed:
/// - the camera's white balance as shot (`use_camera_wb`), or LibRaw's daylight balance when the file has none;
/// - sRGB primaries (`output_color` 1) and the sRGB transfer curve (`gamm` 1/2.4, toe slope 12.92), so the output
///   needs no colour profile;
/// - 16 bits per channel (`output_bps`), so a 16-bit target (PNG, TIFF) keeps the precision; 8-bit targets reduce;
/// - LibRaw's defaults otherwise: AHD demosaicing, clipped highlights, and its automatic brightness (the brightest
///   1% of pixels saturate, as in dcraw).
/// The image comes out turned upright by the orientation the camera recorded (LibRaw's `flip`, applied by
/// `libraw_dcraw_make_mem_image`).
///
/// The corresponding C functions are `libraw_init`, `libraw_open_buffer` and `libraw_close`.
///
/// - Important: LibRaw reads the caller's bytes without copying them, so the bytes must outlive the processor:
///   create, use and free it inside one `withUnsafeBytes` scope. It is not thread-safe; Chute links `libraw_r`,
///   whose separate processors may run on separate threads.
struct RawProcessor: ~Copyable {
    private let data: UnsafeMutablePointer<libraw_data_t>
    /// Where the data-error callback records the first problem LibRaw met in the sensor data: the file offset, -1
    /// for an unexpected end of file, or `Int64.min` for none.
    private let dataError: UnsafeMutablePointer<Int64>

    /// LibRaw's release, such as `0.20.2`. The corresponding C function is `libraw_version`.
    static var version: String { String(cString: libraw_version()) }

    /// The largest allocation LibRaw allows itself for raw data when no memory limit is given, in MiB
    /// (`LIBRAW_MAX_ALLOC_MB_DEFAULT`).
    static let defaultMemoryMegabytes: Int64 = 2048

    /// Parses a camera RAW file's headers.
    ///
    /// - Parameters:
    ///   - bytes: the whole file; it must stay valid and unchanged for the processor's lifetime.
    ///   - memoryLimit: the job's memory limit in bytes: LibRaw refuses raw data that would need more (its
    ///     `max_raw_memory_mb`, never raised above LibRaw's own default of 2 GiB).
    /// - Throws: ``LibRawError`` when LibRaw does not recognise the file or finds no raw image in it.
    init(opening bytes: UnsafeRawBufferPointer, memoryLimit: Int64?) throws(LibRawError) {
        guard let data = libraw_init(0) else {
            throw LibRawError(function: "libraw_init", status: LIBRAW_UNSUFFICIENT_MEMORY.rawValue)
        }
        let dataError = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
        dataError.initialize(to: .min)
        // LibRaw's default callbacks print to standard error; the data error is reported with the job instead, and
        // an allocation that fails also fails the call, whose status says so.
        libraw_set_dataerror_handler(data, Self.recordDataError, dataError)
        libraw_set_memerror_handler(data, Self.ignoreMemoryError, nil)
        data.pointee.params.use_camera_wb = 1
        data.pointee.params.output_color = 1
        data.pointee.params.output_bps = 16
        data.pointee.params.gamm.0 = 1 / 2.4
        data.pointee.params.gamm.1 = 12.92
        let megabytes = min(Self.defaultMemoryMegabytes, (memoryLimit ?? .max) >> 20)
        data.pointee.params.max_raw_memory_mb = UInt32(max(1, megabytes))

        // libraw_open_buffer takes a mutable pointer but only reads through it.
        let status = libraw_open_buffer(data, UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count)
        guard status == LIBRAW_SUCCESS.rawValue else {
            var error = LibRawError(function: "libraw_open_buffer", status: status)
            // A file whose headers LibRaw parsed (it found a camera maker) but that holds no raw image it can decode:
            // a stripped file, or a format variant LibRaw does not know. The camera itself is not named, as no
            // metadata value goes into a sidecar.
            if data.pointee.idata.make.0 != 0 {
                error.message += " (a camera RAW file, but LibRaw finds no raw image in it that it can decode)"
            }
            libraw_close(data)
            dataError.deallocate()
            throw error
        }
        self.data = data
        self.dataError = dataError
    }

    deinit {
        libraw_close(self.data)
        self.dataError.deallocate()
    }

    /// The size of the developed image, before it is turned upright (`sizes.width` × `sizes.height`).
    var size: (width: Int, height: Int) {
        (Int(self.data.pointee.sizes.width), Int(self.data.pointee.sizes.height))
    }

    /// The size of the sensor data (`sizes.raw_width` × `sizes.raw_height`), which can be larger than ``size``.
    var rawSize: (width: Int, height: Int) {
        (Int(self.data.pointee.sizes.raw_width), Int(self.data.pointee.sizes.raw_height))
    }

    /// Unpacks the sensor data and develops it into an upright 16-bit sRGB image.
    ///
    /// The corresponding C functions are `libraw_unpack`, `libraw_dcraw_process` and `libraw_dcraw_make_mem_image`.
    ///
    /// - Throws: ``LibRawError`` with LibRaw's message when a call fails, or when LibRaw met damaged or cut-short
    ///   sensor data: it fills such data in and carries on, and an image that looks whole but is not would be
    ///   worse than a failed job.
    func develop() throws(LibRawError) -> DevelopedRawImage {
        try LibRawError.check(libraw_unpack(self.data), "libraw_unpack")
        try self.checkDataError("libraw_unpack")
        try LibRawError.check(libraw_dcraw_process(self.data), "libraw_dcraw_process")
        try self.checkDataError("libraw_dcraw_process")
        var status: Int32 = 0
        guard let image = libraw_dcraw_make_mem_image(self.data, &status) else {
            throw LibRawError(function: "libraw_dcraw_make_mem_image", status: status)
        }
        return DevelopedRawImage(takingOwnershipOf: image)
    }

    private func checkDataError(_ function: String) throws(LibRawError) {
        let offset = self.dataError.pointee
        guard offset != .min else { return }
        let message =
            offset < 0 ? "unexpected end of file in the raw data" : "damaged raw data near byte offset \(offset)"
        throw LibRawError(function: function, status: LIBRAW_DATA_ERROR.rawValue, message: message)
    }

    /// Keeps the first data error that LibRaw reports (`data_callback`); `context` is the processor's record.
    private static let recordDataError:
        @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Int32) -> Void =
            { context, _, offset in
                guard let record = context?.assumingMemoryBound(to: Int64.self), record.pointee == .min else { return }
                record.pointee = Int64(offset)
            }

    /// Replaces LibRaw's memory-error callback, which prints; the failed call's status reports the error.
    private static let ignoreMemoryError:
        @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Void = { _, _, _ in }
}

/// Owns one developed image that LibRaw allocated (`libraw_processed_image_t`): upright, 8 or 16 bits per channel,
/// one (grey) or three (RGB) channels, rows packed without padding.
///
/// The corresponding C function is `libraw_dcraw_clear_mem`.
struct DevelopedRawImage: ~Copyable {
    private let image: UnsafeMutablePointer<libraw_processed_image_t>

    /// Adopts an image that `libraw_dcraw_make_mem_image` returned.
    init(takingOwnershipOf image: UnsafeMutablePointer<libraw_processed_image_t>) {
        self.image = image
    }

    deinit {
        libraw_dcraw_clear_mem(self.image)
    }

    var width: Int { Int(self.image.pointee.width) }
    var height: Int { Int(self.image.pointee.height) }
    /// 1 for grey, 3 for RGB.
    var channels: Int { Int(self.image.pointee.colors) }
    /// 8 or 16; 16-bit samples are in the machine's byte order.
    var bitsPerChannel: Int { Int(self.image.pointee.bits) }

    /// Runs `body` with the pixels, which stay valid only during the call.
    func withUnsafePixels<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        // `data` is a flexible array member (`unsigned char data[1]`), which Swift imports as a one-byte tuple: the
        // pixels start at its offset and run for `data_size` bytes.
        let offset = MemoryLayout<libraw_processed_image_t>.offset(of: \.data)!
        let start = UnsafeRawPointer(self.image) + offset
        return try body(UnsafeRawBufferPointer(start: start, count: Int(self.image.pointee.data_size)))
    }
}
