import ChuteFFmpeg
import Foundation
import Testing

/// The threads each FFmpeg library gets for the cores a job may use.
@Suite(.serialized)
struct CodecThreadsTests {
    @Test func everyCoreOfTheMachineLeavesTheChoiceToFFmpeg() {
        defer { CodecThreads.set(0) }
        CodecThreads.set(ProcessInfo.processInfo.activeProcessorCount)
        #expect(CodecThreads.limit == 0)
        #expect([CodecThreads.decoder, CodecThreads.encoder, CodecThreads.filter] == [0, 0, 0])
    }

    @Test func fewerCoresGiveEachLibraryItsOwnRuleForThatMany() throws {
        defer { CodecThreads.set(0) }
        let machine = ProcessInfo.processInfo.activeProcessorCount
        try #require(machine > 1, "needs a machine with more than one core")
        CodecThreads.set(1)
        #expect([CodecThreads.decoder, CodecThreads.encoder, CodecThreads.filter] == [2, 1, 1])
        if machine > 2 {
            CodecThreads.set(2)
            #expect([CodecThreads.decoder, CodecThreads.encoder, CodecThreads.filter] == [3, 3, 2])
        }
    }
}
