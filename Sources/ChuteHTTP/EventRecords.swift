import ChuteRuntime
import Foundation
import NIOCore
import Synchronization

/// The event stream's records, `event:` and `data:` lines, each encoded once for every client of the stream.
///
/// Each client reads the same events; encoding them to JSON again for each was the largest cost of serving the
/// stream in a burst of thousands of jobs. A record stays found for one to two generations of
/// ``generation`` events, long enough for every client that is not about to be dropped for being slow
/// (``JobEvents/hardLimit``) to ask for it.
final class EventRecords: Sendable {
    static let generation = 4096

    private struct Cache {
        var current: [JobEvent: ByteBuffer] = [:]
        var previous: [JobEvent: ByteBuffer] = [:]
    }

    private let cache = Mutex(Cache())

    /// `event`'s record, encoded now if no client asked for it recently.
    func record(_ event: JobEvent) throws -> ByteBuffer {
        if let found = self.cache.withLock({ $0.current[event] ?? $0.previous[event] }) { return found }
        var record = ByteBuffer()
        record.writeString("event: \(event.kind.rawValue)\ndata: ")
        record.writeBytes(try API.encoder().encode(event))
        record.writeString("\n\n")
        self.cache.withLock { cache in
            if cache.current.count >= Self.generation {
                cache.previous = cache.current
                cache.current = [:]
            }
            cache.current[event] = record
        }
        return record
    }
}
