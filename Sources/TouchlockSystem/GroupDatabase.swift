import Glibc

/// The group database (/etc/group, or what NSS is told to ask), for the socket's group.
public enum GroupDatabase {
    /// The id of the group called `name`; nil when there is none.
    public static func id(named name: String) throws(SystemError) -> gid_t? {
        var group = Glibc.group()
        var found: UnsafeMutablePointer<Glibc.group>?
        var buffer = [CChar](repeating: 0, count: 1024)
        while true {
            do {
                try SystemCall.checkCode("getgrnam_r", name) { getgrnam_r(name, &group, &buffer, buffer.count, &found) }
                return found?.pointee.gr_gid
            } catch where error.errno == Errno(rawValue: ERANGE) && buffer.count < 1 << 20 {
                // A group with many members: a bigger buffer.
                buffer = [CChar](repeating: 0, count: buffer.count * 4)
            }
        }
    }
}
