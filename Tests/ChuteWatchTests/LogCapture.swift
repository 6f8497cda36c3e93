import Logging
import Synchronization

/// Keeps every record logged through ``logger``, so that a test can assert on what the watcher logged.
final class LogCapture: Sendable {
    /// One log record.
    struct Record: Sendable {
        var level: Logger.Level
        var message: String
        /// The record's metadata, each value as text.
        var metadata: [String: String]
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { self.metadata[key] }
            set { self.metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let metadata = self.metadata.merging(event.metadata ?? [:]) { $1 }.mapValues { "\($0)" }
            self.capture.records.withLock {
                $0.append(Record(level: event.level, message: "\(event.message)", metadata: metadata))
            }
        }
    }

    private let records = Mutex<[Record]>([])

    /// A logger that records into this capture, at every level.
    var logger: Logger {
        Logger(label: "chute.watch.test") { _ in Handler(capture: self) }
    }

    /// The records at warning level or above: what an operator would have to act on.
    var problems: [Record] {
        self.records.withLock { $0.filter { $0.level >= .warning } }
    }

    /// The records whose message contains `fragment`.
    func records(containing fragment: String) -> [Record] {
        self.records.withLock { $0.filter { $0.message.contains(fragment) } }
    }
}
