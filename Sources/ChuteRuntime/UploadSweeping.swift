import ChuteCore
import Foundation
import Logging
import ServiceLifecycle

/// Keeps the spool to `settings.uploadRetention`: every hour (every half of the retention, if shorter) it removes the
/// uploads whose jobs ended longer ago than that, with their outputs and sidecars, and what uploads cut short left
/// (``UploadSpool/sweep(store:retention:receiving:atStart:now:)``). Start-up sweeps once before this runs.
package struct UploadSweeping: Service {
    private let spool: UploadSpool
    private let journal: any JobStore
    private let retention: Duration
    private let receiving: @Sendable () -> Set<String>
    private let logger: Logger

    /// - Parameter receiving: the uploads whose bodies are being received now, which the sweep leaves alone.
    package init(
        spool: UploadSpool,
        journal: any JobStore,
        retention: Duration,
        receiving: @escaping @Sendable () -> Set<String>,
        logger: Logger
    ) {
        self.spool = spool
        self.journal = journal
        self.retention = retention
        self.receiving = receiving
        self.logger = logger
    }

    package func run() async {
        let interval = min(.seconds(3600), self.retention / 2)
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            // A graceful shutdown cancels the wait, which then throws.
            guard (try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }) != nil else { return }
            do {
                let removed = try await self.spool.sweep(
                    store: self.journal,
                    retention: self.retention,
                    receiving: self.receiving()
                )
                if removed > 0 {
                    self.logger.info(
                        "Uploads removed from the spool",
                        metadata: ["removed": "\(removed)", "retention": "\(ValueParsing.describe(self.retention))"]
                    )
                }
            } catch {
                self.logger.warning(
                    "The spool could not be swept; it is tried again later",
                    metadata: ["error": "\(LogText.escaped(String(describing: error)))"]
                )
            }
        }
    }
}
