import ChuteCore
import Testing

/// The permissions that ownership inheritance gives files and folders.
@Suite struct OutputOwnershipModeTests {
    @Test(
        arguments: [
            (0o755, 0o644), (0o775, 0o664), (0o700, 0o600), (0o2775, 0o664), (0o777, 0o666),
            // Sticky and world-writable, as /tmp: others may add files, not change this one.
            (0o1777, 0o664),
        ] as [(UInt32, UInt32)]
    )
    func filesTakeTheFoldersReadAndWriteBits(folder: UInt32, file: UInt32) {
        #expect(OutputOwnership().fileMode(inFolderWithMode: folder) == file)
        #expect(OutputOwnership(mode: 0o640).fileMode(inFolderWithMode: folder) == 0o640)
    }

    @Test func createdFoldersTakeTheParentsBitsOrSearchBitsForTheRulesMode() {
        #expect(OutputOwnership().folderMode(inFolderWithMode: 0o2775) == 0o2775)
        #expect(OutputOwnership(mode: 0o640).folderMode(inFolderWithMode: 0o755) == 0o750)
        #expect(OutputOwnership(mode: 0o604).folderMode(inFolderWithMode: 0o755) == 0o705)
    }
}
