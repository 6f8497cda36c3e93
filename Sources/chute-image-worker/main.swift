import ChuteCatalog
import ChuteMagick
import ChuteWorker

// The image engine's worker: the only process that loads ImageMagick, libheif, LibRaw and TurboJPEG. ImageMagick
// runs one OpenMP thread per job unless told more: the lanes already use every core.
WorkerMain.main(serving: [Engines.image]) { _, threads in ImageEngine(threadsPerJob: max(1, threads)) }
