import ChuteCore
import SystemPackage

/// How to start a worker process for an engine: its executable, and the arguments that give it the engine and its
/// scheduling.
package struct WorkerLauncher: Sendable {
    /// The executable of an engine's worker (``EngineDescriptor/worker``, found beside the running `chute`).
    package var executable: @Sendable (EngineKind) -> FilePath
    /// The arguments for an engine, e.g. `["--engine", "image", "--threads", "1"]`.
    package var arguments: @Sendable (EngineKind) -> [String]

    package init(
        executable: @escaping @Sendable (EngineKind) -> FilePath,
        arguments: @escaping @Sendable (EngineKind) -> [String]
    ) {
        self.executable = executable
        self.arguments = arguments
    }
}
