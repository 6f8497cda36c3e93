/// What asking a decoder, an encoder or a filter graph for its next output gave.
enum CodecOutput {
    /// An output was produced.
    case ready
    /// Nothing more until more input arrives (`AVERROR(EAGAIN)`).
    case needsInput
    /// Everything has been drained after the end of the input (`AVERROR_EOF`).
    case finished
}
