import TouchlockControl
import TouchlockCore
import TouchlockSystem

/// The message set over the socket (`touchlockctl message`), kept between starts in a
/// file beside the state file: its UTF-8 text, 0600, written as the state file is (a new
/// file, fsync, rename), off the event loop (`LatestFileWriter`); trusted as the state file
/// is (root's or ours, written by nobody else), and checked again as a message when read.
/// No file, or an empty one: no message.
struct MessageFile {
    let path: String
    /// False beside a state file that is not trusted: nothing is read or written there.
    let trusted: Bool

    init(statePath: String, trusted: Bool = true) {
        path = DurableFile.directory(of: statePath) + "/message"
        self.trusted = trusted
    }

    /// The message kept by the last run, if any and usable (else said in the log).
    func load() -> String? {
        guard trusted else { return nil }
        do {
            guard let (bytes, info) = try DurableFile.readWithOwner(path) else { return nil }
            if let why = FileTrust.distrust(path, file: info) {
                Log.warning("\(why); the message in it is not shown")
                return nil
            }
            if bytes.isEmpty { return nil }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                Log.warning("\(path): not UTF-8 text; no message is shown")
                return nil
            }
            do throws(ScreenMessage.Refusal) { return try ScreenMessage.check(text) } catch {
                Log.warning("\(path): \(error); no message is shown")
                return nil
            }
        } catch {
            Log.warning("\(path): \(error); no message is shown")
            return nil
        }
    }

    /// The file's contents for `text` (nil: empty, no message).
    static func bytes(_ text: String?) -> [UInt8] { Array((text ?? "").utf8) }

    /// The message in contents written by `bytes`.
    static func text(_ bytes: [UInt8]) -> String? { bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
}

/// What the lock screen's information area says: the local time each minute (a
/// `MinuteTimer`, stopped while the screen is off and when there is no clock: then
/// nothing wakes the daemon for it), and the message: the one set over the socket, else
/// the configured one. Tells the daemon each change (`show`).
final class ScreenInfoKeeper {
    let clock: ClockMode
    /// strftime patterns of the time and the date.
    let patterns: (time: String, date: String)
    let configMessage: String?
    private(set) var socketMessage: String?
    let file: MessageFile
    /// Writes the message file off the loop, the latest message asked for winning; nil if
    /// it cannot be had (nothing is written then).
    private let writer: LatestFileWriter?
    private var timer: MinuteTimer?
    /// Told the text whenever it changes.
    var show: ((InfoText) -> Void)?

    init(config: Config, loop: EventLoop, trusted: Bool) {
        clock = config.screens.clock
        configMessage = config.screens.message
        file = MessageFile(statePath: config.statePath, trusted: trusted)
        socketMessage = file.load()
        if file.trusted {
            do { writer = try LatestFileWriter(path: file.path, mode: 0o600, loop: loop) } catch {
                Log.warning("\(file.path): \(error); a message cannot be set")
                writer = nil
            }
        } else {
            writer = nil
        }
        var twelve = false
        if clock != .off {
            LocalTime.useLocale()
            switch config.screens.clockHours {
            case .auto: twelve = ClockHours.twelveHours(localeTimeFormat: LocalTime.localeTimeFormat)
            case .twelve: twelve = true
            case .twentyFour: twelve = false
            }
        }
        patterns = ClockHours.patterns(twelve: twelve)
        if clock != .off {
            do {
                timer = try MinuteTimer(loop: loop) { [unowned self] _ in self.tell() }
            } catch {
                Log.warning("clock: \(error); no clock is shown")
            }
        }
        if clock != .off { Log.info("clock: \(clock.rawValue), \(twelve ? 12 : 24) hours") }
    }

    /// The message shown.
    var message: String? { socketMessage ?? configMessage }

    /// The text now.
    var text: InfoText {
        var t = InfoText(message: message)
        guard timer != nil else { return t }
        let now = Int(WallClock.now().rounded(.down))
        t.time = LocalTime.format(patterns.time, at: now)
        if clock == .dateTime { t.date = LocalTime.format(patterns.date, at: now) }
        return t
    }

    private func tell() { show?(text) }

    /// Shows the text and starts the clock.
    func start() {
        timer?.start()
        tell()
    }

    /// The screen is off: no wake-ups for the clock.
    func pause() { timer?.stop() }

    /// The screen is on again: the time now, and the clock again.
    func resume() {
        guard let timer, !timer.running else { return }
        timer.start()
        tell()
    }

    /// Sets (or, with nil, removes) the message set over the socket: stored first, off the
    /// loop, then shown; `done` is called on the loop once it is stored (or a message set
    /// after it is: only the latest is written when several come during one write), with
    /// nil, or the error.
    func setMessage(_ text: String?, by who: String, done: @escaping (ControlError?) -> Void) {
        guard let writer else {
            let why = file.trusted ? "the message file cannot be written" : "the state file is not trusted: nothing is written beside it"
            Log.warning("\(file.path): \(why)")
            return done(ControlError(.storeFailed, "cannot write \(file.path): \(why)"))
        }
        let bytes = MessageFile.bytes(text)
        writer.write(bytes) { [unowned self] error, written in
            if let error {
                Log.warning("\(self.file.path): \(error)")
                return done(ControlError(.storeFailed, "cannot write \(self.file.path): \(error)"))
            }
            if written == bytes {
                Log.info("message \(text == nil ? "removed" : "set (\(text!.unicodeScalars.count) characters)") by \(who)")
            } else {
                Log.debug("message from \(who) stored over by a later one before it was written")
            }
            let shown = MessageFile.text(written)
            if shown != self.socketMessage {
                self.socketMessage = shown
                self.tell()
            }
            done(nil)
        }
    }

    /// Writes a message still waiting (at shutdown).
    func finish() { writer?.finish() }

    /// Message files written since the start.
    var messageWrites: Int { writer?.writes ?? 0 }
}
