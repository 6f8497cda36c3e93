import ChuteTestSupport
import Foundation
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// Debian's `chromium`, headless, driven through the DevTools protocol over `--remote-debugging-pipe`: commands are
/// JSON objects written to the browser's descriptor 3, answers and events come back on its descriptor 4, each ended
/// by a NUL byte. One page target is opened and every command after that is sent to its session.
///
/// The browser runs in a process group of its own with a temporary profile; ``stop()`` kills the group (the
/// browser, its renderers, its GPU and network processes) and removes the profile.
///
/// The corresponding C functions are `pipe`, `fcntl`, `posix_spawnp`, `poll`, `read`, `write`, `kill` and `waitpid`.
final class HeadlessChromium {
    /// A DevTools command that failed, or a script that threw.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let pid: pid_t
    private let commands: Int32
    private let replies: Int32
    private let profile: TemporaryDirectory
    private var pending: [UInt8] = []
    private var nextID = 0
    private var session: String?
    private var stopped = false

    /// Whether `chromium` is installed.
    static var isInstalled: Bool { CommandLineTool.exists("chromium") }

    /// Starts the browser with a blank window of `width` × `height` CSS pixels.
    init(width: Int = 1280, height: Int = 900) throws {
        let profile = try TemporaryDirectory(prefix: "chromium")
        // Ours: commands (we write, the browser reads on 3) and replies (the browser writes on 4, we read). Every end
        // is moved above the descriptors the child will get, and is close-on-exec, so that only the dup2 copies of
        // the two ends the browser needs reach it.
        var toBrowser: [Int32] = [0, 0]
        var fromBrowser: [Int32] = [0, 0]
        guard pipe(&toBrowser) == 0, pipe(&fromBrowser) == 0 else { throw Errno(rawValue: errno) }
        let ends = (toBrowser + fromBrowser).map { descriptor -> Int32 in
            let moved = fcntl(descriptor, F_DUPFD_CLOEXEC, 10)
            close(descriptor)
            return moved
        }
        guard ends.allSatisfy({ $0 >= 10 }) else { throw Errno(rawValue: errno) }
        let (browserReads, weWrite, weRead, browserWrites) = (ends[0], ends[1], ends[2], ends[3])

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let log = profile.appending("chromium.log").string
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_adddup2(&actions, browserReads, 3)
        posix_spawn_file_actions_adddup2(&actions, browserWrites, 4)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)

