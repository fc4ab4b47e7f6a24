import Glibc
import Testing
import TouchlockSystem

/// What the built binaries load, as `ldd` shows it to an administrator: the protocol's
/// JSON needs no Foundation, and drawing into memory needs no X11.
@Suite final class LinkedLibrariesTests {
    let dir: String
    init() throws {
        var template = Array("/tmp/touchlock-ldd-test.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw SystemError("mkdtemp", .current) }
        dir = String(cString: made)
    }
    deinit { _ = system("rm -rf '\(dir)'") }

    @Test(arguments: ["touchlockd", "touchlockctl"])
    func neitherFoundationNorX11IsLoaded(_ name: String) throws {
        let binary = DurableFile.directory(of: DaemonProcess.binary) + "/" + name
        let r = try run(["/usr/bin/ldd", binary], in: dir)
        #expect(r.status == 0, "\(r.output)")
        let libraries = r.output.split(separator: "\n").compactMap { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init) }
        #expect(libraries.contains { $0.hasPrefix("libfontconfig.so") }, "\(r.output)")  // ldd did list them
        #if TOUCHLOCK_STATIC_CAIRO
        let unwantedLibraries = ["Foundation", "libcairo", "libpixman", "libX11", "libxcb", "libXext", "libXrender"]
        #else
        // Built where Debian ships no static cairo (Debian 13, see Package.swift): the shared
        // libcairo and its X11 closure are loaded.
        let unwantedLibraries = ["Foundation"]
        #endif
        for unwanted in unwantedLibraries {
            #expect(!libraries.contains { $0.contains(unwanted) }, "\(name) loads \(unwanted): \(r.output)")
        }
    }
}
