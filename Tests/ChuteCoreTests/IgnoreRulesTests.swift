import ChuteCore
import Testing

@Suite struct IgnoreRulesTests {
    @Test(
        arguments: [
            ".foo.jpg.AbC123",  // rsync's in-progress name for foo.jpg
            "x.part", "video.mkv.crdownload", "x.tmp", ".x.swp", "~$report.docx",
            "._x", ".DS_Store", "Thumbs.db", "THUMBS.DB", "desktop.ini", ".~lock.sheet.ods#",
            ".chute-3F2A.tmp", "photo.jpg.chute.json",
        ]
    )
    func ignoresTemporaryAndClutterFiles(name: String) {
        #expect(IgnoreRules().ignoresFile(named: name))
    }

    @Test(
        arguments: [
            "photo.jpg", "IMG_0001.HEIC", "partial.jpg", "photo.part.jpg", ".hidden.jpg", ".foo.jpg.AbC12",
            ".foo.jpg.AbC12!", "report.chute.json.pdf",
        ]
    )
    func takesOrdinaryFiles(name: String) {
        #expect(!IgnoreRules().ignoresFile(named: name))
    }

    @Test func ignoresNASAndTrashFolders() {
        let rules = IgnoreRules()
        for folder in ["@eaDir", "#recycle", ".Trash-1000", "$RECYCLE.BIN", "SYNOPHOTO_THUMB_XL", "lost+found"] {
            #expect(rules.ignoresFolder(named: folder), "\(folder)")
        }
        #expect(!rules.ignoresFolder(named: "photos"))
        #expect(!rules.ignoresFolder(named: "eaDir"))
        // Folder names are not file names: a file called @eaDir is not ignored as a file.
        #expect(!rules.ignoresFile(named: "@eaDir"))
    }

    @Test func extraPatternsAddToTheDefaults() throws {
        let rules = IgnoreRules(extra: [try GlobPattern("*.nef")])
        #expect(rules.ignoresFile(named: "DSC_0001.NEF"))
        #expect(rules.ignoresFile(named: "x.part"))
        #expect(!IgnoreRules().ignoresFile(named: "DSC_0001.NEF"))
    }
}
