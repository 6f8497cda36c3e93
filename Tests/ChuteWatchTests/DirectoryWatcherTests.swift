import ChuteCore
import ChuteTestSupport
import ChuteWatch
import SystemPackage
import Testing

@Suite(.timeLimit(.minutes(1)))
struct DirectoryWatcherTests {
    @Test func fileWrittenWithContentIsReportedAsWritten() async throws {
        try await WatchFixture.run { fixture in
            let file = fixture.root.appending("a.jpg")
            try Files.write(file, "jpeg bytes")
            #expect(
                await fixture.wait(for: .written, file) == [FileEvent(kind: .written, path: file, root: fixture.root)]
            )
        }
    }

    @Test func fileMovedInFromOutsideIsReportedAsMovedIn() async throws {
        try await WatchFixture.run { fixture in
            let source = fixture.outside.appending("b.jpg")
            let file = fixture.root.appending("b.jpg")
            try Files.write(source)
            try Files.rename(source, to: file)
            #expect(
                await fixture.wait(for: .movedIn, file) == [FileEvent(kind: .movedIn, path: file, root: fixture.root)]
            )
        }
    }

    @Test func rsyncTemporaryRenamedIntoPlaceIsReportedOnceUnderItsFinalName() async throws {
        try await WatchFixture.run { fixture in
            let temporary = fixture.root.appending(".photo.jpg.Xq3k9Z")
            let file = fixture.root.appending("photo.jpg")
            try Files.write(temporary)
            try Files.rename(temporary, to: file)
            await fixture.wait(for: .movedIn, file)
            try await fixture.sync()
            #expect(fixture.events(about: file) == [FileEvent(kind: .movedIn, path: file, root: fixture.root)])
            #expect(fixture.events(about: temporary).isEmpty)
        }
    }

    @Test func filesWrittenRightAfterMkdirAreReported() async throws {
        try await WatchFixture.run { fixture in
            var expected: [FilePath] = []
            for index in 0..<20 {
                let folder = fixture.root.appending("sub\(index)")
                try Files.makeFolder(folder)
                try Files.write(folder.appending("a.jpg"))
                try Files.write(folder.appending("b.jpg"))
                expected += [folder.appending("a.jpg"), folder.appending("b.jpg")]
            }
            await fixture.waitForFoundOrWritten(expected)
            for file in expected {
                #expect(fixture.events(about: file).contains { $0.kind == .found || $0.kind == .written }, "\(file)")
            }
        }
    }

    @Test func folderTreeMovedInIsReportedFileByFileAndWatched() async throws {
        try await WatchFixture.run { fixture in
            let source = fixture.outside.appending("tree")
            let relativeFiles = ["x.jpg", "a/y.jpg", "a/b/z.png", "a/b/c/w.heic", "d/v.mov"]
            for relative in relativeFiles {
                let file = source.appending(relative)
                try Files.makeFolders(file.removingLastComponent())
                try Files.write(file)
            }
            let tree = fixture.root.appending("tree")
            try Files.rename(source, to: tree)
            let files = relativeFiles.map { tree.appending($0) }
            let root = fixture.root
            await fixture.events.events(until: { events in
                files.allSatisfy { file in events.contains(FileEvent(kind: .found, path: file, root: root)) }
            })
            for file in files {
                #expect(fixture.events(about: file) == [FileEvent(kind: .found, path: file, root: fixture.root)])
            }
            let later = tree.appending("a/b/c/later.jpg")
            try Files.write(later)
            #expect(await fixture.wait(for: .written, later).contains { $0.kind == .written })
        }
    }

    @Test func filesPresentBeforeStartAreFound() async throws {
        let relativeFiles = ["one.jpg", "sub/two.png", "sub/deeper/three.tiff"]
        try await WatchFixture.run(prepare: { root, _ in
            for relative in relativeFiles {
                try Files.makeFolders(root.appending(relative).removingLastComponent())
                try Files.write(root.appending(relative))
            }
            try Files.makeFIFO(root.appending("sub/pipe.jpg"))
        }) { fixture in
            for relative in relativeFiles {
                let file = fixture.root.appending(relative)
                #expect(fixture.events(about: file) == [FileEvent(kind: .found, path: file, root: fixture.root)])
            }
            let reported = fixture.events.all.map(\.path).filter { !$0.string.hasSuffix(".marker") }
            #expect(Set(reported) == Set(relativeFiles.map { fixture.root.appending($0) }))
        }
    }

    @Test func foldersDeeperThan64LevelsAreNotEntered() async throws {
        // Folder n levels below the root holds file-n.jpg.
        func folder(_ root: FilePath, depth: Int) -> FilePath {
            root.appending(Array(repeating: "d", count: depth).joined(separator: "/"))
        }
        let notEntered = "Folder not entered: too deep below the watched folder; nothing in it is converted"
        try await WatchFixture.run(
            expectedProblems: [notEntered],
            prepare: { root, _ in
                try Files.makeFolders(folder(root, depth: 66))
                for depth in [64, 65] { try Files.write(folder(root, depth: depth).appending("file-\(depth).jpg")) }
            }
        ) { fixture in
            let deepest = folder(fixture.root, depth: 64).appending("file-64.jpg")
            let tooDeep = folder(fixture.root, depth: 65).appending("file-65.jpg")
            #expect(fixture.events(about: deepest) == [FileEvent(kind: .found, path: deepest, root: fixture.root)])
            try Files.write(deepest)
            try Files.write(tooDeep)
            try await fixture.sync()
            #expect(fixture.events(about: deepest).map(\.kind) == [.found, .written])
            #expect(fixture.events(about: tooDeep).isEmpty)
            // The first folder left out is logged (not the ones below it, which are never listed).
            let logged = fixture.logs.records(containing: "Folder not entered")
            #expect(logged.map { $0.metadata["path"] } == [folder(fixture.root, depth: 65).string])
            #expect(fixture.logs.problems.map(\.message) == [notEntered])
        }
    }

    @Test func aFolderTooDeepIsLoggedOnceThoughEveryListingMeetsIt() async throws {
        let tooDeep = Array(repeating: "d", count: 65).joined(separator: "/")
        let notEntered = "Folder not entered: too deep below the watched folder; nothing in it is converted"
        try await WatchFixture.run(
            poll: .always,
            expectedProblems: [notEntered],
            prepare: { root, _ in try Files.makeFolders(root.appending(tooDeep)) }
        ) { fixture in
            // Each sync waits for a new listing, which walks down to the same folder again.
            for _ in 0..<3 { try await fixture.sync() }
            let logged = fixture.logs.records(containing: "Folder not entered")
            #expect(logged.map { $0.metadata["path"] } == [fixture.root.appending(tooDeep).string])
        }
    }

    @Test func ignoredNamesAreNeverReported() async throws {
        try await WatchFixture.run(prepare: { root, _ in
            for name in ["before.part", "._before.jpg", ".DS_Store", "Thumbs.db"] {
                try Files.write(root.appending(name))
            }
            try Files.makeFolders(root.appending("@eaDir/inner"))
            try Files.write(root.appending("@eaDir/before.jpg"))
            try Files.write(root.appending("@eaDir/inner/before.jpg"))
        }) { fixture in
            let root = fixture.root
            for name in ["x.part", "._x.jpg"] { try Files.write(root.appending(name)) }
            try Files.rename(root.appending("x.part"), to: root.appending("y.part"))
            try Files.rename(root.appending("._x.jpg"), to: root.appending("._y.jpg"))
            try Files.remove(root.appending("y.part"))
            try Files.remove(root.appending("Thumbs.db"))
            try Files.write(root.appending(".DS_Store"))
            try Files.write(root.appending("@eaDir/x.jpg"))
            try Files.write(root.appending("@eaDir/inner/x.jpg"))
            try Files.makeFolder(root.appending("sub"))
            try Files.write(root.appending("sub/Thumbs.db"))
            try Files.makeFolder(root.appending("sub/@eaDir"))
            try Files.write(root.appending("sub/@eaDir/x.jpg"))
            try await fixture.sync()
            let reported = fixture.events.all.map(\.path).filter { !$0.string.hasSuffix(".marker") }
            #expect(reported.isEmpty, "reported: \(reported)")
        }
    }

    @Test func filesInAnExcludedFolderAreNeverReported() async throws {
        try await WatchFixture.run(
            excluded: ["converted"],
            prepare: { root, _ in
                try Files.makeFolders(root.appending("converted/old"))
                try Files.write(root.appending("converted/before.jpg"))
                try Files.write(root.appending("converted/old/before.jpg"))
            }
        ) { fixture in
            let excluded = fixture.root.appending("converted")
            try Files.write(excluded.appending("after.jpg"))
            try Files.makeFolder(excluded.appending("new"))
            try Files.write(excluded.appending("new/after.jpg"))
            try Files.remove(excluded.appending("before.jpg"))
            try Files.write(fixture.root.appending("kept.jpg"))
            try await fixture.sync()
            #expect(!fixture.events.all.contains { $0.path.starts(with: excluded) })
            #expect(fixture.events(about: fixture.root.appending("kept.jpg")).first?.kind == .written)
        }
    }

    @Test func symbolicLinksAreNotFollowed() async throws {
        try await WatchFixture.run(prepare: { root, outside in
            try Files.makeFolders(outside.appending("real"))
            try Files.write(outside.appending("real/x.jpg"))
            try Files.symlink(root.appending("link"), to: outside.appending("real"))
            try Files.symlink(root.appending("file-link.jpg"), to: outside.appending("real/x.jpg"))
        }) { fixture in
            try Files.symlink(fixture.root.appending("later-link"), to: fixture.outside.appending("real"))
            try Files.write(fixture.outside.appending("real/y.jpg"))
            try await fixture.sync()
            let paths = fixture.events.all.map(\.path)
            // The links themselves are reported (the intake logs that it skips them), nothing through them.
            for name in ["link", "later-link"] {
                let link = fixture.root.appending(name)
                #expect(!paths.contains { $0.starts(with: link) && $0 != link }, "\(name)")
            }
            for name in ["link", "file-link.jpg", "later-link"] {
                #expect(fixture.events(about: fixture.root.appending(name)).map(\.kind) == [.found], "\(name)")
            }
            #expect(!paths.contains { $0.starts(with: fixture.outside) })
        }
    }

    @Test func deletedAndMovedOutFilesAreReportedAsRemoved() async throws {
        try await WatchFixture.run(prepare: { root, _ in
            try Files.write(root.appending("deleted.jpg"))
            try Files.makeFolders(root.appending("sub"))
            try Files.write(root.appending("sub/moved.jpg"))
        }) { fixture in
            let deleted = fixture.root.appending("deleted.jpg")
            let moved = fixture.root.appending("sub/moved.jpg")
            try Files.remove(deleted)
            try Files.rename(moved, to: fixture.outside.appending("moved.jpg"))
            #expect(
                await fixture.wait(for: .removed, deleted).last
                    == FileEvent(kind: .removed, path: deleted, root: fixture.root)
            )
            #expect(
                await fixture.wait(for: .removed, moved).last
                    == FileEvent(kind: .removed, path: moved, root: fixture.root)
            )
        }
    }

    @Test func folderRenamedInsideTheTreeReportsNewPaths() async throws {
        try await WatchFixture.run(prepare: { root, _ in
            try Files.makeFolders(root.appending("old/sub"))
        }) { fixture in
            let old = fixture.root.appending("old")
            let new = fixture.root.appending("new")
            try Files.rename(old, to: new)
            let file = new.appending("sub/after.jpg")
            try Files.write(file)
            #expect(
                await fixture.wait(for: .written, file).contains(
                    FileEvent(kind: .written, path: file, root: fixture.root)
                )
            )
            try await fixture.sync()
            #expect(!fixture.events.all.contains { $0.path.starts(with: old) })
        }
    }

    @Test func folderMovedOutOfTheTreeIsNoLongerWatched() async throws {
        try await WatchFixture.run(prepare: { root, _ in
            try Files.makeFolders(root.appending("leaving/inner"))
        }) { fixture in
            let away = fixture.outside.appending("leaving")
            try Files.rename(fixture.root.appending("leaving"), to: away)
            try await fixture.sync()
            try Files.write(away.appending("x.jpg"))
            try Files.write(away.appending("inner/y.jpg"))
            try await fixture.sync()
            let reported = fixture.events.all.map(\.path).filter { !$0.string.hasSuffix(".marker") }
            #expect(reported.isEmpty, "reported: \(reported)")
        }
    }

    @Test func folderRenamedToAnIgnoredNameIsNoLongerWatched() async throws {
        try await WatchFixture.run(prepare: { root, _ in
            try Files.makeFolders(root.appending("thumbs"))
        }) { fixture in
            let ignored = fixture.root.appending("@eaDir")
            try Files.rename(fixture.root.appending("thumbs"), to: ignored)
            try Files.write(ignored.appending("x.jpg"))
            try await fixture.sync()
            let reported = fixture.events.all.map(\.path).filter { !$0.string.hasSuffix(".marker") }
            #expect(reported.isEmpty, "reported: \(reported)")
        }
    }

    @Test func nonRecursiveWatchLeavesSubfoldersOut() async throws {
        try await WatchFixture.run(
            recursive: false,
            prepare: { root, _ in
                try Files.makeFolders(root.appending("sub"))
                try Files.write(root.appending("sub/before.jpg"))
                try Files.write(root.appending("top.jpg"))
            }
        ) { fixture in
            try Files.write(fixture.root.appending("sub/after.jpg"))
            try Files.makeFolder(fixture.root.appending("new"))
            try Files.write(fixture.root.appending("new/after.jpg"))
            try await fixture.sync()
            let top = fixture.root.appending("top.jpg")
            #expect(fixture.events(about: top) == [FileEvent(kind: .found, path: top, root: fixture.root)])
            let reported = fixture.events.all.map(\.path).filter { !$0.string.hasSuffix(".marker") }
            #expect(reported == [top])
        }
    }
}
