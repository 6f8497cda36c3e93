import ChuteCatalog
import ChuteCore
import ChuteFFmpeg
import ChuteWorker

// The video and audio engines' worker: the only process that loads FFmpeg's libraries and opencore-amrnb. Its codecs
// get the threads the daemon's CPU budget gives a job of the lane; 0 (`chute convert`) lets FFmpeg pick, as the
// `ffmpeg` CLI does.
WorkerMain.main(serving: [Engines.video, Engines.audio]) { engine, threads in
    MediaEngine(kind: engine.kind, threadsPerJob: threads)
}
