/// The broad kind of a media file, as sniffed from its content.
package enum MediaCategory: String, Sendable, Hashable, CaseIterable, Codable {
    case image, video, audio, document
}

/// The engine that performs a conversion; each has its own queue lane and concurrency limit.
package enum EngineKind: String, Sendable, Hashable, CaseIterable, Codable {
    case image, video, audio
}

/// A format that a rule can name in `to:`. Each engine lists the formats it writes in its ``EngineDescriptor``;
/// ``EngineRegistry/format(named:)`` looks them up.
package struct TargetFormat: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The canonical name, also the output file extension (`jpg`, `mp4`, …).
    package let name: String
    /// Other names a rule may use, lower-case (`jpeg` for `jpg`).
    package let aliases: [String]
    /// What kind of file it is.
    package let category: MediaCategory
    /// The engine that writes it.
    package let engine: EngineKind
    /// The ImageMagick coder or FFmpeg muxer name that writes it.
    package let coder: String
    /// Whether the format stores several frames (animation, pages); single-frame formats get the first frame only.
    package let holdsSeveralFrames: Bool

    package init(
        name: String,
        aliases: [String] = [],
        category: MediaCategory,
        engine: EngineKind,
        coder: String,
        holdsSeveralFrames: Bool = false
    ) {
        self.name = name
        self.aliases = aliases
        self.category = category
        self.engine = engine
        self.coder = coder
        self.holdsSeveralFrames = holdsSeveralFrames
    }

    package var description: String { self.name }
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
