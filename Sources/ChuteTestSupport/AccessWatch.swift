import ChuteCore
import Foundation
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Records every open and read of some files and folders, by any process: the proof that a daemon never touched
/// them.
///
/// inotify reports `IN_OPEN` and `IN_ACCESS` for a watched file however it is reached (its path, a symbolic link to
/// it, a hard link, a folder symlinked to its folder), and for a watched folder when it is listed or when a file in it
/// is opened by a path through it. Events wait in the kernel until ``events()`` reads them, so no thread is needed.
/// Only this process's own accesses have to be avoided while watching; ``init(watching:)`` checks with one of its own
/// that the watch works.
///
/// The corresponding C functions are `inotify_init1`, `inotify_add_watch` and `read`.
package final class AccessWatch: Sendable {
    /// One open or read.
    package struct Event: Sendable, CustomStringConvertible {
        /// The watched path.
        package var path: FilePath
        /// The name of the entry inside a watched folder, if the event is about one.
        package var name: String?
        /// `IN_OPEN`, `IN_ACCESS` or both.
        package var mask: UInt32

        package var description: String {
            let what = [(UInt32(IN_OPEN), "open"), (UInt32(IN_ACCESS), "access")]
                .filter { self.mask & $0.0 != 0 }.map(\.1).joined(separator: "+")
            return "\(what) \(self.path)\(self.name.map { "/" + $0 } ?? "")"
        }
    }

    private let descriptor: Int32
    private let watched: [Int32: FilePath]
    private let seen = Mutex<[Event]>([])

    /// Watches `paths` (files or folders; a symbolic link is followed to what it names).
    ///
    /// Before returning it opens and reads the first file of `paths` itself and requires the event, then forgets it:
    /// a watch that cannot see would make every "never read" check pass.
    ///
    /// - Throws: the `Errno` of a failing call, or ``DeadlineExceeded`` when the check sees no event.
    package init(watching paths: [FilePath]) throws {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw Errno(rawValue: errno) }
        var watched: [Int32: FilePath] = [:]
        for path in paths {
            let watch = path.withPlatformString { inotify_add_watch(descriptor, $0, UInt32(IN_OPEN | IN_ACCESS)) }
            guard watch >= 0 else {
                let error = Errno(rawValue: errno)
                close(descriptor)
                throw error
            }
            watched[watch] = path
        }
        self.descriptor = descriptor
        self.watched = watched
        try self.checkThatItSees(paths)
    }

    deinit {
        close(self.descriptor)
    }

    /// Every event so far (this call reads those still queued in the kernel).
    package func events() -> [Event] {
        self.seen.withLock { seen in
            seen += self.readQueued()
            return seen
        }
    }

    /// Opens and reads one watched file, expects that event, and clears everything seen.
    private func checkThatItSees(_ paths: [FilePath]) throws {
        let file = paths.first { path in
            var status = stat()
            return stat(path.string, &status) == 0 && status.st_mode & S_IFMT == S_IFREG
        }
        guard let file else { return }
        _ = try Data(contentsOf: URL(fileURLWithPath: file.string))
        guard self.readQueued().contains(where: { $0.mask & UInt32(IN_OPEN) != 0 }) else {
            throw DeadlineExceeded(what: "inotify to report the test's own open of \(file)", seconds: 0)
        }
    }

    /// Reads whatever events are queued, without blocking.
    private func readQueued() -> [Event] {
        var events: [Event] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = try? SystemCall.check("read") {
                buffer.withUnsafeMutableBytes { read(self.descriptor, $0.baseAddress, $0.count) }
            }
            guard let count, count > 0 else { return events }
            buffer.withUnsafeBytes { bytes in
                var offset = 0
                // struct inotify_event { int wd; uint32_t mask, cookie, len; char name[]; }: the name is not
                // imported (a flexible array member), so it is read after the 16-byte fixed part.
                let fixed = MemoryLayout<inotify_event>.size
                while offset + fixed <= count {
                    let event = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let nameBytes = bytes[(offset + fixed)..<(offset + fixed + Int(event.len))]
                    let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                    if event.mask & UInt32(IN_OPEN | IN_ACCESS) != 0, let path = self.watched[event.wd] {
                        events.append(Event(path: path, name: name.isEmpty ? nil : name, mask: event.mask))
                    }
                    offset += fixed + Int(event.len)
                }
            }
        }
    }
}
