import ChuteCore

/// The engines of this `chute`: what each writes and takes, declared without linking its C libraries, so that the
/// daemon, which reads the rules, stays small; each engine's worker executable links them (``EngineDescriptor/worker``).
package enum Engines {
    /// Every engine's lane, formats and options, and the worker that runs its jobs. A new engine is a declaration
    /// here, a module that converts, and a worker executable that runs it.
    package static let registry = EngineRegistry([Self.image, Self.video, Self.audio, Self.document, Self.pdf])
}
