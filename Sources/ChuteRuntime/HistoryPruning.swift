import ChuteCore
import Foundation
import Logging
import ServiceLifecycle

/// Keeps the journal's history to `settings.historyRetention`: at start-up, then every day (every half of the
/// retention, if that is shorter), it deletes the finished jobs older than that whose source has gone or changed
/// (``SQLiteJobStore/pruneHistory(before:)``).
package struct HistoryPruning: Service {
    private let journal: any JobStore
    private let retention: Duration
    private let logger: Logger

    package init(journal: any JobStore, retention: Duration, logger: Logger) {
        self.journal = journal
        self.retention = retention
        self.logger = logger
    }

    package func run() async {
        let interval = min(.seconds(86_400), self.retention / 2)
        let retentionSeconds = Double(self.retention.components.seconds)
            + Double(self.retention.components.attoseconds) / 1e18
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let deleted = try await self.journal.pruneHistory(before: Date() - retentionSeconds)
                if deleted > 0 {
                    self.logger.info(
                        "History pruned",
                        metadata: ["deleted": "\(deleted)", "retention": "\(ValueParsing.describe(self.retention))"]
                    )
                }
            } catch {
                self.logger.warning(
                    "The history could not be pruned; it is tried again later",
                    metadata: ["error": "\(LogText.escaped(String(describing: error)))"]
                )
            }
            // A graceful shutdown cancels the wait, which then throws.
            guard (try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }) != nil else { return }
        }
    }
}
