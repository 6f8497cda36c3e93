/// Turns the packets of one input stream into the packets of one output stream, re-encoding them.
///
/// Implementations are classes because the ``Transcoder`` keeps a varying number of them in an array, which cannot
/// hold non-copyable values; each owns its C objects through non-copyable members.
protocol StreamTranscoder: AnyObject {
    /// What was decoded so far, for the decode-error policy.
    var tally: DecodeTally { get }
    /// A description of the output stream for reports, such as `h264 1280x720`.
    var outputSummary: String { get }
    /// The span of the decoded frames, in seconds; it measures streams whose packets carry no durations (APE,
    /// WMA), which the packets alone cannot.
    var decodedExtent: TimeExtent { get }

    /// Decodes a packet of the input stream (timestamps already shifted to start at 0) and writes whatever the
    /// encoder gives out. A packet that does not decode is counted, not thrown.
    ///
    /// - Throws: ``FFmpegError`` when filtering, encoding or writing fails.
    func transcode(_ packet: borrowing Packet, into output: borrowing OutputContainer) throws(FFmpegError)

    /// Drains the decoder, filters and encoder at the end of the input and writes the rest.
    func finish(into output: borrowing OutputContainer) throws(FFmpegError)
}
