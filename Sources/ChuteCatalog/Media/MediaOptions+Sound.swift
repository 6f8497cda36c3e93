import ChuteCore

extension MediaOptions {
    /// The slowest and fastest `speed`.
    package static let speedRange = 0.25...4.0

    /// `speed`: play the video and its sound faster or slower.
    package static let speed = RuleOption<Double>(
        "speed",
        .number(NumberRange(from: MediaOptions.speedRange.lowerBound, upTo: MediaOptions.speedRange.upperBound)),
        summary: "Play faster (`2`) or slower (`0.5`), from 0.25 to 4: the picture's times are divided by it (frames "
            + "that land on the same tick are dropped, none is repeated) and the sound is sped up without changing "
            + "its pitch (FFmpeg's `atempo`).",
        default: "`1`",
        stage: .resize,
        show: { "speed \(OptionValue.number($0))×" }
    )

    /// `mute`: write a video without sound.
    package static let mute = RuleOption<Bool>(
        "mute",
        .flag,
        summary: "Write the video without any audio stream.",
        default: "`false`",
        stage: .streams,
        show: { $0 ? "mute" : "with sound" }
    )

    /// `loudness`: normalise the sound to an integrated loudness.
    package static let loudness = RuleOption<Double>(
        "loudness",
        .number(NumberRange(from: -70, upTo: -5)),
        summary: "Normalise the sound to this integrated loudness in LUFS (EBU R128), such as `-16` (podcasts) or "
            + "`-23` (broadcast): the source is measured first with FFmpeg's `ebur128`, then one gain is applied to "
            + "it all, so its dynamics are kept. Silence is left as it is.",
        stage: .encode,
        show: { "loudness \(OptionValue.number($0)) LUFS" }
    )
}
