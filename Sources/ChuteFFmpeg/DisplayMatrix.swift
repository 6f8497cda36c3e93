import CFFmpeg

/// A video stream's display matrix: how a player turns the coded picture to show it (phones record portrait video
/// as landscape pictures with a 90° matrix).
///
/// The corresponding C functions are `av_stream_get_side_data` with `AV_PKT_DATA_DISPLAYMATRIX` and
/// `av_display_rotation_get`.
struct DisplayMatrix: Equatable {
    /// The nine 16.16 and 2.30 fixed-point entries, as stored.
    let entries: [Int32]

    /// Reads the matrix of `stream`, or `nil` when it has none.
    init?(of stream: UnsafePointer<AVStream>) {
        var size = 0
        guard let data = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size), size >= 9 * 4 else {
            return nil
        }
        self.entries = UnsafeRawPointer(data).withMemoryRebound(to: Int32.self, capacity: 9) {
            Array(UnsafeBufferPointer(start: $0, count: 9))
        }
    }

    /// A matrix that turns the picture `degrees` clockwise. The corresponding C function is
    /// `av_display_rotation_set`, which takes the clockwise angle (while `av_display_rotation_get` gives the
    /// anticlockwise one).
    init(clockwiseDegrees degrees: Int) {
        var entries = [Int32](repeating: 0, count: 9)
        entries.withUnsafeMutableBufferPointer { av_display_rotation_set($0.baseAddress, Double(degrees)) }
        self.entries = entries
    }

    /// The clockwise rotation a player applies, in degrees, rounded to a multiple of 90 and in 0..<360.
    var clockwiseDegrees: Int {
        let counterclockwise = self.entries.withUnsafeBufferPointer { av_display_rotation_get($0.baseAddress) }
        guard counterclockwise.isFinite else { return 0 }
        let quarterTurns = Int((-counterclockwise / 90).rounded())
        return ((quarterTurns % 4) + 4) % 4 * 90
    }

    /// Whether the matrix also mirrors the picture (a negative determinant).
    var isMirrored: Bool {
        Int64(self.entries[0]) * Int64(self.entries[4]) - Int64(self.entries[1]) * Int64(self.entries[3]) < 0
    }

    /// Whether applying the matrix swaps the picture's width and height.
    var swapsDimensions: Bool {
        self.clockwiseDegrees % 180 == 90
    }

    /// The filters that turn the pixels the way a player would (`transpose=clock` for 90°); empty for none.
    var rotationFilters: [String] {
        switch self.clockwiseDegrees {
        case 90: return ["transpose=clock"]
        case 180: return ["hflip", "vflip"]
        case 270: return ["transpose=cclock"]
        default: return []
        }
    }

    /// Attaches the matrix to an output stream, for containers that store it (MP4, MOV).
    /// The corresponding C function is `av_stream_new_side_data`.
    ///
    /// - Throws: ``FFmpegError`` with code `writeOutput` when memory runs out.
    func attach(to stream: UnsafeMutablePointer<AVStream>) throws(FFmpegError) {
        guard let data = av_stream_new_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, 9 * 4) else {
            throw FFmpegError(.writeOutput, "av_stream_new_side_data", status: chute_averror(ENOMEM))
        }
        self.entries.withUnsafeBytes { bytes in
            UnsafeMutableRawPointer(data).copyMemory(from: bytes.baseAddress!, byteCount: 9 * 4)
        }
    }
}
