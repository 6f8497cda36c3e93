import Foundation
import NIOCore
import Synchronization

/// The JSON of values that many requests ask for again and again, each encoded once while it is asked for: a job
/// event for every client of the event stream, a job on every page of the job list that polling clients fetch.
///
/// Foundation's `JSONEncoder` was the largest cost left of serving 50 API clients during a burst of thousands of
/// jobs; looking a value up costs a hash of it. A value (a job changes with its state and progress, and is then
/// another value) stays found for one to two generations of `generation` values.
final class EncodedValues<Value: Hashable & Encodable & Sendable>: Sendable {
    private struct Cache {
        var current: [Value: ByteBuffer] = [:]
        var previous: [Value: ByteBuffer] = [:]
    }

    private let generation: Int
    private let cache = Mutex(Cache())

    init(generation: Int) {
        self.generation = generation
    }

    /// `value` as ``API/encoder()`` writes it, encoded now if nobody asked for it recently.
    func json(_ value: Value) throws -> ByteBuffer {
        if let found = self.cache.withLock({ $0.current[value] ?? $0.previous[value] }) { return found }
        let encoded = ByteBuffer(bytes: try API.encoder().encode(value))
        self.cache.withLock { cache in
            if cache.current.count >= self.generation {
                cache.previous = cache.current
                cache.current = [:]
            }
            cache.current[value] = encoded
        }
        return encoded
    }
}
