import ChuteCatalog
import ChutePDF
import ChuteWorker

// The PDF engine's worker: the only process that loads qpdf and poppler (and ImageMagick, for the images it lays on
// pages and the pages it renders).
WorkerMain.main(serving: [Engines.pdf]) { _, _ in PDFEngine() }
