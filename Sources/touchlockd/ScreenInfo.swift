import TouchlockControl
import TouchlockCore
import TouchlockSystem

/// The message set over the socket (`touchlockctl message`), kept between starts in a
/// file beside the state file: its UTF-8 text, 0600, written as the state file is (a new
/// file, fsync, rename); trusted as the state file is (root's or ours, written by nobody
/// else), and checked again as a message when read. No file, or an empty one: no message.
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

    /// Writes `text` (nil: an empty file, no message); the error, if it could not be.
    func save(_ text: String?) -> String? {
        guard trusted else { return "the state file is not trusted: nothing is written beside it" }
        do {
            try DurableFile.makeDirectory(DurableFile.directory(of: path))
            try DurableFile.replace(path, with: Array((text ?? "").utf8), mode: 0o600)
            return nil
        } catch {
            return "\(error)"
        }
    }
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
    private var timer: MinuteTimer?
    /// Told the text whenever it changes.
    var show: ((InfoText) -> Void)?

    init(config: Config, loop: EventLoop, trusted: Bool) {
        clock = config.screens.clock
        configMessage = config.screens.message
        file = MessageFile(statePath: config.statePath, trusted: trusted)
        socketMessage = file.load()
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

    /// Sets (or, with nil, removes) the message set over the socket: stored first, then
    /// shown; nil on success.
    func setMessage(_ text: String?, by who: String) -> ControlError? {
        if let error = file.save(text) {
            Log.warning("\(file.path): \(error)")
            return ControlError(.storeFailed, "cannot write \(file.path): \(error)")
        }
        socketMessage = text
        Log.info("message \(text == nil ? "removed" : "set (\(text!.unicodeScalars.count) characters)") by \(who)")
        tell()
        return nil
    }
}
