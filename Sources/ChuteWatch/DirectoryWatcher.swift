import Foundation
import Logging
import Synchronization

/// Watches several roots with one inotify instance on its own thread and reports files as an `AsyncStream`.
///
/// At start the thread watches every root (and, for a recursive spec, every folder below it to a depth of
/// ``maximumDepth``), reports each file already there as ``FileEvent/Kind/found``, and then reports changes:
/// files closed after writing, moved in, deleted or moved away. New and moved-in folders are watched and scanned at
/// once; folders renamed inside the tree keep being watched under their new path; after lost events
/// (`IN_Q_OVERFLOW`) every root is scanned again.
///
/// What is left out: names the spec's ``WatchSpec/ignore`` rules ignore, folders it excludes, symbolic links below a
/// root (neither entered nor reported), and anything that is not a regular file in a scan. Folders that are another
/// root belong to that root alone.
///
/// A root that does not exist, at start or after it was deleted, unmounted or moved away, is logged once and looked
/// for every second; once it is there it is watched and scanned. `Watcher ready` is logged only when every root is
/// watched or polled (`Watcher waiting for watched folders to appear` otherwise, and `Watcher ready` once they
/// have). A root that cannot be watched for another reason (it is not a folder, is not readable) is logged at error
/// level and the others are watched; it is not picked up later: restart Chute. At the `fs.inotify.max_user_watches` limit, the error is logged once
/// with the remedy, and the root is polled from then on.
///
/// inotify sees only changes made through this kernel: writes by other NFS or SMB clients are not reported. So a root
/// on a network or FUSE file system (``FileSystemType/needsPolling``, under `poll: auto`), a root with `poll: always`,
/// and a root whose folders hit the watch limit are listed every ``WatchSpec/pollInterval`` instead: new and changed
/// files are reported as found, files that are gone as removed. A polled root that cannot be listed, or whose device
/// changed (an unmounted share), keeps its last listing, so its files are never reported as removed.
///
/// - Important: Call ``events()`` once; ``stop()`` may be called from any thread, any number of times. The stream's
///   consumer ending its iteration stops the watcher too.
package final class DirectoryWatcher: Sendable {
    /// How far below a root folders are entered: a root is at level 0.
    static let maximumDepth = 64

    /// The lifecycle of the inotify instance.
    private enum Phase: ~Copyable {
        /// Created; ``events()`` has not been called.
        case idle(Inotify)
        /// ``events()`` started the thread, which has not taken the instance yet.
        case starting(Inotify)
        /// The thread owns the instance.
        case running
        /// Stopped, or the thread ended; the instance is closed or about to be.
        case stopped
    }

    private let specs: [WatchSpec]
    private let logger: Logger
    /// Written by ``stop()``, polled by the thread; both ends stay open as long as the watcher exists, and the
    /// thread holds the watcher.
    private let stopSignal: StopSignal
    /// Invariant: the inotify instance has exactly one owner: this phase until the thread takes it, then the thread.
    /// ``stop()`` signals the thread only while it is `running`, and moves to `stopped`, so the signal is sent once.
    private let phase: Mutex<Phase>

    /// Creates the inotify instance and the stop signal; watches nothing yet.
    ///
    /// - Parameters:
    ///   - specs: the folders to watch. Roots must be absolute; a root that does not exist is logged when
    ///     ``events()`` starts and skipped.
    ///   - logger: for folders that cannot be watched, lost events and failures.
    /// - Throws: ``WatchError`` with code `createInstance`, when the system is out of descriptors or inotify
    ///   instances (`fs.inotify.max_user_instances`).
    package init(specs: [WatchSpec], logger: Logger) throws(WatchError) {
        let inotify = try Inotify()
        self.stopSignal = try StopSignal()
        self.specs = specs
        self.logger = logger
        self.phase = Mutex(.idle(inotify))
    }

    /// Starts the watch thread and returns what it reports.
    ///
    /// The thread watches the roots, scans them (``FileEvent/Kind/found`` for every file already there), then
    /// reports changes until ``stop()``. The stream is unbounded: the consumer dedupes and checks each file. It
    /// finishes when the watcher stops, or when reading events fails (logged).
    ///
    /// - Parameter watching: called once, on the watch thread, when every root that exists is watched and scanned
    ///   (or listed, if polled); roots that do not exist yet are looked for from then on.
    /// - Important: Call it once. After ``stop()`` it returns a finished stream.
    /// - Returns: the events, in the order the kernel queued them.
    package func events(watching: @escaping @Sendable () -> Void = {}) -> AsyncStream<FileEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: FileEvent.self, bufferingPolicy: .unbounded)
        let start = self.phase.withLock { phase -> Bool in
            switch consume phase {
            case .idle(let inotify):
                phase = .starting(inotify)
                return true
            case .stopped:
                phase = .stopped
                return false
            default:
                preconditionFailure("DirectoryWatcher.events() called more than once")
            }
        }
        guard start else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { _ in self.stop() }
        let thread = Thread { self.run(continuation, watching: watching) }
        thread.name = "chute-watch"
        thread.start()
        return stream
    }

    /// Stops the watch thread, which closes the inotify instance and finishes the stream.
    ///
    /// - Important: Safe from any thread and any number of times; returns without waiting for the thread.
    package func stop() {
        self.phase.withLock { phase in
            switch consume phase {
            case .running:
                self.stopSignal.signal()
            default:
                // Dropping the instance closes it; a thread that was starting finds `stopped` and finishes.
                break
            }
            phase = .stopped
        }
    }

    /// The body of the watch thread.
    private func run(_ continuation: AsyncStream<FileEvent>.Continuation, watching: () -> Void) {
        let inotify = self.phase.withLock { phase -> Inotify? in
            switch consume phase {
            case .starting(let inotify):
                phase = .running
                return inotify
            default:
                phase = .stopped
                return nil
            }
        }
        if let inotify {
            var loop = WatchLoop(inotify: inotify, specs: self.specs, logger: self.logger, continuation: continuation)
            loop.run(until: self.stopSignal, watching: watching)
            // Close the instance before the stream finishes, so that a consumer that ends sees no open watches.
            _ = consume loop
        }
        self.phase.withLock { $0 = .stopped }
        continuation.finish()
    }
}
