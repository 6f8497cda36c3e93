import ChuteCore
import SystemPackage

/// How to start a worker process: the `chute` executable itself, in worker mode, for one engine.
package struct WorkerLauncher: Sendable {
    /// The executable, normally the running `chute` binary (`/proc/self/exe`).
    package var executable: FilePath
    /// The arguments that put it in worker mode for an engine, e.g. `["worker", "--engine", "image"]`.
    package var arguments: @Sendable (EngineKind) -> [String]

    package init(executable: FilePath, arguments: @escaping @Sendable (EngineKind) -> [String]) {
        self.executable = executable
        self.arguments = arguments
    }
}
