import CMagickWand

/// Owns the bytes of an encoded image that `MagickGetImageBlob` or `MagickGetImagesBlob` returned.
///
/// The memory is ImageMagick's and goes back through `MagickRelinquishMemory`.
struct MagickBlob: ~Copyable {
    private let start: UnsafeMutablePointer<UInt8>
    /// The number of bytes.
    let count: Int

    /// Adopts `count` bytes at `start`, which ImageMagick allocated.
    init(takingOwnershipOf start: UnsafeMutablePointer<UInt8>, count: Int) {
        self.start = start
        self.count = count
    }

    deinit {
        _ = MagickRelinquishMemory(self.start)
    }

    /// Runs `body` with the bytes, which must not escape it.
    func withUnsafeBytes<Result, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> Result) throws(E) -> Result {
        try body(UnsafeRawBufferPointer(start: self.start, count: self.count))
    }
}
