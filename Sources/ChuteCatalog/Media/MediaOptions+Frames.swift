import ChuteCore

extension MediaOptions {
    /// The picture formats the video engine writes from a video: a poster frame, or a sticker (`gif`, and `webp`
    /// with a `duration`).
    package static let frameFormats = ["jpg", "png", "webp", "gif"]

    /// The options the video engine applies to a poster frame; a rule's other options do nothing to it.
    package static let posterKeys: Set<String> = [Self.start.key, CommonOptions.width.key, CommonOptions.height.key]

    /// The options the video engine applies to a sticker (or a poster, which has no `duration`).
    package static let stickerKeys = Self.posterKeys.union([Self.duration.key])

    /// The longest a sticker lasts, in seconds.
    package static let stickerSecondsCap = 10.0
}
