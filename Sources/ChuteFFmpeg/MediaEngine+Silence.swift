import CFFmpeg
import ChuteCatalog
import ChuteCore
import SystemPackage

extension MediaEngine {
    /// Gives a clip's re-encoded part (a picture without sound) silence for as long as its picture lasts, at the
    /// group's sound shape, so that it joins clips that have sound: a clip without sound among others fails no
    /// group, as other editors join it.
    ///
    /// The silence is written as 16-bit PCM, encoded as every other clip's sound is (FLAC at the shape's rate,
    /// channels and depth), and put beside the part's picture in a new part.
    ///
    /// - Parameters:
    ///   - part: the clip's part, picture only.
    ///   - seconds: how long its picture lasts.
    ///   - shape: the group's shape.
    ///   - request: the clip's request (its output is the part's path, which names the temporary files).
    /// - Returns: the new part, which replaces `part`.
    /// - Throws: ``FFmpegError`` when a step fails.
    static func addingSilence(
        to part: MediaFile,
        seconds: Double,
        shape: Conformance,
        request: ConversionRequest,
        soundFormat: TargetFormat,
        meter: inout ProgressMeter
    ) throws(FFmpegError) -> MediaFile {
        let base = request.output.string
        let silence = try Self.create(FilePath(base + "-silence.wav"))
        try Self.writeSilence(seconds: seconds, sampleRate: shape.sampleRate, channels: shape.channels, into: silence)
        let sound = try Self.create(FilePath(base + "-sound"))
        var soundRequest = request
        soundRequest.input = silence.path
        soundRequest.format = soundFormat
        soundRequest.output = sound.path
        soundRequest.options = ConversionOptions()
        _ = try Self.run(soundRequest, input: silence, output: sound, conformance: shape, meter: &meter) { _ in }
        let merged = try Self.create(FilePath(base + "-with-sound"))
        try Self.merge(picture: part, sound: sound, soundDemuxer: soundFormat.coder, into: merged)
        return merged
    }

    /// Creates a temporary file for a step of a join.
    private static func create(_ path: FilePath) throws(FFmpegError) -> MediaFile {
        do {
            return try MediaFile.create(at: path)
        } catch {
            throw FFmpegError(.writeOutput, "open", status: chute_averror(EIO), detail: error.message)
        }
    }

    /// Writes `seconds` of silence into `file`, a WAV of 16-bit samples at `sampleRate` and `channels`, in packets
    /// of a tenth of a second.
    static func writeSilence(
        seconds: Double,
        sampleRate: Int,
        channels: Int,
        into file: MediaFile
    ) throws(FFmpegError) {
        let muxer = try OutputContainer(file: file, muxer: "wav", fileExtension: "wav")
        let stream = try muxer.addStream()
        let parameters: UnsafeMutablePointer<AVCodecParameters> = stream.pointee.codecpar
        parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
        parameters.pointee.codec_id = AV_CODEC_ID_PCM_S16LE
        parameters.pointee.sample_rate = Int32(sampleRate)
        av_channel_layout_default(&parameters.pointee.ch_layout, Int32(channels))
        parameters.pointee.bits_per_coded_sample = 16
        parameters.pointee.block_align = Int32(2 * channels)
        let sampleTimeBase = AVRational(num: 1, den: Int32(sampleRate))
        stream.pointee.time_base = sampleTimeBase
        try muxer.writeHeader()
        let packet = try Packet()
        let total = Int64((seconds * Double(sampleRate)).rounded())
        var written: Int64 = 0
        while written < total {
            let samples = min(Int64(sampleRate / 10), total - written)
            let bytes = Int32(samples) * Int32(2 * channels)
            try FFmpegError.check(av_new_packet(packet.pointer, bytes), .writeOutput, "av_new_packet")
            memset(packet.pointer.pointee.data, 0, Int(bytes))
            let timeBase = stream.pointee.time_base
            packet.pointer.pointee.pts = av_rescale_q(written, sampleTimeBase, timeBase)
            packet.pointer.pointee.dts = packet.pointer.pointee.pts
            packet.pointer.pointee.duration = av_rescale_q(samples, sampleTimeBase, timeBase)
            packet.pointer.pointee.stream_index = 0
            try muxer.write(packet)
            written += samples
        }
        try muxer.finish()
    }

    /// Writes the picture of `picture` (a Matroska part) and the sound of `sound` into `file`, a Matroska part, their
    /// packets interleaved by decoding time.
    static func merge(
        picture: MediaFile,
        sound: MediaFile,
        soundDemuxer: String,
        into file: MediaFile
    ) throws(FFmpegError) {
        let video = try InputContainer(file: picture, demuxer: "matroska")
        let audio = try InputContainer(file: sound, demuxer: soundDemuxer)
        let videoIndex = Int(av_find_best_stream(video.context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0))
        let audioIndex = Int(av_find_best_stream(audio.context, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0))
        guard videoIndex >= 0, audioIndex >= 0 else {
            throw FFmpegError(.unsupportedStream, "av_find_best_stream", detail: "a part to give sound lost its stream")
        }
        let muxer = try OutputContainer(file: file, muxer: "matroska", fileExtension: "mkv")
        _ = try muxer.addCopy(of: video.stream(at: videoIndex), codecTag: nil, matrix: nil)
        _ = try muxer.addCopy(of: audio.stream(at: audioIndex), codecTag: nil, matrix: nil)
        try muxer.writeHeader()
        let videoPacket = try Packet()
        let audioPacket = try Packet()
        var videoTime = try Self.next(videoIndex, of: video, into: videoPacket)
        var audioTime = try Self.next(audioIndex, of: audio, into: audioPacket)
        while videoTime != nil || audioTime != nil {
            if let time = videoTime, audioTime.map({ time <= $0 }) ?? true {
                try Self.write(videoPacket, from: video.stream(at: videoIndex), as: 0, into: muxer)
                videoTime = try Self.next(videoIndex, of: video, into: videoPacket)
            } else {
                try Self.write(audioPacket, from: audio.stream(at: audioIndex), as: 1, into: muxer)
                audioTime = try Self.next(audioIndex, of: audio, into: audioPacket)
            }
        }
        try muxer.finish()
    }

    /// Reads the next packet of stream `index` into `packet`, leaving out the others.
    ///
    /// - Returns: its decoding time (its presentation time when it has none) in seconds, or `nil` at the end.
    private static func next(
        _ index: Int,
        of container: borrowing InputContainer,
        into packet: borrowing Packet
    ) throws(FFmpegError) -> Double? {
        while try container.read(into: packet) {
            guard Int(packet.pointer.pointee.stream_index) == index else {
                packet.unref()
                continue
            }
            let none = chute_nopts_value()
            let time = packet.pointer.pointee.dts != none ? packet.pointer.pointee.dts : packet.pointer.pointee.pts
            return time == none ? 0 : Double(time) * av_q2d(container.stream(at: index).pointee.time_base)
        }
        return nil
    }

    /// Writes a packet read from `stream` as the output's stream `outputIndex`.
    private static func write(
        _ packet: borrowing Packet,
        from stream: UnsafeMutablePointer<AVStream>,
        as outputIndex: Int32,
        into muxer: borrowing OutputContainer
    ) throws(FFmpegError) {
        packet.pointer.pointee.stream_index = outputIndex
        packet.pointer.pointee.pos = -1
        av_packet_rescale_ts(packet.pointer, stream.pointee.time_base, muxer.stream(at: outputIndex).pointee.time_base)
        try muxer.write(packet)
    }
}
