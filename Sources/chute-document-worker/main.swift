import ChuteCatalog
import ChuteDocuments
import ChuteWorker

// The document engine's worker: LibreOffice is loaded into this process, kept warm between its jobs.
WorkerMain.main(serving: [Engines.document]) { _, _ in DocumentEngine() }
