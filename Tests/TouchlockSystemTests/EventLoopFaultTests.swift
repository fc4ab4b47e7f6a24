import Glibc
import Testing
import TouchlockSystem

/// The descriptors a loop makes, with one of its calls failing with EMFILE (a process
/// at its descriptor limit): the real calls otherwise, every descriptor made and closed
/// recorded.
private final class Descriptors: @unchecked Sendable {
    var made: [Int32] = []
    var closed: [Int32] = []
    let failing: String

    init(failing: String) { self.failing = failing }

    func table() -> SystemCalls {
        var s = SystemCalls.real
        let real = s
        @Sendable func made(_ fd: Int32) -> Int32 {
            if fd >= 0 { self.made.append(fd) }
            return fd
        }
        @Sendable func refused() -> Int32 { errno = EMFILE; return -1 }
        s.epollCreate = { self.failing == "epoll_create1" ? refused() : made(real.epollCreate($0)) }
        s.timerfdCreate = { self.failing == "timerfd_create" ? refused() : made(real.timerfdCreate($0, $1)) }
        s.signalfd = { fd, mask, flags in
            if fd == -1 && self.failing == "signalfd" { return refused() }
            return fd == -1 ? made(real.signalfd(fd, mask, flags)) : real.signalfd(fd, mask, flags)
        }
        s.close = { fd in
            self.closed.append(fd)
            return real.close(fd)
        }
        return s
    }
}

@Suite(.enabled(if: SystemCalls.isReplaceable, "the syscall tables are replaceable in debug builds only"))
struct EventLoopFaultTests {
    @Test(arguments: ["epoll_create1", "timerfd_create", "signalfd"])
    func aLoopThatCannotMakeADescriptorSaysWhichAndLeavesNoneOpen(_ call: String) throws {
        let descriptors = Descriptors(failing: call)
        do {
            _ = try SystemCalls.$current.withValue(descriptors.table()) { try EventLoop(signals: []) }
            Issue.record("a loop was made without \(call)")
        } catch let error as SystemError {
            #expect(error.call == call && error.errno == .tooManyOpenFiles)
        }
        #expect(Set(descriptors.closed) == Set(descriptors.made), "made \(descriptors.made), closed \(descriptors.closed)")
        #expect(descriptors.made.count == ["epoll_create1", "timerfd_create", "signalfd"].firstIndex(of: call))
    }

    @Test func aLoopMadeAndDroppedClosesItsThreeDescriptors() throws {
        let descriptors = Descriptors(failing: "")
        try SystemCalls.$current.withValue(descriptors.table()) {
            _ = try EventLoop(signals: [])
        }
        #expect(descriptors.made.count == 3)
        #expect(Set(descriptors.closed) == Set(descriptors.made))
    }

    @Test func theMinuteTimerWithoutATimerSaysWhy() throws {
        let loop = try EventLoop(signals: [])
        var s = SystemCalls.real
        s.timerfdCreate = { _, _ in errno = EMFILE; return -1 }
        do {
            _ = try SystemCalls.$current.withValue(s) { try MinuteTimer(loop: loop) { _ in } }
            Issue.record("a minute timer was made without a timer")
        } catch let error as SystemError {
            #expect(error.call == "timerfd_create" && error.errno == .tooManyOpenFiles)
        }
    }
}