        let arguments = [
            "chromium", "--headless=new", "--no-sandbox", "--remote-debugging-pipe",
            "--user-data-dir=\(profile.appending("profile").string)", "--no-first-run", "--no-default-browser-check",
            "--disable-gpu", "--disable-extensions", "--disable-sync", "--disable-background-networking",
            "--disable-component-update", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
            "--password-store=basic", "--window-size=\(width),\(height)", "about:blank",
        ]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        // The test's environment, passed explicitly: the C global `environ` is shared mutable state to Swift 6.
        let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" }
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawnp(&pid, "chromium", &actions, &attributes, argv, envp)
        close(browserReads)
        close(browserWrites)
        guard status == 0 else {
            close(weWrite)
            close(weRead)
            throw Errno(rawValue: status)
        }
        self.pid = pid
        self.commands = weWrite
        self.replies = weRead
        self.profile = profile
    }

    deinit {
        self.stop()
    }

    /// Kills the browser's process group, waits for the browser, and removes its profile.
    func stop() {
        guard !self.stopped else { return }
        self.stopped = true
        kill(-self.pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(self.pid, &status, 0) < 0 && errno == EINTR {}
        close(self.commands)
        close(self.replies)
        self.profile.remove()
    }

    /// What the browser printed, for failure messages.
    var log: String {
        (try? String(contentsOfFile: self.profile.appending("chromium.log").string, encoding: .utf8)) ?? ""
    }

    // MARK: - Pages

    /// Opens a page target on `url` and attaches to it: every later ``send(_:_:)`` goes to that page.
    func open(_ url: String, width: Int = 1280, height: Int = 900) throws {
        let target = try self.send("Target.createTarget", ["url": "about:blank"], toPage: false)
        guard let targetID = target["targetId"] as? String else { throw Failure(description: "no targetId: \(target)") }
        let attached = try self.send(
            "Target.attachToTarget",
            ["targetId": targetID, "flatten": true],
            toPage: false
        )
        guard let session = attached["sessionId"] as? String else {
            throw Failure(description: "no sessionId: \(attached)")
        }
        self.session = session
        try self.resize(width: width, height: height, mobile: false)
        try self.send("Page.enable")
        try self.send("Page.navigate", ["url": url])
    }

    /// Lays the page out for a window of `width` × `height` CSS pixels (`mobile`: as a phone does, with its
    /// viewport meta tag honoured).
    func resize(width: Int, height: Int, mobile: Bool) throws {
        try self.send(
            "Emulation.setDeviceMetricsOverride",
            ["width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile]
        )
    }

    /// Runs `expression` in the page (awaiting it if it is a promise) and returns its value as JSON would give it.
    ///
    /// - Throws: ``Failure`` with the exception's text when the script threw.
    @discardableResult
    func evaluate(_ expression: String) throws -> Any? {
        let answer = try self.send(
            "Runtime.evaluate",
            ["expression": expression, "returnByValue": true, "awaitPromise": true]
        )
        if let exception = answer["exceptionDetails"] as? [String: Any] {
            let text =
                ((exception["exception"] as? [String: Any])?["description"] as? String)
                ?? (exception["text"] as? String) ?? "\(exception)"
            throw Failure(description: "the page threw: \(text)")
        }
        return (answer["result"] as? [String: Any])?["value"]
    }

    /// A PNG of the page as it is laid out now: the window, or the whole page down to its end with `fullPage`.
    func screenshot(fullPage: Bool) throws -> Data {
        var parameters: [String: Any] = ["format": "png"]
        if fullPage { parameters["captureBeyondViewport"] = true }
        let answer = try self.send("Page.captureScreenshot", parameters)
        guard let text = answer["data"] as? String, let data = Data(base64Encoded: text) else {
            throw Failure(description: "no screenshot data")
        }
        return data
    }

    // MARK: - Protocol

    /// Sends one command and waits (up to `timeout` seconds) for its answer, skipping the events in between.
    ///
    /// - Returns: the answer's `result`.
    /// - Throws: ``Failure`` when the browser answers with an error, goes away, or does not answer in time.
    @discardableResult
    func send(
        _ method: String,
        _ parameters: [String: Any] = [:],
        toPage: Bool = true,
        timeout: Double = 60
    ) throws -> [String: Any] {
        self.nextID += 1
        let id = self.nextID
        var message: [String: Any] = ["id": id, "method": method, "params": parameters]
        if toPage {
            guard let session = self.session else { throw Failure(description: "no page is open") }
            message["sessionId"] = session
        }
        var bytes = [UInt8](try JSONSerialization.data(withJSONObject: message))
        bytes.append(0)
        try self.write(bytes)
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while true {
            let reply = try self.readMessage(until: deadline, waitingFor: method)
            guard reply["id"] as? Int == id else { continue }
            if let error = reply["error"] as? [String: Any] {
                throw Failure(description: "\(method) failed: \(error)")
            }
            return reply["result"] as? [String: Any] ?? [:]
        }
    }

    private func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(self.commands, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "the browser went away (\(Errno(rawValue: errno))); its log:\n\(self.log)")
            }
            offset += written
        }
    }

    private func readMessage(until deadline: ContinuousClock.Instant, waitingFor method: String) throws -> [String: Any]
    {
        while true {
            if let end = self.pending.firstIndex(of: 0) {
                let message = Array(self.pending[..<end])
                self.pending.removeSubrange(...end)
                guard let object = try JSONSerialization.jsonObject(with: Data(message)) as? [String: Any] else {
                    continue
                }
                return object
            }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { throw Failure(description: "no answer to \(method) in time") }
            var descriptor = pollfd(fd: self.replies, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(left.components.seconds * 1000 + 1, 1000))
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "poll failed: \(Errno(rawValue: errno))")
            }
            guard ready > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let count = chunk.withUnsafeMutableBytes { read(self.replies, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "read failed: \(Errno(rawValue: errno))")
            }
            guard count > 0 else { throw Failure(description: "the browser went away; its log:\n\(self.log)") }
            self.pending += chunk[..<count]
        }
    }
}
