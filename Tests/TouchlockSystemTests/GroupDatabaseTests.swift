import Glibc
import Testing
import TouchlockSystem

@Suite struct GroupDatabaseTests {
    @Test func aGroupIsFoundByItsNameAndAMissingOneIsNone() throws {
        #expect(try GroupDatabase.id(named: "root") == 0)
        #expect(try GroupDatabase.id(named: "touchlock-no-such-group") == nil)
    }
}
