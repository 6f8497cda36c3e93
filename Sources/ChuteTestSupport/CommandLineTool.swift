import Foundation

/// Runs the command-line tools that tests use to make fixtures and check outputs (`convert-im6.q16`, `identify`,
/// `ffmpeg`, `ffprobe`, `rsync`).
package enum CommandLineTool {
    /// What a finished command printed.
    package struct Result: Sendable {
        package var status: Int32
        package var standardOutput: String
        package var standardError: String
    }

    /// A command that exited non-zero.
    package struct Failure: Error, CustomStringConvertible {
        package var command: [String]
        package var result: Result

        package init(command: [String], result: Result) {
            self.command = command
            self.result = result
        }

        package var description: String {
            "\(self.command.joined(separator: " ")) exited \(self.result.status): \(self.result.standardError)"
        }
    }

    /// Runs `arguments[0]` (looked up on PATH) with the rest as arguments and waits for it.
    ///
    /// - Throws: ``Failure`` when it exits non-zero and `check` is true.
    @discardableResult
    package static func run(_ arguments: [String], check: Bool = true) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes before waiting so a chatty tool cannot fill a pipe and block.
        let errorData = ReadAll(error.fileHandleForReading)
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let result = Result(
            status: process.terminationStatus,
            standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData.wait(), as: UTF8.self)
        )
        if check && result.status != 0 { throw Failure(command: arguments, result: result) }
        return result
    }

    /// Whether a tool is on PATH.
    package static func exists(_ name: String) -> Bool {
        (try? self.run(["sh", "-c", "command -v \(name)"], check: false).status) == 0
    }
}

/// Reads a file handle to its end on a background thread.
private final class ReadAll: @unchecked Sendable {
    // `data` is written once by the reader thread before `done` is signalled and read only after `wait()`.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        DispatchQueue.global().async {
            self.data = handle.readDataToEndOfFile()
            self.done.signal()
        }
    }

    func wait() -> Data {
        self.done.wait()
        return self.data
    }
}
