import ChuteCore
import ChuteTestSupport
import ChuteWatch
import Foundation
import Glibc
import SystemPackage
import Testing

/// A root with `poll: always` is listed every 100 ms: what changed between two listings is reported, and a root that
/// is gone or unmounted is never taken as empty.
@Suite(.timeLimit(.minutes(1)))
struct PollingTests {
    @Test func newChangedMovedAndDeletedFilesAreReported() async throws {
        try await WatchFixture.run(poll: .always, prepare: { root, _ in try Files.write(root.appending("old.jpg")) }) {
            watch in
            let old = watch.root.appending("old.jpg")
            #expect(watch.events(about: old).map(\.kind) == [.found])

            let new = watch.root.appending("new.jpg")
            try Files.write(new)
            await watch.wait(for: .found, new)
            try Files.write(new, String(repeating: "changed\n", count: 512))
            await watch.events.events(until: { events in events.filter { $0.path == new }.count == 2 })
            #expect(watch.events(about: new).map(\.kind) == [.found, .found], "a change is reported again")

            let moved = watch.root.appending("moved.jpg")
            try Files.write(watch.outside.appending("moved.jpg"))
            try Files.rename(watch.outside.appending("moved.jpg"), to: moved)
            await watch.wait(for: .found, moved)

            let renamed = watch.root.appending("renamed.jpg")
            try Files.rename(new, to: renamed)
            await watch.wait(for: .found, renamed)
            await watch.wait(for: .removed, new)

            try Files.remove(old)
            await watch.wait(for: .removed, old)

            let nested = watch.root.appending("sub/deeper")
            try Files.makeFolders(nested)
            try Files.write(nested.appending("inner.jpg"))
            try Files.write(watch.root.appending("upload.jpg.part"))
            await watch.wait(for: .found, nested.appending("inner.jpg"))
            try await watch.sync()

            // Each file is reported once per change, and ignored names never.
            #expect(watch.events(about: moved).map(\.kind) == [.found])
            #expect(watch.events(about: renamed).map(\.kind) == [.found])
            #expect(watch.events(about: watch.root.appending("upload.jpg.part")).isEmpty)
        }
    }

    @Test func aRootThatIsGoneKeepsItsFilesUntilItIsBack() async throws {
        let unavailable = "Polled folder is unavailable; its files are kept as last listed until it is back"
        try await WatchFixture.run(
            poll: .always,
            expectedProblems: [unavailable],
            prepare: { root, _ in try Files.write(root.appending("keep.jpg")) }
        ) { watch in
            let keep = watch.root.appending("keep.jpg")
            let away = watch.outside.appending("inbox-away")
            try Files.rename(watch.root, to: away)
            try await waitUntil("the watcher to notice the missing root") {
                watch.logs.records(containing: unavailable).isEmpty ? nil : true
            }
            try Files.rename(away, to: watch.root)
            try await watch.sync()

            #expect(watch.events(about: keep).map(\.kind) == [.found], "never reported as removed")
            #expect(watch.logs.records(containing: unavailable).count == 1, "logged once")
            #expect(watch.logs.records(containing: "Polled folder is available again").count == 1)
        }
    }

    /// Needs root, to mount: an unmounted share shows its bare, empty mount point, which must not read as "every
    /// file deleted".
    @Test(.enabled(if: geteuid() == 0, "mounting needs root"))
    func anUnmountedShareIsNotTakenAsEmpty() async throws {
        let unavailable = "Polled folder is unavailable; its files are kept as last listed until it is back"
        let store = try TemporaryDirectory(prefix: "share")
        defer { store.remove() }
        try CommandLineTool.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", store.path.string])
        defer { _ = try? CommandLineTool.run(["umount", "--lazy", store.path.string]) }
        try Files.write(store.path.appending("a.jpg"))
        try Files.write(store.path.appending("b.jpg"))
        var mountedRoot: FilePath?
        defer { if let mountedRoot { _ = try? CommandLineTool.run(["umount", "--lazy", mountedRoot.string]) } }

        try await WatchFixture.run(
            poll: .always,
            expectedProblems: [unavailable],
            prepare: { root, _ in
                try CommandLineTool.run(["mount", "--bind", store.path.string, root.string])
                mountedRoot = root
            }
        ) { watch in
            let files = ["a.jpg", "b.jpg"].map { watch.root.appending($0) }
            await watch.waitForFoundOrWritten(files)
            try CommandLineTool.run(["umount", "--lazy", watch.root.string])
            mountedRoot = nil
            try await waitUntil("the watcher to notice the unmount") {
                watch.logs.records(containing: unavailable).isEmpty ? nil : true
            }
            try CommandLineTool.run(["mount", "--bind", store.path.string, watch.root.string])
            mountedRoot = watch.root
            try await watch.sync()
            try CommandLineTool.run(["umount", "--lazy", watch.root.string])
            mountedRoot = nil

            for file in files {
                #expect(watch.events(about: file).map(\.kind) == [.found], "\(file) is never reported as removed")
            }
            #expect(watch.logs.records(containing: "Polled folder is available again").count == 1)
        }
    }
}
