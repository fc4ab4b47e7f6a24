import Glibc
import Testing
import TouchlockControl

@Suite struct ServiceTests {
    /// Under systemd's watchdog the loop sends WATCHDOG=1 every half period, journald
    /// gets priority prefixes, and STOPPING=1 comes on SIGTERM with exit status 0.
    @Test func watchdogStoppingAndJournalPriorities() throws {
        let d = try DaemonProcess(config: "")
        try d.start(replay: nil, environment: ["WATCHDOG_USEC=200000", "JOURNAL_STREAM=8:1234"])
        #expect(try d.waitNotify("WATCHDOG=1", timeout: 1000))
        #expect(try d.waitNotify("WATCHDOG=1", timeout: 300))
        d.kill(SIGTERM)
        #expect(try d.waitNotify("STOPPING=1", timeout: 2000))
        #expect(d.waitExit() == 0)
        #expect(d.log.contains("<6>first frame shown"))
        #expect(d.log.contains("<4>no pattern enrolled"))
    }

    /// The lock screen is drawn before the input and the socket are opened, but READY=1
    /// waits for all of it: a client told the daemon is ready connects at once.
    @Test func readyComesOnceTheLockScreenIsShownAndTheSocketAnswers() throws {
        let d = try DaemonProcess(config: "")
        try d.start(replay: nil)  // returns on READY=1
        let s = try d.status()  // no retry: the socket is there
        #expect(s.state == .locked)
        #expect(s.display == .shown)
        let log = d.log
        #expect(log.contains("first frame shown"))
        #expect(log.contains("control: listening"))
        d.kill(SIGTERM)
        #expect(d.waitExit() == 0)
    }
}
