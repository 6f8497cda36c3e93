import ChuteCatalog
import ChuteCore

extension ConversionPlan {
    /// Adds the filters of `speed` and `loudness` to the re-encoded streams.
    ///
    /// The picture's times are divided by the speed (`setpts`); the sound is sped up by `atempo`, which keeps the
    /// pitch, in stages of 0.5 to 2 (FFmpeg's documentation advises chaining rather than one larger step); subtitles,
    /// whose times would not follow, are dropped with a warning. For
    /// `loudness`, each re-encoded audio stream is measured first (``LoudnessMeter``) and gets one gain (`volume`)
    /// that brings its integrated loudness to the target; a silent stream is left as it is, with a warning.
    ///
    /// - Parameters:
    ///   - options: the rule's options.
    ///   - input: the input, read again from the start to measure its loudness.
    /// - Throws: ``FFmpegError`` when the loudness cannot be measured (a stream that does not decode).
    mutating func applySound(_ options: ConversionOptions, input: MediaFile) throws(FFmpegError) {
        if let speed = options[MediaOptions.speed], speed != 1 {
            self.video?.filters.insert("setpts=PTS/\(speed)", at: 0)
            for index in self.audio.indices where !self.audio[index].isCopy {
                self.audio[index].filters += Self.tempoFilters(speed)
            }
            // Copied subtitles would keep the source's times, out of step with the picture.
            for subtitle in self.subtitles {
                self.warnings.append(
                    "subtitle stream #\(subtitle.source.index) (\(subtitle.source.codecName)) was dropped: its times "
                        + "do not follow 'speed'"
                )
            }
            self.subtitles = []
        }
        guard let target = options[MediaOptions.loudness] else { return }
        for index in self.audio.indices where !self.audio[index].isCopy {
            let source = self.audio[index].source
            guard let measured = try LoudnessMeter.integratedLoudness(of: input, stream: source.index),
                measured > LoudnessMeter.silence
            else {
                self.warnings.append(
                    "audio stream #\(source.index) is silent; its loudness was left as it is, not brought to "
                        + "\(OptionValue.number(target)) LUFS"
                )
                continue
            }
            self.audio[index].filters.append("volume=volume=\(target - measured)dB:precision=double")
        }
    }

    /// The `atempo` stages that together change the tempo by `speed`, each within 0.5–2.
    static func tempoFilters(_ speed: Double) -> [String] {
        var rest = speed
        var stages: [Double] = []
        while rest > 2 {
            stages.append(2)
            rest /= 2
        }
        while rest < 0.5 {
            stages.append(0.5)
            rest /= 0.5
        }
        if rest != 1 {
            stages.append(rest)
        }
        return stages.map { "atempo=tempo=\($0)" }
    }
}
