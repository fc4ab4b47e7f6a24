import Glibc
import Testing

/// Modules/CWayland's protocol glue (ext-session-lock-v1, viewporter, fractional-scale-v1)
/// is committed: its code must be what
/// scripts/wayland-protocols makes now from wayland-protocols' XML with wayland-scanner.
/// Comments (the XML's documentation and licence, which later wayland-protocols reword)
/// and the system headers included (wayland-scanner 1.23 adds stdbool.h) do not count.
@Suite struct WaylandGlueTests {
    static let root: String = {
        var dir = #filePath
        for _ in 0..<3 { dir = String(dir[..<dir.lastIndex(of: "/")!]) }
        return dir
    }()

    static func contents(_ path: String) -> [UInt8]? {
        guard let f = fopen(path, "rb") else { return nil }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, f)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return bytes
    }

    /// The C code of `bytes`: no comments, no system includes, no blank lines.
    static func code(_ bytes: [UInt8]) -> [String] {
        var kept: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "/"), i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "*") {
                i += 2
                while i + 1 < bytes.count, !(bytes[i] == UInt8(ascii: "*") && bytes[i + 1] == UInt8(ascii: "/")) { i += 1 }
                i += 2
                continue
            }
            kept.append(bytes[i])
            i += 1
        }
        return String(decoding: kept, as: UTF8.self).split(separator: "\n").map { String($0.reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed()) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#include <") }
    }

    @Test func committedGlueIsWhatTheScannerMakesFromTheInstalledXML() throws {
        var template = Array("/tmp/touchlock-wl-glue.XXXXXX".utf8CString)
        let dir = String(cString: try #require(mkdtemp(&template)))
        defer { _ = system("rm -rf '\(dir)'") }
        let status = system("'\(Self.root)/scripts/wayland-protocols' '\(dir)'")
        try #require(status == 0, "scripts/wayland-protocols failed")
        let protocols = ["ext-session-lock-v1", "viewporter", "fractional-scale-v1"]
        for file in protocols.flatMap({ ["include/\($0)-client-protocol.h", "\($0)-protocol.c"] }) {
            let made = try #require(Self.contents("\(dir)/\(file)"))
            let committed = Self.contents("\(Self.root)/Modules/CWayland/\(file)")
            #expect(made.count > 1000, "\(file): the scanner made nearly nothing")
            let same = committed.map(Self.code) == Self.code(made)
            #expect(same, "Modules/CWayland/\(file) is stale: run scripts/wayland-protocols and commit it")
        }
    }
}
