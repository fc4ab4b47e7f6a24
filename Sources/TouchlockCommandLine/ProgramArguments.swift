import CArguments

/// The program's arguments, its name first, as the C library handed them to the
/// process: captured before main (Modules/CArguments), so they are read without /proc,
/// in a chroot or a container that has none. `CommandLine.arguments` reads them from
/// /proc/self/cmdline on Linux, and is empty without it; it is the fallback only where
/// they could not be captured (a C library other than glibc).
public enum ProgramArguments {
    public static let all: [String] = {
        guard let argv = carguments_argv() else { return CommandLine.arguments }
        return (0..<Int(carguments_argc())).map { i in
            argv[i].map { String(cString: $0) } ?? ""
        }
    }()

    /// Without the program's name: what the parser reads.
    public static var afterName: [String] { Array(all.dropFirst()) }
}
