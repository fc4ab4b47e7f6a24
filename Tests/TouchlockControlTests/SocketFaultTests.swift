import Glibc
import Testing
import TouchlockControl
import TouchlockCore
import TouchlockSystem

private func isSocket(_ path: String) -> Bool {
    var st = stat()
    return lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFSOCK
}

@Suite(.enabled(if: SystemCalls.isReplaceable, "the syscall tables are replaceable in debug builds only"))
struct SocketFaultTests {
    /// A socket that cannot listen leaves no file behind, under either of its names.
    @Test func aFailedListenLeavesNoSocketFile() throws {
        var s = SystemCalls.real
        s.listen = { _, _ in errno = ENOBUFS; return -1 }
        var template = Array("/tmp/touchlock-ctl-test.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
        let dir = String(cString: made)
        defer { rmdir(dir) }
        let path = dir + "/touchlock.sock"
        let loop = try EventLoop(signals: [])
        do {
            _ = try SystemCalls.$current.withValue(s) {
                try ControlServer(path: path, loop: loop) {
                    Status(session: Session(), screen: Size(width: 800, height: 480),
                           grid: PatternGrid.layout(on: Size(width: 800, height: 480)))
                }
            }
            Issue.record("a server that cannot listen was made")
        } catch let error as SystemError {
            #expect(error.call == "listen" && error.errno == Errno(rawValue: ENOBUFS))
        }
        #expect(!isSocket(path) && !isSocket(path + ".\(getpid())"))
        var st = stat()
        #expect(lstat(path, &st) != 0 && lstat(path + ".\(getpid())", &st) != 0)
    }
}
