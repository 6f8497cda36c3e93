import Logging
import Synchronization

/// A log handler that keeps the records it receives: their messages and metadata.
struct RecordingLogHandler: LogHandler {
    /// The records, shared by the copies of the handler that a logger makes.
    final class Box: Sendable {
        private let records = Mutex<[(message: String, metadata: [String: String])]>([])

        var messages: [(message: String, metadata: [String: String])] { self.records.withLock { $0 } }
        var count: Int { self.records.withLock { $0.count } }

        func append(_ message: String, _ metadata: [String: String]) {
            self.records.withLock { $0.append((message, metadata)) }
        }
    }

    let box: Box
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        self.box.append("\(event.message)", (event.metadata ?? [:]).mapValues { "\($0)" })
    }
}
