import Foundation
import TouchlockCommandLine
@testable import touchlockctl
@testable import touchlockd

/// The files of the tree, and the two programs' declarations.
enum Tree {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }

    static func text(_ relative: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(relative), encoding: .utf8)
    }

    static var ctl: CommandSpec { touchlockctl.Commands.program }
    static var daemon: CommandSpec { touchlockd.Options.command }

    /// TOUCHLOCK_UPDATE_GOLDEN=1: files generated from the definitions are written anew.
    static var updating: Bool { ProcessInfo.processInfo.environment["TOUCHLOCK_UPDATE_GOLDEN"] != nil }
}
