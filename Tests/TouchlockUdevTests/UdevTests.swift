import Glibc
import Testing
import TouchlockSystem
@testable import TouchlockUdev

/// Against the real libudev of the machine the tests run on: udevd may or may not run.
@Suite struct UdevTests {
    func number(_ path: String) -> dev_t {
        var st = stat()
        #expect(stat(path, &st) == 0)
        return st.st_rdev
    }

    /// udevd runs when its control socket is there (what libudev's udev_queue asks).
    var udevdRuns: Bool { access("/run/udev/control", F_OK) == 0 }

    @Test func aCharacterDeviceIsFoundByItsNumberWithTheKernelsProperties() throws {
        let udev = try Udev()
        let r = try udev.record(ofCharacterDevice: number("/dev/null"), "/dev/null")
        #expect(r.properties["DEVNAME"] == "/dev/null")
        #expect(r.properties["SUBSYSTEM"] == "mem")
        #expect(r.properties["MAJOR"] == "1")
        #expect(r.properties["MINOR"] == "3")
        if !udevdRuns {
            // No udevd, no database: nothing is initialised, and no udev properties are given.
            #expect(!r.initialized)
            #expect(r.udevProperties == nil)
        }
    }

    @Test func withoutUdevdNoInputDeviceIsInitialised() throws {
        guard !udevdRuns else { return }
        let udev = try Udev()
        for name in ["/dev/null", "/dev/zero", "/dev/tty", "/dev/urandom"] where access(name, F_OK) == 0 {
            #expect(try udev.record(ofCharacterDevice: number(name), name).udevProperties == nil)
        }
    }

    @Test func aNumberTheKernelDoesNotHaveIsAnError() throws {
        let udev = try Udev()
        // Major 4095, minor 1048575: the largest a dev_t holds, assigned to no driver.
        let none = dev_t(4095 << 8) | dev_t(0xff) | (dev_t(0xfffff00) << 12) | (dev_t(0xfff00000) << 32)
        #expect(throws: SystemError.self) { try udev.record(ofCharacterDevice: none, "4095:1048575") }
    }

    @Test func udevdsQueueIsWatchedOnlyWhereUdevdRuns() throws {
        let udev = try Udev()
        #expect(UdevQueue.udevdIsActive(udev) == udevdRuns)
        if access("/run/udev", F_OK) != 0 {
            // No run directory to watch: the queue cannot be made, and nothing waits for it.
            #expect(throws: SystemError.self) { try UdevQueue(udev) }
        } else {
            let queue = try UdevQueue(udev)
            #expect(queue.fd >= 0)
            queue.flush()
        }
    }
}
