import ChuteRuntime
import ChuteWatch
import ServiceLifecycle

/// The service that feeds the intake from the watcher until graceful shutdown, then stops the watcher.
struct WatchService: Service {
    let watcher: DirectoryWatcher
    let intake: Intake
    /// Called once the watcher watches every folder that exists.
    var watching: @Sendable () -> Void = {}

    func run() async throws {
        let events = self.watcher.events(watching: self.watching)
            .cancelOnGracefulShutdown()
            .map { event in
                let change: IntakeEvent.Change =
                    switch event.kind {
                    case .written, .movedIn: .finished
                    case .found: .appeared
                    case .removed: .removed
                    }
                return IntakeEvent(change, path: event.path, root: event.root)
            }
        await self.intake.consume(events)
        self.watcher.stop()
    }
}
