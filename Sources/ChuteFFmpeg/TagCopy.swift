import CFFmpeg

/// Copies a recording's tags from one FFmpeg metadata dictionary to another, leaving out the keys that describe
/// the source file rather than the recording.
///
/// Demuxers report their container's bookkeeping as tags: an MP4's brands (`major_brand`, `minor_version`,
/// `compatible_brands`) and its tracks' `handler_name` and `vendor_id`, the program that wrote the file
/// (`encoder`), Matroska's per-track statistics (`DURATION`, `BPS`, `NUMBER_OF_FRAMES`, `_STATISTICS_…`). Copied,
/// they become ID3 frames and Vorbis comments that are wrong (they name the source's writer and sizes) or
/// meaningless. `creation_time` is a real date, but only the MP4 family stores it as such (in its movie header);
/// elsewhere it would become a free-form tag, so it is kept for those muxers only. A `language` of `und`
/// (undetermined) says nothing and is left out too.
enum TagCopy {
    /// Keys that describe the source container or its writer, lowercased.
    static let containerKeys: Set<String> = [
        "major_brand", "minor_version", "compatible_brands", "encoder", "vendor_id", "handler_name", "duration",
        "bps", "number_of_frames", "number_of_bytes",
    ]
    /// The prefix of mkvmerge's statistics tags (`_STATISTICS_WRITING_APP`, `_STATISTICS_TAGS`, …), lowercased.
    static let statisticsPrefix = "_statistics_"

    /// Whether a source tag is the recording's own and should be copied.
    ///
    /// - Parameter keepsCreationTime: whether the output's muxer stores `creation_time` as a date.
    static func isRecordingTag(key: String, value: String, keepsCreationTime: Bool) -> Bool {
        let key = key.lowercased()
        if Self.containerKeys.contains(key) || key.hasPrefix(Self.statisticsPrefix) { return false }
        if key == "creation_time" { return keepsCreationTime }
        if key == "language" { return value != "und" }
        return true
    }

    /// Copies the recording's tags of `source` into `destination`.
    ///
    /// The corresponding C functions are `av_dict_get` (iterating with an empty key and `AV_DICT_IGNORE_SUFFIX`)
    /// and `av_dict_set`, which copies key and value.
    ///
    /// - Parameters:
    ///   - overwrite: whether a tag replaces one of the same name already in `destination` (else it is skipped, as
    ///     `AV_DICT_DONT_OVERWRITE` does).
    ///   - keepsCreationTime: whether the output's muxer stores `creation_time` as a date.
    static func copy(
        from source: OpaquePointer?,
        to destination: inout OpaquePointer?,
        overwrite: Bool = true,
        keepsCreationTime: Bool = false
    ) {
        var entry: UnsafeMutablePointer<AVDictionaryEntry>?
        while let next = av_dict_get(source, "", entry, AV_DICT_IGNORE_SUFFIX) {
            entry = next
            guard let key = next.pointee.key, let value = next.pointee.value else { continue }
            guard
                Self.isRecordingTag(
                    key: String(cString: key),
                    value: String(cString: value),
                    keepsCreationTime: keepsCreationTime
                )
            else { continue }
            // Fails only when memory runs out, which leaves the tag out.
            _ = av_dict_set(&destination, key, value, overwrite ? 0 : AV_DICT_DONT_OVERWRITE)
        }
    }
}
