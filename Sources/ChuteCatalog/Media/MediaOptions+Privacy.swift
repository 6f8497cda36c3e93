import ChuteCore

/// What an audio target does with the source's cover pictures: the rule key `coverArt`.
package enum CoverArtPolicy: String, Sendable, Hashable, CaseIterable, OptionValueConvertible {
    case keep, drop
}

extension MediaOptions {
    /// `coverArt`: keep or drop an audio file's cover pictures.
    package static let coverArt = RuleOption<CoverArtPolicy>(
        "coverArt",
        .choice(CoverArtPolicy.allCases.map(\.rawValue)),
        summary: "Whether the cover pictures (JPEG or PNG) of the source go into an audio target that holds them "
            + "(mp3, m4a, flac), whatever `metadata` says.",
        default: "`keep`",
        stage: .streams,
        show: { "coverArt \($0.rawValue)" }
    )
}
