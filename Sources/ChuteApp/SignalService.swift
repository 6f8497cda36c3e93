import ChuteCatalog
import ChuteCore
import ChuteRuntime
import Glibc
import Logging
import ServiceLifecycle
import SystemPackage
import UnixSignals

/// The service that turns SIGHUP into a reload of the rules and SIGUSR1 into a status line in the log, until graceful
/// shutdown.
///
/// Left to their default action, both signals would end the daemon without a word, and under systemd's
/// `Restart=on-failure` a SIGHUP counts as a clean exit, so the service would stay down.
///
/// A reload reads and checks the rules file first: a file with problems changes nothing, and the log names each
/// problem as `FILE:LINE:COL: message`. A valid file's `rules` apply to every file decided from then on; jobs already
/// queued or running keep the plan they were given. Changes to `watch` (folders, their options, output folders
/// newly inside a watched folder) and to `settings` need a restart, which the log says; the running ones stay. Under
/// systemd (`Type=notify`), a reload is framed by `RELOADING=1` and `READY=1`, so that systemd shows it as reloading.
struct SignalService: Service {
    /// The signals, trapped before the group starts, so that a signal sent as soon as the daemon is up is not fatal.
    let signals: UnixSignalsSequence
    let configFile: FilePath
    /// The configuration the daemon started with.
    let config: ChuteConfig
    let intake: Intake
    let queue: JobQueue
    /// systemd's notification socket, when systemd started the daemon.
    let notify: SystemdNotify?
    let logger: Logger

    func run() async throws {
        var running = self.config
        for await signal in self.signals.cancelOnGracefulShutdown() {
            if signal == .sighup {
                self.notify?.send(SystemdNotify.reloading)
                running = await self.reload(running)
                self.notify?.send("READY=1")
            } else {
                let counts = await self.queue.counts
                let used = await self.queue.budgetInUse
                let budget = self.queue.budget
                self.logger.info(
                    "Status",
                    metadata: [
                        "queued": "\(counts.queued)", "running": "\(counts.running)",
                        "rules": "\(running.rules.count)", "pid": "\(getpid())",
                        "cpu.used": "\(used.cpu)", "cpu.budget": "\(budget.cpu)",
                        "memory.used": "\(used.memory)", "memory.budget": "\(budget.memory)",
                    ]
                )
            }
        }
        // The signals' sources are gone with the sequence: during the rest of the shutdown, these signals are
        // ignored rather than fatal.
        signal(SIGHUP, SIG_IGN)
        signal(SIGUSR1, SIG_IGN)
    }

    /// Reads the rules file again and gives its rules to the intake.
    ///
    /// - Returns: the configuration now in force: the new rules with the running watches and settings, or `running`
    ///   unchanged when the file has problems.
    private func reload(_ running: ChuteConfig) async -> ChuteConfig {
        let path = "\(LogText.escaped(self.configFile))"
        let loaded: ChuteConfig
        do {
            loaded = try ConfigReader.read(contentsOf: self.configFile, registry: Engines.registry)
        } catch {
            self.logger.error(
                "Rules not reloaded: the rules file has problems; the previous rules stay in force",
                metadata: [
                    "path": "\(path)",
                    "error": "\(LogText.escaped(error.issues.map(\.description).joined(separator: "; ")))",
                ]
            )
            return running
        }
        if loaded.watches != running.watches
            || ChuteApplication.excludedFolders(of: loaded).mapValues(Set.init)
                != ChuteApplication.excludedFolders(of: running).mapValues(Set.init)
        {
            self.logger.warning(
                "Watched folders changed in the rules file; the change takes effect at the next restart",
                metadata: ["path": "\(path)"]
            )
        }
        if loaded.settings != running.settings {
            self.logger.warning(
                "Settings changed in the rules file; they take effect at the next restart",
                metadata: ["path": "\(path)"]
            )
        }
        if loaded.notificationsDiffer(from: running) {
            self.logger.warning(
                "Notifications changed in the rules file; the change takes effect at the next restart",
                metadata: ["path": "\(path)"]
            )
        }
        var reloaded = running
        reloaded.rules = loaded.rules
        await self.intake.reload(reloaded)
        self.logger.info("Rules reloaded", metadata: ["path": "\(path)", "rules": "\(reloaded.rules.count)"])
        return reloaded
    }
}
