import CMagickWand

/// The process-wide ImageMagick runtime: started once, with Chute's limits applied on top of the system policy.
///
/// `MagickWandGenesis` sets up state that every wand in the process shares: the coder registry, the resource limits
/// read from `/etc/ImageMagick-6/policy.xml` and the OpenMP thread count. The resource limits set here are
/// process-global as well, and ImageMagick only ever lets a program lower a limit that the policy sets.
///
/// - Important: ``shared`` is the only caller of `MagickWandGenesis`. Swift runs a `static let` initialiser exactly
///   once, thread-safely, the first time it is read, so every wand-creating path reads ``shared`` first.
///   `MagickWandTerminus` is never called: a worker process simply exits, and terminating while another thread still
///   held a wand would free state under it.
struct MagickLibrary: Sendable {
    /// The runtime, started on first use.
    static let shared = MagickLibrary()

    /// The most frames (animation frames, pages) that an input may have.
    static let frameLimit = 100

    /// The ImageMagick release, as `MagickGetVersion` reports it.
    let version: String
    /// The widest image the policy allows, in pixels.
    let widthLimit: Int
    /// The tallest image the policy allows, in pixels.
    let heightLimit: Int
    /// The most pixels one image may have according to the policy.
    let areaLimit: Int
    /// The delegate libraries behind the coders Chute uses, as those coders report them (the versions ImageMagick
    /// was built with), keyed by library name.
    let delegateVersions: [String: String]

    private init() {
        MagickWandGenesis()
        // Longer image lists fail in the coder with a ResourceLimitError, during ping as well as during a full read,
        // instead of allocating one image per frame of a frame bomb. A list-length limit of n admits n - 1 images
        // (measured with 6.9.11: at 100, a 100-frame GIF fails and a 99-frame one reads).
        _ = MagickSetResourceLimit(ListLengthResource, MagickSizeType(Self.frameLimit + 1))

        var length = 0
        self.version = String(cString: MagickGetVersion(&length))
        self.widthLimit = Self.clampedLimit(WidthResource)
        self.heightLimit = Self.clampedLimit(HeightResource)
        self.areaLimit = Self.clampedLimit(AreaResource)
        self.delegateVersions = Self.readDelegateVersions()
    }

    /// Sets how many OpenMP threads one conversion may use.
    ///
    /// ImageMagick passes this limit to every parallel loop it runs, whichever thread runs it, and never raises it
    /// above the policy's or the machine's thread count.
    /// The corresponding C function is `MagickSetResourceLimit` with `ThreadResource`.
    ///
    /// - Parameter count: the number of threads, at least 1.
    func limitThreads(to count: Int) {
        precondition(count >= 1, "a conversion needs at least one thread")
        _ = MagickSetResourceLimit(ThreadResource, MagickSizeType(count))
    }

    /// Whether the coder decodes from memory itself.
    ///
    /// `MagickReadImageBlob` writes the bytes to a temporary file for a coder that cannot (in 6.9.11: EXR, whose
    /// library wants a file name), but `MagickPingImageBlob` does not, so such a coder can only be read in full.
    /// The corresponding C functions are `GetMagickInfo` and `GetMagickBlobSupport`.
    ///
    /// - Parameter coder: an ImageMagick coder name such as `EXR`.
    func decodesFromMemory(_ coder: String) -> Bool {
        Self.withExceptionInfo { exception in
            guard let info = GetMagickInfo(coder, exception) else { return false }
            return GetMagickBlobSupport(info) == MagickTrue
        }
    }

    /// Returns a resource limit as an `Int`; "unlimited" is `MagickResourceInfinity`, larger than any `Int`.
    /// The corresponding C function is `MagickGetResourceLimit`.
    private static func clampedLimit(_ resource: ResourceType) -> Int {
        Int(clamping: MagickGetResourceLimit(resource))
    }

    /// Asks each coder Chute uses for the version of the library behind it.
    /// The corresponding C function is `GetMagickInfo`.
    private static func readDelegateVersions() -> [String: String] {
        let coders = [
            "JPEG": "libjpeg", "PNG": "libpng", "WEBP": "libwebp", "HEIC": "libheif", "TIFF": "libtiff",
            "JP2": "OpenJPEG", "EXR": "OpenEXR",
        ]
        return Self.withExceptionInfo { exception in
            var versions: [String: String] = [:]
            for (coder, library) in coders {
                guard let info = GetMagickInfo(coder, exception), let version = info.pointee.version else { continue }
                versions[library] = String(cString: version)
            }
            return versions
        }
    }

    /// Runs `body` with a fresh `ExceptionInfo`, destroyed afterwards.
    /// The corresponding C functions are `AcquireExceptionInfo` and `DestroyExceptionInfo`.
    private static func withExceptionInfo<Result>(
        _ body: (UnsafeMutablePointer<ExceptionInfo>) -> Result
    ) -> Result {
        // AcquireExceptionInfo aborts the process rather than return NULL when memory runs out.
        let exception: UnsafeMutablePointer<ExceptionInfo> = AcquireExceptionInfo()
        defer { _ = DestroyExceptionInfo(exception) }
        return body(exception)
    }
}
