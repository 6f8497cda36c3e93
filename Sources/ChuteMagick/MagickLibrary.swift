import CMagickWand
import ChuteCore
import Glibc
import SystemPackage

/// The process-wide ImageMagick runtime: started once, with Chute's limits applied on top of the system policy.
///
/// `MagickWandGenesis` sets up state that every wand in the process shares: the coder registry, the resource limits
/// read from `/etc/ImageMagick-6/policy.xml` and the OpenMP thread count. The resource limits set here are
/// process-global as well, and ImageMagick only ever lets a program lower a limit that a policy sets: Chute's own
/// policy (``resourceCeilings``), read first, puts the width, height, area, memory and map ceilings far above any
/// job's, so that the job limits (`maxImageSide`, `maxPixels`, `memoryLimit`) decide, set for each job by
/// ``apply(_:)``. The system policy's other rules (coders and paths refused) still hold.
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
    /// The delegate libraries behind the coders Chute uses, as those coders report them (the versions ImageMagick
    /// was built with), keyed by library name.
    let delegateVersions: [String: String]

    /// Chute's resource policy: ceilings above any job limit, for width, height, area (pixels), memory and map
    /// (bytes). ImageMagick reads the policy files of `MAGICK_CONFIGURE_PATH` before the system's, and the first
    /// value of a resource wins.
    static let resourceCeilings = """
        <?xml version="1.0" encoding="UTF-8"?>
        <policymap>
          <policy domain="resource" name="width" value="100000000"/>
          <policy domain="resource" name="height" value="100000000"/>
          <policy domain="resource" name="area" value="1000000000000"/>
          <policy domain="resource" name="memory" value="1000000000000"/>
          <policy domain="resource" name="map" value="1000000000000"/>
        </policymap>

        """

    private init() {
        // The policy file is read once, by the genesis: it lives only that long, in a folder of its own.
        let folder = Self.writeResourceCeilings()
        let configurePath = getenv("MAGICK_CONFIGURE_PATH").map { String(cString: $0) }
        if let folder {
            setenv("MAGICK_CONFIGURE_PATH", folder.string + (configurePath.map { ":" + $0 } ?? ""), 1)
        }
        MagickWandGenesis()
        if let folder {
            if let configurePath {
                setenv("MAGICK_CONFIGURE_PATH", configurePath, 1)
            } else {
                unsetenv("MAGICK_CONFIGURE_PATH")
            }
            unlink(folder.appending("policy.xml").string)
            rmdir(folder.string)
        }
        // Longer image lists fail in the coder with a ResourceLimitError, during ping as well as during a full read,
        // instead of allocating one image per frame of a frame bomb. A list-length limit of n admits n - 1 images
        // (measured with 6.9.11: at 100, a 100-frame GIF fails and a 99-frame one reads).
        _ = MagickSetResourceLimit(ListLengthResource, MagickSizeType(Self.frameLimit + 1))

        var length = 0
        self.version = String(cString: MagickGetVersion(&length))
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

    /// The image limits of one job, as ImageMagick holds them: what the job asks for, or less where a policy that
    /// Chute's ceilings could not override caps it.
    struct ImageLimits {
        var side: Int
        var pixels: Int
        /// Whether ImageMagick capped the side or the pixels below what the job asked for.
        var capped: Bool
    }

    /// Sets the job's limits as ImageMagick's resource limits, process-wide: width and height from `maxImageSide`,
    /// the area (the pixels kept in memory) from `maxPixels`, memory and map (the pixel cache's bytes) from
    /// `memoryLimit`. The corresponding C functions are `MagickSetResourceLimit` and `MagickGetResourceLimit`.
    ///
    /// - Returns: the width and height limit and the pixel limit in force.
    func apply(_ limits: JobLimits) -> ImageLimits {
        let side = limits.imageSide ?? JobLimits.defaultImageSide
        let pixels = limits.pixels ?? JobLimits.defaultImagePixels
        _ = MagickSetResourceLimit(WidthResource, MagickSizeType(side))
        _ = MagickSetResourceLimit(HeightResource, MagickSizeType(side))
        _ = MagickSetResourceLimit(AreaResource, MagickSizeType(pixels))
        if let memory = limits.memory {
            _ = MagickSetResourceLimit(MemoryResource, MagickSizeType(memory))
            _ = MagickSetResourceLimit(MapResource, MagickSizeType(memory))
        }
        let (heldSide, heldPixels) = (self.sideLimit, self.pixelLimit)
        return ImageLimits(side: heldSide, pixels: heldPixels, capped: heldSide < side || heldPixels < pixels)
    }

    /// The width and height limit in force (``apply(_:)``), in pixels.
    var sideLimit: Int { min(Self.clampedLimit(WidthResource), Self.clampedLimit(HeightResource)) }
    /// The pixel limit in force (``apply(_:)``).
    var pixelLimit: Int { Self.clampedLimit(AreaResource) }

    /// Writes ``resourceCeilings`` as `policy.xml` in a new private folder under `TMPDIR` (or `/tmp`).
    ///
    /// - Returns: the folder, or `nil` when it cannot be written (the system policy's limits then cap the jobs').
    private static func writeResourceCeilings() -> FilePath? {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(base)/chute-magick-XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
        }
        guard let created else { return nil }
        let folder = FilePath(created)
        do {
            let file = try FileDescriptor.open(
                folder.appending("policy.xml"),
                .writeOnly,
                options: [.create, .exclusiveCreate, .closeOnExec],
                permissions: .ownerReadWrite
            )
            defer { try? file.close() }
            _ = try file.writeAll(Self.resourceCeilings.utf8)
            return folder
        } catch {
            unlink(folder.appending("policy.xml").string)
            rmdir(folder.string)
            return nil
        }
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
