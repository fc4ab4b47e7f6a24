import Glibc
import Testing
import TouchlockSystem

@Suite struct DurableFileTests {
    @Test func theStateDirectoryIsMadeWithItsMissingParents() throws {
        var template = Array("/tmp/touchlock-durable-XXXXXX".utf8CString)
        guard let d = mkdtemp(&template) else { Issue.record("mkdtemp failed"); return }
        let root = String(cString: d)
        // As from an initramfs, where /var/lib does not exist.
        let path = "\(root)/var/lib/touchlock/state"
        try DurableFile.makeDirectory(DurableFile.directory(of: path))
        try DurableFile.replace(path, with: Array("failures = 1\n".utf8))
        #expect(try DurableFile.read(path) == Array("failures = 1\n".utf8))
        var st = stat()
        #expect(stat("\(root)/var/lib/touchlock", &st) == 0 && st.st_mode & 0o777 == 0o700)
        #expect(stat("\(root)/var/lib", &st) == 0 && st.st_mode & 0o777 == 0o755)
        for p in [path, "\(root)/var/lib/touchlock", "\(root)/var/lib", "\(root)/var", root] {
            if unlink(p) != 0 { rmdir(p) }
        }
    }
}
