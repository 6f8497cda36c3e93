import ChuteCore
import Glibc
import Logging
import SystemPackage

/// The watcher's working state: one inotify instance, the map from watches to folders, the listings of polled roots,
/// and the stream it reports into.
///
/// ``run(until:)`` watches and scans every inotify root and lists every polled one, then waits in `poll` for events,
/// the next listing, the next look for missing roots or the stop signal. Folder bookkeeping lives in
/// `WatchLoop+Walk.swift`, event handling in `WatchLoop+Events.swift`, polling in `WatchLoop+Polling.swift`, roots
/// that do not exist in `WatchLoop+MissingRoots.swift`.
///
/// - Important: Confined to one thread: ``DirectoryWatcher`` creates, runs and destroys it on its own thread.
///   Destroying it closes the inotify instance.
struct WatchLoop: ~Copyable {
    /// A watched folder.
    struct WatchedFolder {
        /// Its current absolute path (updated when it or a parent is renamed inside the tree).
        var path: FilePath
        /// The index of its ``WatchSpec``.
        var root: Int
        /// Its level below the root: 0 for the root itself.
        var depth: Int
    }

    /// A folder renamed away from a watched folder, waiting for the `movedTo` with the same cookie.
    struct PendingMove {
        /// The folder's old path.
        var path: FilePath
        /// The watches of the folder and of its sub-folders when it left.
        var watches: [Inotify.WatchDescriptor]
    }

    /// The size of the read buffer: room for hundreds of events per `read`.
    static let bufferSize = 64 * 1024

    let inotify: Inotify
    /// The specs, with their paths lexically normalised so that they compare with the paths built below them.
    let specs: [WatchSpec]
    let logger: Logger
    let continuation: AsyncStream<FileEvent>.Continuation
    private let buffer: UnsafeMutableRawBufferPointer
    /// Every folder with a watch. The kernel hands out the same descriptor for a folder renamed inside the tree, so
    /// re-adding its watch under the new path overwrites its entry.
    var folders: [Inotify.WatchDescriptor: WatchedFolder] = [:]
    /// Folders renamed away during the current batch of events, by cookie.
    var pendingMoves: [UInt32: PendingMove] = [:]
    /// Whether the `max_user_watches` limit was already logged; it is logged once.
    var reportedWatchLimit = false
    /// The roots that are polled instead of watched, by spec index.
    var polled: [Int: PolledRoot] = [:]
    /// The roots that do not exist, looked for every ``missingRootInterval``, by spec index.
    var missingRoots: Set<Int> = []
    /// When the missing roots are looked for next; `nil` when none is missing.
    var missingRootsDue: ContinuousClock.Instant?
    /// The folders left out for being too deep, each logged once (a root that is polled meets them at every listing).
    let foldersTooDeep = FolderSet()

    /// A set of folders that a non-mutating walk (``mayEnter(_:named:root:depth:)``, used by the polling listing too)
    /// can add to.
    final class FolderSet {
        var paths: Set<FilePath> = []
    }

    /// - Parameters:
    ///   - inotify: the instance; the loop takes it over.
    ///   - specs: what to watch.
    ///   - logger: for folders that cannot be watched, lost events and failures.
    ///   - continuation: where events go.
    init(
        inotify: consuming Inotify,
        specs: [WatchSpec],
        logger: Logger,
        continuation: AsyncStream<FileEvent>.Continuation
    ) {
        self.specs = specs.map { spec in
            var spec = spec
            spec.root = spec.root.lexicallyNormalized()
            spec.excluded = spec.excluded.map { $0.lexicallyNormalized() }
            return spec
        }
        self.logger = logger
        self.continuation = continuation
        self.buffer = .allocate(byteCount: Self.bufferSize, alignment: MemoryLayout<inotify_event>.alignment)
        self.inotify = inotify
    }

    deinit {
        self.buffer.deallocate()
    }

    /// Watches and scans every inotify root and lists every polled one, then handles events, lists polled roots and
    /// looks for missing roots when they are due, until `stop` is signalled or reading events fails.
    ///
    /// - Parameters:
    ///   - stop: the signal that ends the loop.
    ///   - watching: called once every root that exists is watched and scanned or listed.
    mutating func run(until stop: borrowing StopSignal, watching: () -> Void) {
        let clock = ContinuousClock()
        self.choosePolledRoots(now: clock.now)
        self.watchAllRoots()
        self.listDueRoots(now: clock.now)
        self.logReadiness()
        watching()
        var descriptors = [
            pollfd(fd: self.inotify.descriptor.rawValue, events: Int16(POLLIN), revents: 0),
            pollfd(fd: stop.readEnd.rawValue, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            let timeout = self.millisecondsUntilNextListing(now: clock.now)
            do throws(SystemCallError) {
                try SystemCall.check("poll") { poll(&descriptors, nfds_t(descriptors.count), timeout) }
            } catch {
                self.logger.error("Watching stopped", error: WatchError(.readEvents, error))
                return
            }
            if descriptors[1].revents != 0 { return }
            if descriptors[0].revents != 0 {
                guard descriptors[0].revents & Int16(POLLIN) != 0 else {
                    self.logger.error(
                        "Watching stopped: the inotify descriptor failed",
                        metadata: ["revents": "\(descriptors[0].revents)"]
                    )
                    return
                }
                do {
                    try self.handleQueuedEvents()
                } catch {
                    self.logger.error("Watching stopped", error: error)
                    return
                }
            }
            self.listDueRoots(now: clock.now)
            self.checkMissingRoots(now: clock.now)
        }
    }

    /// Reads the events queued now, blocking until there is at least one, and handles them.
    ///
    /// A folder renamed away whose `movedTo` did not come in the same batch has left the tree: its watches are
    /// removed. Should the `movedTo` come in a later read after all, the folder is treated as moved in.
    ///
    /// - Throws: ``WatchError`` with code `readEvents` when `read` fails.
    mutating func handleQueuedEvents() throws(WatchError) {
        let count = try self.inotify.readEvents(into: self.buffer)
        for event in InotifyEvent.parse(UnsafeMutableRawBufferPointer(rebasing: self.buffer[..<count])) {
            self.handle(event)
        }
        for move in self.pendingMoves.values {
            self.dropStaleWatches(of: move)
        }
        self.pendingMoves.removeAll()
    }

    /// Reports an event to the consumer.
    func report(_ kind: FileEvent.Kind, _ path: FilePath, root: Int) {
        self.continuation.yield(FileEvent(kind: kind, path: path, root: self.specs[root].root))
    }
}
