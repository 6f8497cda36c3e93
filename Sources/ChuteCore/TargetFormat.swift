/// The broad kind of a media file, as sniffed from its content.
///
/// A PDF is a category of its own, not a `document`: the PDF engine reads it, while documents (which the document
/// engine writes as PDF) are edited text.
package enum MediaCategory: String, Sendable, Hashable, CaseIterable, Codable {
    case image, video, audio, document, pdf
}

/// The name of an engine, which is also its queue lane, with its own concurrency limit (`settings.concurrency`), and
/// the `--engine` of its worker processes. Each engine module declares its own (`EngineKind.image` in ChuteMagick) and
/// describes it in an ``EngineDescriptor``.
package struct EngineKind: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    package let rawValue: String

    package init(rawValue: String) {
        self.rawValue = rawValue
    }

    package init(from decoder: any Decoder) throws {
        self.rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(self.rawValue)
    }

    package var description: String { self.rawValue }
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
    /// For a pseudo-format such as `same`, which keeps each file's own format: the format written for each sniffed
    /// input type; empty for a real format.
    package let sameAsInput: [MediaType: TargetFormat]
    /// The engines other than ``engine`` that write it from inputs of these categories (the video engine writes
    /// `jpg` from a video: a poster frame), filled in by ``EngineRegistry`` from each engine's
    /// ``EngineDescriptor/alsoWrites``.
    package internal(set) var writers: [MediaCategory: EngineKind] = [:]

    package init(
        name: String,
        aliases: [String] = [],
        category: MediaCategory,
        engine: EngineKind,
        coder: String,
        holdsSeveralFrames: Bool = false,
        sameAsInput: [MediaType: TargetFormat] = [:]
    ) {
        self.name = name
        self.aliases = aliases
        self.category = category
        self.engine = engine
        self.coder = coder
        self.holdsSeveralFrames = holdsSeveralFrames
        self.sameAsInput = sameAsInput
    }

    /// Whether the format is decided per job from the input's content (`to: same`).
    package var followsInput: Bool { !self.sameAsInput.isEmpty }

    /// The format a job writes: this one, or for a format that follows the input, the format of the input's own
    /// type.
    ///
    /// - Parameter type: the type sniffed from the input's content.
    /// - Returns: the format, or `nil` when the format follows the input and the engine does not write its type.
    package func resolved(for type: MediaType?) -> TargetFormat? {
        guard self.followsInput else { return self }
        return type.flatMap { self.sameAsInput[$0] }
    }

    /// The engine that writes it from an input sniffed as `type`: the one that writes it from the type's category
    /// (``writers``), else its own engine.
    package func engine(reading type: MediaType?) -> EngineKind {
        type?.category.flatMap { self.writers[$0] } ?? self.engine
    }

    package var description: String { self.name }
}
