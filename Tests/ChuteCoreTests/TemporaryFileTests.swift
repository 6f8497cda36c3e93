import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The one owner of a file written under a temporary name: exclusive creation, removal when dropped unfinished, and
/// the errors of ``SystemCall/check(_:_:)`` with their C call and errno.
@Suite
struct TemporaryFileTests {
    @Test func aFailedCallNamesItsFunctionAndErrno() throws {
        let directory = try TemporaryDirectory(prefix: "syscall")
        defer { directory.remove() }
        let missing = directory.appending("missing")
        #expect(throws: SystemCallError("open", cause: .noSuchFileOrDirectory)) {
            try SystemCall.check("open") { missing.withPlatformString { open($0, O_RDONLY) } }
        }
    }

    @Test func aKeptFileStaysUnderItsNameWithItsBytes() throws {
        let directory = try TemporaryDirectory(prefix: "temporary")
        defer { directory.remove() }
        let path = directory.appending(".chute-1.partial")
        try TemporaryFile.writeOutput(Array("whole".utf8), at: path)
        #expect(try SystemCall.contents(of: path) == Data("whole".utf8))
    }

    @Test func aFileDroppedUnfinishedIsRemoved() throws {
        let directory = try TemporaryDirectory(prefix: "temporary")
        defer { directory.remove() }
        let path = directory.appending(".chute-1.partial")
        do {
            let file = try TemporaryFile(creatingAt: path)
            try Array("half".utf8).withUnsafeBytes { try file.write($0) }
        }
        #expect(SystemCall.access(path, F_OK) != 0)
    }

    @Test func anExistingNameIsNeverWrittenThrough() throws {
        let directory = try TemporaryDirectory(prefix: "temporary")
        defer { directory.remove() }
        let path = directory.appending(".chute-1.partial")
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: path.string))
        #expect(throws: ConversionFailure(.outputFailed, "output already exists")) {
            try TemporaryFile.writeOutput(Array("ours".utf8), at: path)
        }
        #expect(try SystemCall.contents(of: path) == Data("theirs".utf8))
    }

    @Test func aReplacementIsRenamedIntoPlaceOverTheOldFileAndALeftoverTemporary() throws {
        let directory = try TemporaryDirectory(prefix: "temporary")
        defer { directory.remove() }
        let path = directory.appending("photo.jpg.json")
        try Data("old".utf8).write(to: URL(fileURLWithPath: path.string))
        // Left by a process killed while it wrote the same file.
        try Data("stale".utf8).write(to: URL(fileURLWithPath: directory.appending(".chute-1.sidecar").string))
        try TemporaryFile.write(Data("new".utf8), replacing: path, temporaryName: ".chute-1.sidecar")
        #expect(try SystemCall.contents(of: path) == Data("new".utf8))
        #expect(directory.files() == ["photo.jpg.json"])
    }
}
