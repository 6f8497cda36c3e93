import Glibc

/// Looks up user and group names in the system's account database (`/etc/passwd`, `/etc/group`, or NSS).
package enum AccountLookup {
    /// The uid of the user `name`, or `nil` when there is none. The corresponding C function is `getpwnam_r`.
    package static func userID(named name: String) -> UInt32? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let status = getpwnam_r(name, &entry, &buffer, buffer.count, &result)
        guard status == 0, result != nil else { return nil }
        return entry.pw_uid
    }

    /// The gid of the group `name`, or `nil` when there is none. The corresponding C function is `getgrnam_r`.
    package static func groupID(named name: String) -> UInt32? {
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        let status = getgrnam_r(name, &entry, &buffer, buffer.count, &result)
        guard status == 0, result != nil else { return nil }
        return entry.gr_gid
    }
}
