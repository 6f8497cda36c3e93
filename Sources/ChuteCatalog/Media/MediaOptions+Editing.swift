import ChuteCore

extension MediaOptions {
    /// `start`: where the output begins in the source, or where a poster frame or sticker is taken from a video.
    package static let start = RuleOption<String>(
        "start",
        .text(MediaTime.syntax),
        summary: "Begin the output this far into the source: seconds (`90`, `2.5`), `M:SS` / `H:MM:SS(.s)` "
            + "(`1:30`, `00:01:30.5`) or a duration (`2s`, `500ms`, `1.5m`). Exact (the video re-encoded) unless `trimExact: false`. From a video to `jpg`, "
            + "`png` or `webp`: the poster frame's time; to `gif` (or `webp` with `duration`): the sticker's start.",
        default: "the beginning; a poster: a representative frame of the first seconds",
        stage: .decode,
        show: { "start at \($0)" }
    )

    /// `end`: where the output ends in the source, exclusive.
    package static let end = RuleOption<String>(
        "end",
        .text(MediaTime.syntax),
        summary: "End the output at this time of the source (exclusive), written as for `start`. After `start`; not "
            + "with `duration`.",
        default: "the end",
        stage: .decode,
        check: { end, context in
            guard let end = MediaTime.seconds(end), let startText = context.options[MediaOptions.start],
                let start = MediaTime.seconds(startText), end <= start
            else { return nil }
            return OptionProblem(
                "'end' (\(OptionValue.number(end)) s) must come after 'start' (\(OptionValue.number(start)) s)"
            )
        },
        show: { "end at \($0)" }
    )

    /// `duration`: how long the output lasts, or how long a sticker made from a video lasts.
    package static let duration = RuleOption<String>(
        "duration",
        .text(MediaTime.syntax),
        summary: "Keep this much of the source from `start` (exclusive end), written as for `start`. Not with `end`. "
            + "From a video to `gif`, or to `webp` (which it makes animated): the sticker's length, at most 10 s; "
            + "the sticker loops forever, at most 512 px on its longest side (or the `width` and `height` box) and "
            + "15 frames a second, with a palette made for it.",
        default: "to the end; a sticker: 3 s",
        stage: .decode,
        check: { duration, context in
            if context.options[MediaOptions.end] != nil {
                return OptionProblem("set either 'end' or 'duration', not both", at: .key)
            }
            let seconds = MediaTime.seconds(duration)
            if seconds == 0 {
                return OptionProblem("'duration' must be more than 0")
            }
            if MediaOptions.frameFormats.contains(context.format.name), let seconds,
                seconds > MediaOptions.stickerSecondsCap
            {
                let cap = OptionValue.number(MediaOptions.stickerSecondsCap)
                return OptionProblem(
                    "a \(context.format.name) sticker lasts at most \(cap) s, found \(OptionValue.number(seconds))"
                )
            }
            return nil
        },
        show: { "lasting \($0)" }
    )

    /// `trimExact`: whether a trim cuts on the exact frame (re-encoding) or on keyframes (copying).
    package static let trimExact = RuleOption<Bool>(
        "trimExact",
        .flag,
        summary: "`true`: `start`/`end`/`duration` cut on the exact frame, re-encoding. `false`: the cut starts at the "
            + "keyframe at or before `start` and the packets are copied when nothing else changes them (the sidecar's "
            + "`trimStart` says where it really starts). Needs `start`, `end` or `duration`.",
        default: "`true`",
        stage: .decode,
        check: { _, context in
            let options = context.options
            guard options[MediaOptions.start] == nil, options[MediaOptions.end] == nil,
                options[MediaOptions.duration] == nil
            else { return nil }
            return OptionProblem("'trimExact' needs 'start', 'end' or 'duration'", at: .key)
        },
        show: { $0 ? "trim on the exact frame" : "trim on keyframes" }
    )

    /// What the rule keeps of the source's time, or `nil` when it keeps all of it.
    package static func trim(in options: ConversionOptions) -> (start: Double, end: Double?)? {
        let start = options[Self.start].flatMap(MediaTime.seconds)
        let end =
            options[Self.end].flatMap(MediaTime.seconds)
            ?? options[Self.duration].flatMap(MediaTime.seconds).map { (start ?? 0) + $0 }
        guard start != nil || end != nil else { return nil }
        return (start ?? 0, end)
    }
}

/// A time in a media file as a rule writes it: `90`, `2.5`, `1:30`, `00:01:30.5`, or a duration as every other
/// duration key takes it: `2s`, `500ms`, `1.5m`.
package enum MediaTime {
    /// The grammar, for the rules reader, the docs and the JSON Schema.
    package static let syntax = TextSyntax(
        name: "a time such as 90, 1:30, 00:01:30.5 or 2s",
        pattern: #"^(([0-9]+:){0,2}[0-9]+(\.[0-9]+)?|[0-9]*\.?[0-9]+ ?([mM][sS]|[sSmMhHdD]))$"#
    ) { text in
        Self.seconds(text) == nil
            ? "expected seconds (90, 2.5), M:SS or H:MM:SS with optional decimals (1:30, 00:01:30.5), or a duration "
                + "(2s, 500ms, 1.5m)" : nil
    }

    /// The seconds a time stands for, or `nil` when it is not well formed (minutes and seconds after a colon must
    /// be below 60).
    package static func seconds(_ text: String) -> Double? {
        if let seconds = ValueParsing.clockSeconds(text) { return seconds }
        // A duration with its unit (`2s`): a bare `.5` or `2.` stays refused, as a time.
        guard text.last?.isLetter == true, let duration = ValueParsing.duration(text) else { return nil }
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
