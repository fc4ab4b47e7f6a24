import TouchlockCore

/// Command-line options of touchlockd.
struct Options {
    enum DisplayChoice: String { case auto, drm, headless }
    enum InputChoice: String { case auto, evdev, replay }

    var configFiles: [String] = []
    /// Prefix of /usr/share/touchlock and /etc/touchlock (tests, images).
    var configRoot = ""
    var display = DisplayChoice.auto
    var input = InputChoice.auto
    var replayPath: String?
    var headlessSize = Size(width: 1280, height: 800)
    var headlessOut: String?
    var socketPath: String?
    var statePath: String?
    var once = false
    var verbose = false
    var checkConfig = false

    static let usage = """
    usage: touchlockd [options]
      -C FILE              read settings from FILE after /usr/share/touchlock and
                           /etc/touchlock (may be given several times; later wins)
      --config-root DIR    look for those two directories under DIR
      --display MODE       auto (default), drm, headless
      --input MODE         auto (default), evdev, replay
      --replay FILE        an evemu recording to play as the touch input
      --size WxH           headless screen size (default 1280x800)
      --out DIR            headless: write every frame shown as DIR/frame-NNNNN.png
      --socket PATH        control socket (default /run/touchlock/touchlock.sock)
      --state FILE         lockout and secrets (default /var/lib/touchlock/state)
      --once               exit 0 at the first unlock
      --check-config       print the merged settings and exit
      -v, --verbose        debug logging
    """

    struct UsageError: Error, CustomStringConvertible { var description: String }

    static func parse(_ args: [String]) throws(UsageError) -> Options {
        var o = Options()
        var i = 0
        func value(_ flag: String) throws(UsageError) -> String {
            i += 1
            guard i < args.count else { throw UsageError(description: "\(flag) needs a value") }
            return args[i]
        }
        while i < args.count {
            let a = args[i]
            switch a {
            case "-C", "--config": o.configFiles.append(try value(a))
            case "--config-root": o.configRoot = try value(a)
            case "--display":
                let v = try value(a)
                guard let d = DisplayChoice(rawValue: v) else { throw UsageError(description: "--display: unknown mode '\(v)'") }
                o.display = d
            case "--input":
                let v = try value(a)
                guard let m = InputChoice(rawValue: v) else { throw UsageError(description: "--input: unknown mode '\(v)'") }
                o.input = m
            case "--replay": o.replayPath = try value(a); if o.input == .auto { o.input = .replay }
            case "--size":
                let v = try value(a)
                let p = v.split(separator: "x")
                guard p.count == 2, let w = Int(p[0]), let h = Int(p[1]), w >= 64, h >= 64, w <= 8192, h <= 8192 else {
                    throw UsageError(description: "--size: expected WxH, found '\(v)'")
                }
                o.headlessSize = Size(width: w, height: h)
            case "--out": o.headlessOut = try value(a)
            case "--socket": o.socketPath = try value(a)
            case "--state": o.statePath = try value(a)
            case "--once": o.once = true
            case "--check-config": o.checkConfig = true
            case "-v", "--verbose": o.verbose = true
            case "-h", "--help": throw UsageError(description: usage)
            default: throw UsageError(description: "unknown option '\(a)'\n\(usage)")
            }
            i += 1
        }
        return o
    }
}
