import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Per-job limits on the real daemon: size limits read from headers, the kernel's resource limits on the worker, and
/// the worker's priorities and sandbox.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct LimitsEndToEndTests {
    @Test func headerLimitsRefuseInputsBeforeDecoding() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: pictures
                    match: "*.png"
                    to: jpg
                    maxPixels: 1000000
                    output: ./outbox
                  - name: animations
                    match: "*.gif"
                    to: webp
                    maxFrames: 3
                    output: ./outbox
                  - name: short-clips
                    match: "*.mkv"
                    to: mp4
                    maxDuration: 2s
                    output: ./outbox
                  - name: few-frames
                    match: "*.mov"
                    to: mp4
                    maxFrames: 30
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("big.png"), width: 1500, height: 1000)
        try Fixtures.makeImage(at: staging.appending("small.png"), width: 800, height: 600)
        try CommandLineTool.run(
            [Fixtures.convert, "-size", "32x32", "xc:red", "xc:blue", "xc:green", "xc:white", "xc:black"]
                + [staging.appending("anim.gif").string]
        )
        try MediaFixtures.makeClip(at: staging.appending("long.mkv"), seconds: 4, codecArguments: MediaFixtures.h264AAC)
        try MediaFixtures.makeClip(at: staging.appending("many.mov"), seconds: 2, codecArguments: MediaFixtures.h264AAC)
        try harness.moveIn(["big.png", "small.png", "anim.gif", "long.mkv", "many.mov"], from: staging)
        let sidecars = try await harness.waitForSidecars(5)
        let expected = [
            "big.jpg.chute.json": "image is 1500x1000 = 1500000 pixels; maxPixels is 1000000",
            "anim.webp.chute.json": "image has 5 frames; the rule's maxFrames is 3",
            "long.mp4.chute.json": "the rule's maxDuration is 2s",
            "many.mp4.chute.json": "has 50 frames; the rule's maxFrames is 30",
        ]
        for (name, message) in expected {
            let sidecar = try #require(sidecars[name], "\(name) in \(sidecars.keys.sorted())")
            #expect(sidecar.status == .failed)
            #expect(sidecar.error?.code == "limitExceeded")
            #expect(sidecar.error?.message.contains(message) == true, "\(String(describing: sidecar.error))")
        }
        #expect(sidecars["small.jpg.chute.json"]?.status == .completed)
        #expect(harness.temporaryFiles().isEmpty)
    }

    /// A 200 MP phone photo (12240×16320, past Debian's ImageMagick policy of 16000 pixels a side and 128 MP) is
    /// refused by default with a message that names `maxImageSide`, and converted by a rule that raises
    /// `maxImageSide` and `maxPixels`, within the default `memoryLimit`.
    @Test func aRuleRaisesTheImageLimitsFor200MegapixelPhotos() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: phone
                    match: "phone-*.jpg"
                    to: jpg
                    width: 1200
                    maxPixels: 250000000
                    maxImageSide: 20000
                    output: ./outbox
                  - name: default-limits
                    match: "*.jpg"
                    to: jpg
                    width: 1200
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        // A flat grey picture made by FFmpeg (ImageMagick's own CLI is held to the 16000-pixel policy).
        let photo = staging.appending("phone-200mp.jpg")
        try CommandLineTool.run([
            "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "color=c=gray:s=12240x16320", "-frames:v",
            "1", "-q:v", "10", photo.string,
        ])
        try FileManager.default.copyItem(atPath: photo.string, toPath: staging.appending("default.jpg").string)
        try harness.moveIn(["phone-200mp.jpg", "default.jpg"], from: staging)

        let sidecars = try await harness.waitForSidecars(2, timeout: 120)

        let converted = try #require(sidecars["phone-200mp.jpg.chute.json"])
        #expect(converted.status == .completed, "\(String(describing: converted.error))")
        #expect(try Fixtures.identify(harness.outbox.appending("phone-200mp.jpg")).width == 1200)
        let refused = try #require(sidecars["default.jpg.chute.json"])
        #expect(refused.error?.code == "limitExceeded")
        #expect(
            refused.error?.message.contains("image is 12240x16320 pixels; maxImageSide is 16000") == true,
            "\(String(describing: refused.error))"
        )
    }

    @Test func resourceLimitsEndTheJobAndTheDaemonGoesOn() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: cpu-capped
                    match: "*.mkv"
                    to: mp4
                    height: 480
                    preset: veryslow
                    cpuTimeLimit: 1s
                    output: ./outbox
                  - name: size-capped
                    match: "*.tif"
                    to: png
                    maxOutputSize: 20KB
                    output: ./outbox
                  - name: memory-capped
                    match: "*.mov"
                    to: mp4
                    height: 2000
                    memoryLimit: 128MB
                    output: ./outbox
                  - name: pictures
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try MediaFixtures.makeClip(
            at: staging.appending("slow.mkv"),
            width: 1280,
            height: 720,
            seconds: 10,
            codecArguments: MediaFixtures.h264AAC
        )
        try Fixtures.makeImage(at: staging.appending("noise.tif"), width: 1000, height: 1000)
        try MediaFixtures.makeClip(
            at: staging.appending("huge.mov"),
            width: 3840,
            height: 2160,
            seconds: 1,
            codecArguments: MediaFixtures.h264AAC
        )
        try harness.moveIn(["slow.mkv", "noise.tif", "huge.mov"], from: staging)
        let sidecars = try await harness.waitForSidecars(3, timeout: 150)
        let cpu = try #require(sidecars["slow.mp4.chute.json"])
        #expect(cpu.error?.code == "limitExceeded")
        #expect(cpu.error?.message.contains("more CPU time than its cpuTimeLimit of 1s") == true, "\(cpu)")
        let size = try #require(sidecars["noise.png.chute.json"])
        #expect(size.error?.code == "limitExceeded")
        #expect(size.error?.message.contains("the output grew beyond the job's maxOutputSize") == true, "\(size)")
        // A 4K clip scaled and encoded by x264, whose look-ahead alone needs more. Whatever the library made of the
        // refused allocations (FFmpeg calls some of them invalid data, and a thread whose stack was refused "resource
        // temporarily unavailable"), the worker counted them.
        let memory = try #require(sidecars["huge.mp4.chute.json"])
        #expect(memory.error?.code == "limitExceeded", "\(memory)")
        #expect(memory.error?.message.contains("beyond its memoryLimit of 128MB were refused") == true, "\(memory)")
        #expect(harness.temporaryFiles().isEmpty)
        // The same daemon, on new workers, goes on.
        try Fixtures.makeImage(at: harness.inbox.appending("after.png"), width: 64, height: 48)
        let after = try await harness.waitForSidecars(4)
        #expect(after["after.jpg.chute.json"]?.status == .completed)
    }

    @Test func workersRunWithLowPrioritiesAndNoNetwork() async throws {
        let harness = try DaemonHarness(settings: "  niceness: 15\n  ioPriority: idle")
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        try Fixtures.makeImage(at: harness.inbox.appending("photo.png"), width: 64, height: 48)
        let sidecars = try await harness.waitForSidecars(1)
        #expect(sidecars["photo.jpg.chute.json"]?.status == .completed)
        // The workers stay alive between jobs.
        let workers = try CommandLineTool.run(["pgrep", "-P", "\(daemon.pid)"]).standardOutput
            .split(separator: "\n").compactMap { Int32($0) }
        #expect(!workers.isEmpty)
        for worker in workers {
            let status = try String(contentsOfFile: "/proc/\(worker)/status", encoding: .utf8)
            #expect(status.contains("NoNewPrivs:\t1"))
            #expect(status.contains("Seccomp:\t2"))
            let threads = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(worker)/task")
            #expect(!threads.isEmpty)
            for thread in threads {
                // Field 19 of stat is the niceness; the command name (field 2) has no spaces here.
                let stat = try String(contentsOfFile: "/proc/\(worker)/task/\(thread)/stat", encoding: .utf8)
                #expect(stat.split(separator: " ")[18] == "15", "thread \(thread): \(stat)")
                let io = try CommandLineTool.run(["ionice", "-p", thread]).standardOutput
                #expect(io.trimmingCharacters(in: .whitespacesAndNewlines) == "idle", "thread \(thread)")
            }
            let limits = try String(contentsOfFile: "/proc/\(worker)/limits", encoding: .utf8)
            #expect(limits.split(separator: "\n").contains { $0.hasPrefix("Max core file size") && $0.contains(" 0 ") })
        }
        // The same daemon's own process keeps its priority and network.
        let own = try String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)
        #expect(own.contains("Seccomp:\t0"))
    }
}
