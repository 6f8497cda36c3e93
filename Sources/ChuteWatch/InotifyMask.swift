import Glibc

/// The bits of an inotify mask: the events a watch asks for, the flags that shape it, and the flags the kernel
/// adds to an event.
///
/// Glibc imports most of these constants as `Int32` while `inotify_event.mask` is a `UInt32`; this type does the
/// conversion once.
struct InotifyMask: OptionSet, Sendable {
    var rawValue: UInt32

    init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// A file opened for writing was closed. The corresponding C constant is `IN_CLOSE_WRITE`.
    static let closeWrite = InotifyMask(rawValue: UInt32(IN_CLOSE_WRITE))
    /// An entry was renamed away from the watched folder. The corresponding C constant is `IN_MOVED_FROM`.
    static let movedFrom = InotifyMask(rawValue: UInt32(IN_MOVED_FROM))
    /// An entry was renamed into the watched folder. The corresponding C constant is `IN_MOVED_TO`.
    static let movedTo = InotifyMask(rawValue: UInt32(IN_MOVED_TO))
    /// An entry was created in the watched folder. The corresponding C constant is `IN_CREATE`.
    static let create = InotifyMask(rawValue: UInt32(IN_CREATE))
    /// An entry was deleted from the watched folder. The corresponding C constant is `IN_DELETE`.
    static let delete = InotifyMask(rawValue: UInt32(IN_DELETE))
    /// The watched folder itself was deleted. The corresponding C constant is `IN_DELETE_SELF`.
    static let deleteSelf = InotifyMask(rawValue: UInt32(IN_DELETE_SELF))
    /// The watched folder itself was renamed. The corresponding C constant is `IN_MOVE_SELF`.
    static let moveSelf = InotifyMask(rawValue: UInt32(IN_MOVE_SELF))

    /// Watch the path only if it is a folder. The corresponding C constant is `IN_ONLYDIR`.
    static let onlyDirectory = InotifyMask(rawValue: UInt32(IN_ONLYDIR))
    /// Do not follow a symbolic link at the path. The corresponding C constant is `IN_DONT_FOLLOW`.
    static let dontFollow = InotifyMask(rawValue: UInt32(IN_DONT_FOLLOW))
    /// Stop reporting events for a child once it is unlinked. The corresponding C constant is `IN_EXCL_UNLINK`.
    static let excludeUnlinked = InotifyMask(rawValue: UInt32(IN_EXCL_UNLINK))

    /// The event's subject is a folder. The corresponding C constant is `IN_ISDIR`.
    static let isDirectory = InotifyMask(rawValue: UInt32(IN_ISDIR))
    /// The watch was removed (explicitly, or because its folder was deleted or unmounted). The corresponding C
    /// constant is `IN_IGNORED`.
    static let ignored = InotifyMask(rawValue: UInt32(IN_IGNORED))
    /// The event queue overflowed and events were lost. The corresponding C constant is `IN_Q_OVERFLOW`.
    static let queueOverflow = InotifyMask(rawValue: UInt32(IN_Q_OVERFLOW))

    /// What every watched folder asks for.
    static let folderEvents: InotifyMask = [
        .closeWrite, .movedTo, .movedFrom, .create, .delete, .deleteSelf, .moveSelf, .onlyDirectory, .excludeUnlinked,
    ]
}
