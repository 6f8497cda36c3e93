// swift-tools-version: 6.2
import PackageDescription

/// Settings shared by every target of ours: Swift 6 mode comes from `swiftLanguageModes`; these add the upcoming
/// features the style guide asks for and turn our own warnings into errors.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .treatAllWarnings(as: .error),
]

let package = Package(
    name: "chute",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "chute", targets: ["chute"]),
        // One worker executable per engine family, installed beside `chute` (or in ../lib/chute): each links only its
        // own C libraries, so the daemon and the other workers never load them.
        .executable(name: "chute-image-worker", targets: ["chute-image-worker"]),
        .executable(name: "chute-media-worker", targets: ["chute-media-worker"]),
        .executable(name: "chute-pdf-worker", targets: ["chute-pdf-worker"]),
        .executable(name: "chute-document-worker", targets: ["chute-document-worker"]),
    ],
    dependencies: [
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        // Deque: the job events' per-subscriber queues, taken from the front.
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        // The status API's server; its traits (swift-configuration, Foundation's form coders) are not used.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        // The status API's `/metrics`, in Prometheus's text format.
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // Uploads sent as `multipart/form-data` (curl -F, a browser's form), parsed as their chunks arrive.
        .package(url: "https://github.com/vapor/multipart-kit.git", from: "4.7.1"),
        // The job store in a PostgreSQL database (settings.store: postgres://…), for agents sharing one queue.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        // The TLS of the PostgreSQL store's own connection (PostgresNIO's pool takes a configuration, one connection
        // a context).
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        // C libraries, each behind a system-library target (module map + shim header only).
        .systemLibrary(
            name: "CMagickWand",
            pkgConfig: "MagickWand-6.Q16",
            providers: [.apt(["libmagickwand-6.q16-dev"])]
        ),
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat",
            providers: [
                .apt([
                    "libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev",
                    "libavfilter-dev",
                ])
            ]
        ),
        // Read directly only for what ImageMagick 6's HEIC coder drops: the colour profile and the raw EXIF item.
        .systemLibrary(
            name: "CHeif",
            pkgConfig: "libheif",
            providers: [.apt(["libheif-dev"])]
        ),
        // LibRaw, linked directly (not as ImageMagick's delegate program), to decode camera RAW files. `libraw_r` is
        // its thread-safe build.
        .systemLibrary(
            name: "CLibRaw",
            pkgConfig: "libraw_r",
            providers: [.apt(["libraw-dev"])]
        ),
        // libjpeg-turbo's TurboJPEG API, for rotating a JPEG's DCT blocks without decoding them (lossless).
        .systemLibrary(
            name: "CTurboJPEG",
            pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"])]
        ),
        // opencore-amrnb's AMR-NB encoder: Debian's FFmpeg links no AMR encoder, so Chute feeds this one itself and
        // writes its frames through FFmpeg's `amr` muxer.
        .systemLibrary(
            name: "COpenCoreAMRNB",
            pkgConfig: "opencore-amrnb",
            providers: [.apt(["libopencore-amrnb-dev"])]
        ),
        // LibreOfficeKit's C header: the document engine loads LibreOffice into its worker process with it (dlopen;
        // nothing to link).
        .systemLibrary(
            name: "CLibreOfficeKit",
            providers: [.apt(["libreofficekit-dev"])]
        ),
        // qpdf's C API, for the PDF engine: pages, rewriting, object streams, decryption (docs/decisions.md).
        .systemLibrary(
            name: "CQPDF",
            pkgConfig: "libqpdf",
            providers: [.apt(["libqpdf-dev"])]
        ),
        // poppler's GLib interface and cairo, for the PDF engine's pages rendered as images (docs/decisions.md).
        .systemLibrary(
            name: "CPoppler",
            pkgConfig: "poppler-glib",
            providers: [.apt(["libpoppler-glib-dev"])]
        ),
        // fontconfig: which characters the installed fonts cover, for the document engine's warning about text that
        // no font could draw.
        .systemLibrary(
            name: "CFontconfig",
            pkgConfig: "fontconfig",
            providers: [.apt(["libfontconfig-dev"])]
        ),
        // Linux calls that Swift cannot import directly (variadic `syscall`/`prctl`, flexible array members).
        .target(name: "CChuteLinux"),

        .target(
            name: "ChuteCore",
            dependencies: [
                "CChuteLinux",
                .product(name: "Yams", package: "Yams"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "ChuteWatch",
            dependencies: [
                "ChuteCore", "CChuteLinux",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSettings
        ),
        // What each engine writes and takes (formats, options, the checks of a rule), in Swift alone: the daemon reads
        // rules with it without linking any engine's C libraries.
        .target(
            name: "ChuteCatalog",
            dependencies: ["ChuteCore"],
            swiftSettings: strictSettings
        ),
        // Pure Swift: reads and edits the metadata segments and chunks of JPEG, PNG and WebP files.
        .target(
            name: "ChuteMetadata",
            dependencies: ["ChuteCore"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "ChuteMagick",
            dependencies: [
                "ChuteCore", "ChuteCatalog", "ChuteMetadata", "CMagickWand", "CHeif", "CLibRaw", "CTurboJPEG",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "ChuteFFmpeg",
            dependencies: [
                "ChuteCore", "ChuteCatalog", "CFFmpeg", "COpenCoreAMRNB", "CChuteLinux",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "ChuteDocuments",
            dependencies: [
                "ChuteCore", "ChuteCatalog", "CLibreOfficeKit", "CFontconfig", "CPoppler",
                .product(name: "SystemPackage", package: "swift-system"),
                // SHA-1/SHA-2 and AES-CBC, for the password encryption of DOCX, XLSX and PPTX files.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "ChutePDF",
            // ChuteMagick encodes rendered pages as JPEG and WebP, and decodes the images laid on pages.
            dependencies: [
                "ChuteCore", "ChuteCatalog", "ChuteMagick", "CQPDF", "CPoppler",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "ChuteRuntime",
            dependencies: [
                "ChuteCore", "CChuteLinux",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strictSettings
        ),
        // The job store in a PostgreSQL database (PostgresNIO), beside the SQLite journal of ChuteRuntime.
        .target(
            name: "ChutePostgres",
            dependencies: [
                "ChuteCore", "ChuteRuntime",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSettings
        ),
        // The status API (Hummingbird, on a Unix socket), its Prometheus metrics, and the CLI's client for it (NIO's
        // HTTP/1 pipeline); the notifier, which posts to webhooks and ntfy topics through the same client (https://
        // through URLSession).
        .target(
            name: "ChuteHTTP",
            dependencies: [
                "ChuteCore", "ChuteRuntime",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "ChuteApp",
            dependencies: [
                "ChuteCore", "ChuteCatalog", "ChuteWatch", "ChuteRuntime", "ChutePostgres", "ChuteHTTP", "CChuteLinux",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "chute",
            dependencies: [
                "ChuteApp", "ChuteCatalog", "ChuteCore", "ChuteHTTP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // The worker side of the supervisor–worker protocol, shared by the worker executables below.
        .target(
            name: "ChuteWorker",
            dependencies: [
                "ChuteCore", "CChuteLinux",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "chute-image-worker",
            dependencies: ["ChuteCatalog", "ChuteMagick", "ChuteWorker"],
            swiftSettings: strictSettings
        ),
        // A worker that speaks the protocol for every engine with no C library behind it, for the runtime's unit
        // tests (ChuteRuntimeTests); never installed.
        .executableTarget(
            name: "chute-test-worker",
            dependencies: [
                "ChuteCatalog", "ChuteCore", "ChuteWorker", .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "chute-media-worker",
            dependencies: ["ChuteCatalog", "ChuteCore", "ChuteFFmpeg", "ChuteWorker"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "chute-pdf-worker",
            dependencies: ["ChuteCatalog", "ChutePDF", "ChuteWorker"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "chute-document-worker",
            dependencies: ["ChuteCatalog", "ChuteDocuments", "ChuteWorker"],
            swiftSettings: strictSettings
        ),

        // Benchmarks/pdf.sh: merges PDFs with the PDF engine's page appending, as a group's merge will.
        .executableTarget(
            name: "chute-pdf-merge",
            dependencies: ["ChutePDF"],
            path: "Benchmarks/PDFMerge",
            swiftSettings: strictSettings
        ),

        .target(
            name: "ChuteTestSupport",
            dependencies: [
                "ChuteCore",
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ChuteCoreTests",
            dependencies: ["ChuteCore", "ChuteCatalog", "ChuteApp", "ChuteMagick", "ChuteFFmpeg", "ChuteTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ChuteHTTPTests",
            dependencies: ["ChuteHTTP", "ChuteRuntime", "ChuteCore", .product(name: "NIOCore", package: "swift-nio")],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ChuteWatchTests",
            dependencies: [
                "ChuteWatch", "ChuteCore", "ChuteTestSupport", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ChuteMagickTests",
            dependencies: [
                "ChuteMagick", "ChuteCatalog", "ChuteMetadata", "ChuteApp", "ChuteCore", "ChuteTestSupport",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ChuteMetadataTests",
            dependencies: ["ChuteMetadata", "ChuteCore", "ChuteTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ChuteFFmpegTests",
            // Depends on the executable so that the corpus test can run each file through `chute convert`.
            dependencies: [
                "ChuteFFmpeg", "ChuteCatalog", "ChuteApp", "ChuteCore", "ChuteTestSupport", "chute",
                "chute-media-worker",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ChutePDFTests",
            dependencies: ["ChutePDF", "ChuteCatalog", "ChuteCore", "ChuteTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ChuteRuntimeTests",
            dependencies: [
                "ChuteRuntime", "ChutePostgres", "ChuteApp", "ChuteCatalog", "ChuteCore", "ChuteMagick", "ChuteFFmpeg",
                "ChuteTestSupport", "chute-test-worker",
                "CChuteLinux",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ChuteEndToEndTests",
            // Depends on the executables so that `swift test` builds `chute` and its workers, which these tests launch.
            dependencies: [
                "chute", "chute-image-worker", "chute-media-worker", "chute-pdf-worker", "chute-document-worker",
                "ChuteCatalog", "ChuteCore", "ChuteTestSupport", "CChuteLinux",
            ],
            swiftSettings: strictSettings
        ),
    ],
    swiftLanguageModes: [.v6]
)
