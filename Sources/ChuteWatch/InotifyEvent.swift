import CChuteLinux
import Glibc
import SystemPackage

/// One event read from an inotify instance.
struct InotifyEvent: Sendable {
    /// The watch that reported the event; `-1` for a queue overflow.
    var watch: Inotify.WatchDescriptor
    /// What happened, and to what kind of entry.
    var mask: InotifyMask
    /// Pairs the `movedFrom` and `movedTo` events of one rename; `0` otherwise.
    var cookie: UInt32
    /// The entry's name in the watched folder; `nil` for events about the folder itself.
    var name: FilePath.Component?

    /// Splits the bytes that one `read` returned into events.
    ///
    /// Each record is a 16-byte `struct inotify_event` followed by `len` bytes of NUL-padded name. The name is a
    /// flexible array member, which Swift does not import: `chute_inotify_event_name` returns it.
    ///
    /// - Parameter bytes: whole records, as `read` returns them; the memory is rebound to `inotify_event`.
    /// - Returns: the events in queue order.
    static func parse(_ bytes: UnsafeMutableRawBufferPointer) -> [InotifyEvent] {
        guard let base = bytes.baseAddress else { return [] }
        let headerSize = MemoryLayout<inotify_event>.size
        var events: [InotifyEvent] = []
        var offset = 0
        while offset + headerSize <= bytes.count {
            let record = (base + offset).bindMemory(to: inotify_event.self, capacity: 1)
            events.append(
                InotifyEvent(
                    watch: Inotify.WatchDescriptor(rawValue: record.pointee.wd),
                    mask: InotifyMask(rawValue: record.pointee.mask),
                    cookie: record.pointee.cookie,
                    name: FilePath.Component(platformString: chute_inotify_event_name(record))
                )
            )
            offset += headerSize + Int(record.pointee.len)
        }
        return events
    }
}
