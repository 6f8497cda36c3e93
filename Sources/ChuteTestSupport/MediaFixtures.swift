import Foundation
import SystemPackage

/// Makes video and audio fixtures with the `ffmpeg` CLI and inspects outputs with `ffprobe`.
package enum MediaFixtures {
    /// H.264 (x264, ultrafast) video and AAC audio, the quickest realistic clip.
    package static let h264AAC = ["-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac"]

    /// Writes a clip of `seconds` with a moving test pattern and a sine tone, encoded as the arguments say.
    ///
    /// - Parameters:
    ///   - path: the file to write; its extension picks the container.
    ///   - width: the video width, or `nil` for an audio-only file.
    ///   - height: the video height.
    ///   - seconds: the duration.
    ///   - rate: video frames per second.
    ///   - sampleRate: audio samples per second.
    ///   - codecArguments: the encoder arguments, such as `["-c:v", "libx264", "-c:a", "aac"]`.
    package static func makeClip(
        at path: FilePath,
        width: Int? = 320,
        height: Int = 240,
        seconds: Double = 2,
        rate: Int = 25,
        sampleRate: Int = 48000,
        codecArguments: [String]
    ) throws {
        var arguments = ["ffmpeg", "-nostdin", "-v", "error", "-y"]
        if let width {
            arguments += ["-f", "lavfi", "-i", "testsrc2=size=\(width)x\(height):rate=\(rate):duration=\(seconds)"]
        }
        arguments += [
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=\(sampleRate):duration=\(seconds)", "-ac", "2",
        ]
        try CommandLineTool.run(arguments + codecArguments + [path.string])
    }

    /// Copies `source` to `destination` with the CLI, adding `arguments` (stream copy unless they say otherwise).
    package static func remux(_ source: FilePath, to destination: FilePath, arguments: [String]) throws {
        try CommandLineTool.run(
            ["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", source.string] + arguments + [destination.string]
        )
    }

    /// What `ffprobe` says about a file: its format and streams, as JSON objects.
    package struct Probe {
        package var format: [String: Any]
        package var streams: [[String: Any]]

        /// The streams of one type (`video`, `audio`, `subtitle`), cover pictures left out.
        package func streams(_ type: String) -> [[String: Any]] {
            self.streams.filter { stream in
                let disposition = stream["disposition"] as? [String: Any]
                return stream["codec_type"] as? String == type && disposition?["attached_pic"] as? Int != 1
            }
        }

        /// The container's duration in seconds.
        package var duration: Double? { (self.format["duration"] as? String).flatMap(Double.init) }

        /// The container's tags.
        package var tags: [String: String] { self.format["tags"] as? [String: String] ?? [:] }
    }

    /// Runs `ffprobe -show_format -show_streams` on a file.
    package static func probe(_ path: FilePath) throws -> Probe {
        let result = try CommandLineTool.run([
            "ffprobe", "-v", "error", "-show_format", "-show_streams", "-of", "json", path.string,
        ])
        let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        return Probe(
            format: object?["format"] as? [String: Any] ?? [:],
            streams: object?["streams"] as? [[String: Any]] ?? []
        )
    }

    /// `ffprobe -show_entries ENTRIES` in compact form: one line per section, fields separated by `|`.
    ///
    /// - Parameter counting: decode every frame first (`-count_frames`), for `nb_read_frames`.
    package static func entries(_ entries: String, of path: FilePath, counting: Bool = false) throws -> String {
        try CommandLineTool.run(
            ["ffprobe", "-v", "error"] + (counting ? ["-count_frames", "-select_streams", "v:0"] : []) + [
                "-show_entries", entries, "-of", "compact=p=0:nk=1", path.string,
            ]
        ).standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The display rotation of the first video stream in degrees, as `ffprobe` reports it (0 when none).
    package static func rotation(of path: FilePath) throws -> Int {
        let result = try CommandLineTool.run([
            "ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream_side_data=rotation", "-of",
            "csv=p=0", path.string,
        ])
        return Int(result.standardOutput.split(separator: "\n").first.map(String.init) ?? "") ?? 0
    }

    /// The sizes of one stream's packets, in file order.
    package static func packetSizes(of path: FilePath, stream: String) throws -> [Int] {
        let result = try CommandLineTool.run([
            "ffprobe", "-v", "error", "-select_streams", stream, "-show_entries", "packet=size", "-of", "csv=p=0",
            path.string,
        ])
        return result.standardOutput.split(separator: "\n").compactMap { Int($0) }
    }
}
