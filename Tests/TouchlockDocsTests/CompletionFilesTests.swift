import Foundation
import Testing
import TouchlockCommandLine

/// completions/ holds what Completions writes from touchlockctl's declaration, so a
/// command or an option added there is completed once the files are written anew
/// (TOUCHLOCK_UPDATE_GOLDEN=1), and this test fails until they are.
@Suite struct CompletionFilesTests {
    @Test(arguments: Completions.Shell.allCases)
    func theCommittedFileIsWhatTheDefinitionsWrite(_ shell: Completions.Shell) throws {
        let file = "completions/" + Completions.fileName(Tree.ctl, for: shell)
        let written = Completions.script(Tree.ctl, for: shell)
        if Tree.updating { try written.write(toFile: Tree.path(file), atomically: true, encoding: .utf8) }
        let committed = try Tree.text(file)
        #expect(committed == written, """
            \(file) is not what touchlockctl's definitions write: run
            TOUCHLOCK_UPDATE_GOLDEN=1 swift test --filter CompletionFilesTests (and look at the diff)
            """)
    }
}
