import ChuteCore
import ChuteDocuments
import ChuteFFmpeg
import ChuteMagick
import ChutePDF

/// The engines built into this `chute`.
package enum Engines {
    /// Every engine's lane, formats and options, and how to make it in a worker. A new engine is a module that
    /// declares its ``EngineDescriptor``, and one more line here.
    package static let registry = EngineRegistry([
        ImageEngine.descriptor,
        MediaEngine.videoDescriptor,
        MediaEngine.audioDescriptor,
        DocumentEngine.descriptor,
        PDFEngine.descriptor,
    ])
}
