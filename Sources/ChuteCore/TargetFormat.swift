/// The broad kind of a media file, as sniffed from its content.
package enum MediaCategory: String, Sendable, Hashable, CaseIterable, Codable {
    case image, video, audio, document
}

/// The engine that performs a conversion; each has its own queue lane and concurrency limit.
package enum EngineKind: String, Sendable, Hashable, CaseIterable, Codable {
    case image, video, audio
}

/// A target format that a rule can name in `to:`.
package struct TargetFormat: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The canonical name, also the output file extension (`jpg`, `mp4`, …).
    package let name: String
    /// What kind of file it is.
    package let category: MediaCategory
    /// The engine that writes it.
    package let engine: EngineKind
    /// The ImageMagick coder or FFmpeg muxer name that writes it.
    package let coder: String

    package var description: String { self.name }

    /// Whether the format stores several frames (animation, pages); single-frame formats get the first frame only.
    package var holdsSeveralFrames: Bool { ["gif", "webp", "tiff"].contains(self.name) }

    /// Looks up a format by name or alias, case-insensitively (`JPEG` → `jpg`, `tif` → `tiff`).
    ///
    /// - Returns: the format, or `nil` when Chute cannot write it.
    package static func named(_ name: String) -> TargetFormat? {
        let key = name.lowercased()
        return all.first { $0.name == key } ?? aliases[key].flatMap { alias in all.first { $0.name == alias } }
    }

    /// Every format Chute can be asked for, in the order `chute check` lists them.
    package static let all: [TargetFormat] = [
        .init(name: "jpg", category: .image, engine: .image, coder: "JPEG"),
        .init(name: "png", category: .image, engine: .image, coder: "PNG"),
        .init(name: "webp", category: .image, engine: .image, coder: "WEBP"),
        .init(name: "heic", category: .image, engine: .image, coder: "HEIC"),
        .init(name: "tiff", category: .image, engine: .image, coder: "TIFF"),
        .init(name: "gif", category: .image, engine: .image, coder: "GIF"),
        .init(name: "bmp", category: .image, engine: .image, coder: "BMP"),
        .init(name: "mp4", category: .video, engine: .video, coder: "mp4"),
        .init(name: "mkv", category: .video, engine: .video, coder: "matroska"),
        .init(name: "webm", category: .video, engine: .video, coder: "webm"),
        .init(name: "mov", category: .video, engine: .video, coder: "mov"),
        .init(name: "mp3", category: .audio, engine: .audio, coder: "mp3"),
        .init(name: "m4a", category: .audio, engine: .audio, coder: "ipod"),
        .init(name: "opus", category: .audio, engine: .audio, coder: "opus"),
        .init(name: "ogg", category: .audio, engine: .audio, coder: "ogg"),
        .init(name: "flac", category: .audio, engine: .audio, coder: "flac"),
        .init(name: "wav", category: .audio, engine: .audio, coder: "wav"),
    ]

    private static let aliases: [String: String] = [
        "jpeg": "jpg", "tif": "tiff", "heif": "heic", "aac": "m4a", "matroska": "mkv", "vorbis": "ogg",
    ]
}

extension EngineKind {
    /// The kinds of sniffed content this engine opens: the image engine decodes images; the video and audio engines
    /// open video and audio containers (an audio target may come from a video's sound). Anything else, and content
    /// that is not recognised, is refused as `unsupportedInput` before a decoder sees it.
    package var readableCategories: Set<MediaCategory> {
        switch self {
        case .image: [.image]
        case .video, .audio: [.video, .audio]
        }
    }

    /// Whether this engine opens content sniffed as `type`.
    package func reads(_ type: MediaType) -> Bool {
        type.category.map { self.readableCategories.contains($0) } ?? false
    }
}
