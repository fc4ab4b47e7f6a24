import Glibc
import Testing
import TouchlockCore
import TouchlockRender
import TouchlockSystem

@Suite struct TextImagesProcessTests {
    /// The masks of the lock screen's text are kept beside the state file, for root only;
    /// the next start reads them; a damaged file costs a warning and is written anew.
    @Test func theTextsMasksAreKeptBesideTheStateFileAndADamagedFileIsWrittenAnew() throws {
        try #require(access(Theme.defaultFontFile, R_OK) == 0, "fonts-dejavu-core is not installed")
        let d = try DaemonProcess(config: "")
        let path = DurableFile.directory(of: d.statePath) + "/text-images"
        try d.start(replay: nil)
        // Written just after READY=1 (which it does not hold back).
        var waited = 0
        while access(path, F_OK) != 0 && waited < 5000 { usleep(10_000); waited += 10 }
        let first = try #require(try DurableFile.read(path), "no \(path) once ready; log:\n\(d.log)")
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o600)
        let kept = try TextImages(decoding: first)
        #expect(kept.count > 0)
        #expect(mapped(d.pid).contains(Theme.defaultFontFile), "the first start drew with the font")
        d.kill(SIGTERM)
        #expect(d.waitExit() == 0)

        // Read back by the next start, which draws nothing new: the file is left as it is,
        // and the text is laid out and drawn without opening the font (its widths are kept
        // with the masks).
        var before = stat()
        _ = stat(path, &before)
        try d.start(replay: nil)
        #expect(!mapped(d.pid).contains(Theme.defaultFontFile), "the second start opened the font:\n\(mapped(d.pid))")
        d.kill(SIGTERM)
        #expect(d.waitExit() == 0)
        var after = stat()
        _ = stat(path, &after)
        #expect(after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec,
                "the file was written again though nothing new was drawn")

        // Damaged: refused whole, said once, and written anew from the glyphs.
        var damaged = first
        damaged[damaged.count / 2] ^= 0xff
        try DurableFile.replace(path, with: damaged)
        try d.start(replay: nil)
        waited = 0
        while (try? TextImages(decoding: DurableFile.read(path) ?? [])) == nil && waited < 5000 { usleep(10_000); waited += 10 }
        #expect(d.log.contains("text-images: checksum mismatch; the text is drawn from its glyphs and kept again"), "\(d.log)")
        let rewritten = try #require(try DurableFile.read(path))
        #expect(try TextImages(decoding: rewritten).count == kept.count)
        d.kill(SIGTERM)
        #expect(d.waitExit() == 0)
    }
}

/// The files mapped into process `pid` (/proc/PID/maps).
private func mapped(_ pid: pid_t) -> String {
    guard let f = fopen("/proc/\(pid)/maps", "r") else { return "" }
    defer { fclose(f) }
    var out = ""
    var line = [CChar](repeating: 0, count: 4096)
    while fgets(&line, Int32(line.count), f) != nil { out += String(cString: line) }
    return out
}
