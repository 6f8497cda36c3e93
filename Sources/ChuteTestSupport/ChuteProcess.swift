import Foundation
import Synchronization
import SystemPackage

/// The real `chute` executable, started by a test: its standard error is collected line by line so that the test
/// can wait for log records instead of sleeping.
package final class ChuteProcess: Sendable {
    /// The `chute` binary that `swift test` built next to the test bundle.
    package static var executable: FilePath {
        let testBinary = FilePath((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "")
        return testBinary.removingLastComponent().appending("chute")
    }

    private let process: Process
    private let lines = Mutex<[String]>([])
    private let standardOutputLines = Mutex<[String]>([])
    private let closedStreams = Mutex<Int>(0)

    /// Starts `chute` (or `executable`, a command that runs it) with `arguments` in `directory`.
    package init(
        _ arguments: [String],
        in directory: FilePath? = nil,
        environment: [String: String] = [:],
        executable: FilePath = ChuteProcess.executable
    ) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable.string)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory.string) }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let errorPipe = Pipe()
        let outputPipe = Pipe()
        process.standardError = errorPipe
        process.standardOutput = outputPipe
        process.standardInput = FileHandle.nullDevice
        self.process = process
        try process.run()
        self.collect(errorPipe.fileHandleForReading) { line in self.lines.withLock { $0.append(line) } }
        self.collect(outputPipe.fileHandleForReading) { line in self.standardOutputLines.withLock { $0.append(line) } }
    }

    private func collect(_ handle: FileHandle, append: @escaping @Sendable (String) -> Void) {
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending = Data(pending[(newline + 1)...])
                    append(line)
                }
            }
            if !pending.isEmpty { append(String(decoding: pending, as: UTF8.self)) }
            self.closedStreams.withLock { $0 += 1 }
        }
    }

    /// The process id.
    package var pid: Int32 { self.process.processIdentifier }

    /// Every line written to standard error so far.
    package var log: [String] { self.lines.withLock { $0 } }

    /// Every line written to standard output so far.
    package var output: [String] { self.standardOutputLines.withLock { $0 } }

    /// The log lines that contain every one of `fragments`.
    package func logLines(containing fragments: String...) -> [String] {
        self.log.filter { line in fragments.allSatisfy { line.contains($0) } }
    }

    /// Waits until at least `count` log lines contain all of `fragments`; fails at once if the process exits first.
    @discardableResult
    package func waitForLog(_ fragments: String..., count: Int = 1, timeout: Double = 60) async throws -> [String] {
        let what = {
            "\(count)× log line with \(fragments); log so far:\n\(self.log.suffix(40).joined(separator: "\n"))"
        }
        return try await waitUntil(what(), timeout: timeout) {
            let found = self.log.filter { line in fragments.allSatisfy { line.contains($0) } }
            if found.count >= count { return found }
            if !self.process.isRunning && self.closedStreams.withLock({ $0 }) == 2 {
                throw DeadlineExceeded(what: "(chute exited) " + what(), seconds: 0)
            }
            return nil
        }
    }

    /// Sends a signal.
    package func send(_ signal: Int32) {
        kill(self.process.processIdentifier, signal)
    }

    /// Waits for the process to exit and for its output to be read to the end; returns its status (or the signal
    /// number when `signalled`).
    package func waitForExit(timeout: Double = 60) async throws -> (status: Int32, signalled: Bool) {
        try await waitUntil("chute to exit", timeout: timeout) {
            !self.process.isRunning && self.closedStreams.withLock { $0 } == 2 ? true : nil
        }
        return (self.process.terminationStatus, self.process.terminationReason == .uncaughtSignal)
    }

    /// Kills the process if it still runs; for test teardown.
    package func terminate() {
        if self.process.isRunning {
            kill(self.process.processIdentifier, SIGKILL)
            self.process.waitUntilExit()
        }
    }
}
