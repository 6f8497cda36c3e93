import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The web page of the real daemon on TCP, in headless Chromium driven through the DevTools protocol: signed in
/// with the token, it follows jobs live, retries and cancels them, and shows hostile file names as text.
@Suite(.serialized, .timeLimit(.minutes(6)))
struct WebPageEndToEndTests {
    private static let token = "w3b-page-token"
    /// A file name that would run its script if the page ever parsed a name as HTML.
    private static let hostileName = "<img src=x onerror=window.pwned=1>.png"

    /// What the page showed of one job over the page load: its source and every state its row took, in order.
    private struct Seen: Decodable {
        var id: String
        var source: String
        var states: [String]
    }

    /// A daemon with an image rule and a slow video rule, its API on TCP with a token, and `settings` (indented by two).
    private static func startDaemon(settings: String = "") async throws -> (DaemonHarness, Int) {
        let port = try LoopbackListener.freePort()
        let harness = try DaemonHarness(
            rules: """
                  - name: photos
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                    upload: true
                  - name: videos
                    match: "*.mkv"
                    to: mp4
                    preset: veryslow
                    output: ./outbox
                """,
            settings: """
                  api:
                    listen: 127.0.0.1:\(port)
                    tokenFile: ./token
                \(settings)
                """
        )
        try "\(Self.token)\n".write(
            toFile: harness.directory.appending("token").string,
            atomically: true,
            encoding: .utf8
        )
        try await harness.start()
        try await harness.daemon?.waitForLog("Status API listening", "127.0.0.1:\(port)")
        return (harness, port)
    }

    private static func startBrowser() throws -> HeadlessChromium {
        try #require(HeadlessChromium.isInstalled, "chromium is not installed: run scripts/install-deps.sh")
        return try HeadlessChromium()
    }

    /// Waits until `expression` (awaited if it is a promise) is truthy in the page, and returns its value.
    ///
    /// - Parameter navigating: whether the page may be between two documents, where a script can find its
    ///   context gone: such errors are then waited out (the last one is in the timeout's message).
    @discardableResult
    private static func until(
        _ browser: HeadlessChromium,
        _ what: String,
        timeout: Double = 30,
        navigating: Bool = false,
        _ expression: String
    ) async throws -> Any {
        let last = LastError()
        return try await waitUntil("\(what) (last error: \(last.error.map { "\($0)" } ?? "none"))", timeout: timeout) {
            () -> Any? in
            let value: Any?
            do {
                value = try browser.evaluate(expression)
            } catch let error where navigating {
                last.error = error
                return nil
            }
            if value == nil || value is NSNull || (value as? Bool) == false { return nil }
            return value
        }
    }

    /// The latest error a wait saw, for its timeout's message.
    private final class LastError {
        var error: (any Error)?
    }

    /// Opens the page and signs in with the token, as a person would: the form, then the live page.
    private static func signIn(_ browser: HeadlessChromium, port: Int) async throws {
        let url = "http://127.0.0.1:\(port)/"
        try browser.open(url)
        try await Self.until(
            browser,
            "the page to load",
            navigating: true,
            "location.href === '\(url)' && document.readyState === 'complete'"
        )
        let title = try browser.evaluate("document.title") as? String
        try #require(title == "Chute", "GET / did not serve the page")
        try await Self.until(browser, "the sign-in form", "document.body.dataset.view === 'login'")
        // Until then the API refuses the browser.
        #expect(try browser.evaluate("fetch('/api/status').then(r => r.status)") as? Int == 401)
        try browser.evaluate(
            "document.getElementById('token').value = 'not-the-token';"
                + "document.getElementById('login-form').requestSubmit()"
        )
        try await Self.until(
            browser,
            "a wrong token refused",
            "document.getElementById('login-error').textContent.includes('not the token')"
        )
        try browser.evaluate(
            "document.getElementById('token').value = '\(Self.token)';"
                + "document.getElementById('login-form').requestSubmit()"
        )
        try await Self.until(browser, "the page to go live", "document.getElementById('live').dataset.live === 'on'")
    }

    /// Records, from now on, every state each job's row takes anywhere on the page.
    private static func recordRows(_ browser: HeadlessChromium) throws {
        try browser.evaluate(
            """
            {
            window.chuteMarker = 'the same page load';
            window.chuteSeen = {};
            const record = () => {
              for (const row of document.querySelectorAll('[data-job-id]')) {
                const id = row.dataset.jobId;
                if (!id) continue;
                const seen = window.chuteSeen[id] || (window.chuteSeen[id] = { source: row.dataset.source, states: [] });
                if (!seen.states.includes(row.dataset.state)) seen.states.push(row.dataset.state);
              }
            };
            record();
            new MutationObserver(record).observe(document.body, { subtree: true, childList: true, attributes: true });
            }
            """
        )
    }

    private static func seen(_ browser: HeadlessChromium) throws -> [Seen] {
        let text = try browser.evaluate(
            "JSON.stringify(Object.entries(window.chuteSeen).map(([id, s]) => ({ id, source: s.source, states: s.states })))"
        )
        return try JSONDecoder().decode([Seen].self, from: Data((text as? String ?? "[]").utf8))
    }

    /// On a store that agents share, the page lists every agent with its heartbeat and jobs, as `chute status` does;
    /// on the journal the list stays hidden.
    @Test func pageListsTheAgentsSharingTheStore() async throws {
        let server = try PostgresServer()
        defer { server.stop() }
        let (harness, port) = try await Self.startDaemon(
            settings: """
                  store: \(server.address)
                  storePasswordFile: \(server.passwordFile)
                  agent: page-north
                """
        )
        defer { harness.stop() }
        try server.psql(
            "INSERT INTO agent (name, host, pid, engines, cpu, memory, started_at, heartbeat) VALUES ('page-south', "
                + "'nas-2', 4242, '{image}', 4, 1000000000, now() - interval '1 hour', now() - interval '5 minutes')"
        )
        let browser = try Self.startBrowser()
        defer { browser.stop() }
        try await Self.signIn(browser, port: port)
        try Fixtures.makeImage(at: harness.directory.appending("a.png"), width: 64, height: 64)
        try harness.moveIn(["a.png"], from: harness.directory.path)
        try await harness.waitForSidecars(1)
        let shown = try await Self.until(
            browser,
            "both agents listed, this one with its two jobs",
            """
            (() => {
              const list = document.getElementById('agents');
              const lines = [...list.querySelectorAll('li')].map((li) => li.textContent);
              return !list.hidden && lines.length === 2 && lines[0].includes('completed 2') ? lines.join(' | ') : null;
            })()
            """
        )
        print("the page's agents: \(shown)")
        let lines = "\(shown)".components(separatedBy: " | ")
        #expect(lines[0].hasPrefix("page-north (this one) on ") && lines[0].contains(": alive, last heartbeat "))
        #expect(lines[1].hasPrefix("page-south on nas-2: silent, last heartbeat 30"), "about 300 s ago")
        #expect(lines[1].hasSuffix(" s ago; holding 0, completed 0"))
    }

    @Test func pageFollowsJobsLiveRetriesAFailureAndShowsNamesAsText() async throws {
        let (harness, port) = try await Self.startDaemon()
        defer { harness.stop() }
        let browser = try Self.startBrowser()
        defer { browser.stop() }
        try await Self.signIn(browser, port: port)

        // The session is an HttpOnly cookie, out of the script's reach; with the cookie alone, a change that lacks
        // the page's header (as a form of another site would send it) is refused.
        #expect(try browser.evaluate("document.cookie") as? String == "")
        #expect(
            try browser.evaluate("document.getElementById('agents').hidden") as? Bool == true,
            "no agents on the journal"
        )
        #expect(try browser.evaluate("fetch('/api/pause', { method: 'POST' }).then(r => r.status)") as? Int == 403)
        #expect(try browser.evaluate("fetch('/api/health').then(r => r.json()).then(h => h.paused)") as? Bool == false)
        // The same seen with curl: the cookie's attributes, and a sign-in without the page's header refused.
        let login = "http://127.0.0.1:\(port)/ui/login"
        let body = "{\"token\": \"\(Self.token)\"}"
        let signedIn = try CommandLineTool.run(
            ["curl", "-sS", "-D", "-", "-o", "/dev/null", "-H", "X-Chute-Page: 1", "--data-binary", body, login]
        ).standardOutput
        let cookie = signedIn.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") } ?? ""
        for attribute in ["chute_session=", "HttpOnly", "SameSite=Strict", "Path=/"] {
            #expect(cookie.contains(attribute), "\(signedIn)")
        }
        let headerless = try CommandLineTool.run(
            ["curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--data-binary", body, login]
        )
        #expect(headerless.standardOutput == "403")
        let wrong = try CommandLineTool.run(
            [
                "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-H", "X-Chute-Page: 1", "--data-binary",
                "{\"token\": \"\(Self.token)x\"}", login,
            ]
        )
        #expect(wrong.standardOutput == "401")
        // On the Unix socket, the same page asks for nothing.
        let socket = harness.directory.appending(".chute/api.sock").string
        let page = try CommandLineTool.run(["curl", "-sS", "--unix-socket", socket, "http://chute/"]).standardOutput
        #expect(page.contains("<title>Chute</title>"))
        let session = try CommandLineTool.run(["curl", "-sS", "--unix-socket", socket, "http://chute/ui/session"])
        #expect(session.standardOutput.contains("\"required\":false"), "\(session.standardOutput)")

        // A photo dropped while the page is open: its row goes from queued to completed in the same page load.
        try Self.recordRows(browser)
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("sunset.png"), width: 96, height: 64)
        try Fixtures.makeImage(at: staging.appending(Self.hostileName), width: 48, height: 48)
        try harness.moveIn(["sunset.png", Self.hostileName], from: staging)
        let sunset = try await waitUntil("sunset.png's row to show completed", timeout: 90) {
            try Self.seen(browser).first { $0.source.hasSuffix("/sunset.png") && $0.states.contains("completed") }
        }
        #expect(["queued", "running"].contains(sunset.states.first ?? ""), "\(sunset.states)")
        #expect(sunset.states.last == "completed", "\(sunset.states)")
        #expect(try browser.evaluate("window.chuteMarker") as? String == "the same page load")

        // The hostile name is shown as text: no element came out of it, and its handler never ran.
        try await waitUntil("the hostile file's row to show completed", timeout: 90) {
            try Self.seen(browser).first {
                $0.source.hasSuffix("/" + Self.hostileName) && $0.states.contains("completed")
            }
        }
        #expect(try browser.evaluate("document.querySelectorAll('img').length") as? Int == 0)
        #expect(try browser.evaluate("typeof window.pwned") as? String == "undefined")
        let names = try browser.evaluate("[...document.querySelectorAll('#history .name')].map(e => e.textContent)")
        #expect((names as? [String] ?? []).contains(Self.hostileName), "\(String(describing: names))")

        // The job's detail: input, outputs with their sizes, the sidecar.
        try browser.evaluate("document.querySelector('#history [data-job-id=\"\(sunset.id)\"] .name').click()")
        let detail = try await Self.until(
            browser,
            "the job's detail",
            "document.getElementById('detail').open && document.querySelector('#detail pre.sidecar')"
                + " && document.getElementById('detail-body').textContent"
        )
        let text = detail as? String ?? ""
        #expect(text.contains(harness.inbox.appending("sunset.png").string), "\(text)")
        #expect(text.contains(harness.outbox.appending("sunset.jpg").string + " ("), "\(text)")
        #expect(text.contains("\"jobID\": \"\(sunset.id)\""), "\(text)")
        try browser.evaluate("document.getElementById('detail-close').click()")

        // A corrupt file fails, with its message and a Retry button, which queues it again.
        try "not a picture".write(toFile: staging.appending("broken.png").string, atomically: true, encoding: .utf8)
        try harness.moveIn(["broken.png"], from: staging)
        let failure = try await Self.until(
            browser,
            "broken.png among the failures",
            timeout: 90,
            """
            (() => {
              const row = [...document.querySelectorAll('#failed .job')].find(r => r.dataset.source.endsWith('/broken.png'));
              return row && [row.dataset.jobId, row.querySelector('.message').textContent];
            })()
            """
        )
        let failed = failure as? [String] ?? []
        let failedID = try #require(failed.first)
        #expect(failed.count == 2, "\(failed)")
        #expect(failed.last?.isEmpty == false, "\(failed)")
        try browser.evaluate("document.querySelector('#failed [data-job-id=\"\(failedID)\"] button.retry').click()")
        let again = try await waitUntil("broken.png queued again", timeout: 90) {
            try Self.seen(browser).first {
                $0.source.hasSuffix("/broken.png") && $0.id != failedID && $0.states.contains("queued")
            }
        }
        #expect(again.states.first == "queued", "\(again.states)")
        try await Self.until(
            browser,
            "the first failure shown as retried",
            "document.querySelector('#history [data-job-id=\"\(failedID)\"]')?.dataset.state === 'retried'"
        )

        // The history's filters: a part of the name, then a state.
        try browser.evaluate(
            "{ const t = document.getElementById('filter-text'); t.value = 'sunset'; t.dispatchEvent(new Event('input')) }"
        )
        try await Self.until(
            browser,
            "only sunset.png in the history",
            """
            (() => {
              const rows = [...document.querySelectorAll('#history .job')];
              return rows.length === 1 && rows[0].dataset.source.endsWith('/sunset.png');
            })()
            """
        )
        try browser.evaluate(
            """
            {
              const t = document.getElementById('filter-text'); t.value = ''; t.dispatchEvent(new Event('input'));
              const s = document.getElementById('filter-state'); s.value = 'failed'; s.dispatchEvent(new Event('input'));
            }
            """
        )
        try await Self.until(
            browser,
            "only failed jobs in the history",
            """
            (() => {
              const rows = [...document.querySelectorAll('#history .job')];
              return rows.length >= 1 && rows.every(r => r.dataset.state === 'failed')
                && rows.every(r => r.dataset.source.endsWith('/broken.png'));
            })()
            """
        )

        // Pause and resume intake from the page.
        try browser.evaluate("document.getElementById('pause').click()")
        try await Self.until(
            browser,
            "intake paused",
            "fetch('/api/health').then(r => r.json()).then(h => h.paused"
                + " && document.getElementById('pause').textContent === 'Resume intake')"
        )
        try browser.evaluate("document.getElementById('pause').click()")
        try await Self.until(
            browser,
            "intake resumed",
            "fetch('/api/health').then(r => r.json()).then(h => !h.paused"
                + " && document.getElementById('pause').textContent === 'Pause intake')"
        )
        #expect(try browser.evaluate("window.chuteMarker") as? String == "the same page load")
    }

    /// A photo dropped on the page's upload box goes up as a job of the rule chosen there; once it completed, its
    /// detail links the output, which downloads as the JPEG.
    @Test func aFileDroppedOnThePageIsUploadedAndItsOutputDownloads() async throws {
        let (harness, port) = try await Self.startDaemon()
        defer { harness.stop() }
        let browser = try Self.startBrowser()
        defer { browser.stop() }
        try await Self.signIn(browser, port: port)
        try await Self.until(
            browser,
            "the upload box for the rule that takes uploads",
            """
            !document.getElementById('upload').hidden
              && [...document.querySelectorAll('#upload-rule option')].map(o => o.value).join() === 'photos'
            """
        )
        // A picture drawn in the page, dropped as a user drops a file from their desktop.
        try browser.evaluate(
            """
            (async () => {
              const canvas = document.createElement('canvas');
              canvas.width = 320; canvas.height = 200;
              const context = canvas.getContext('2d');
              context.fillStyle = '#2a7'; context.fillRect(0, 0, 320, 200);
              context.fillStyle = '#fff'; context.fillRect(40, 40, 120, 80);
              const blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
              const transfer = new DataTransfer();
              transfer.items.add(new File([blob], 'dropped.png', { type: 'image/png' }));
              document.getElementById('upload-form').dispatchEvent(
                new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
              return true;
            })()
            """
        )
        let id = try #require(
            try await Self.until(
                browser,
                "the upload's job link",
                """
                document.querySelector('#uploads a.upload-job')?.dataset.jobId
                """
            ) as? String
        )
        try await Self.until(
            browser,
            "the upload's job to complete",
            timeout: 90,
            """
            fetch('/api/jobs/\(id)').then(r => r.json()).then(j => j.status === 'completed')
            """
        )
        try browser.evaluate("document.querySelector('#uploads a.upload-job').click()")
        let link = try #require(
            try await Self.until(
                browser,
                "the output's download link",
                """
                document.querySelector('#detail a.download')?.getAttribute('href')
                """
            ) as? String
        )
        #expect(link == "/api/jobs/\(id)/outputs/0")
        let screenshot = harness.directory.appending("upload.png")
        try browser.screenshot(fullPage: false).write(to: URL(fileURLWithPath: screenshot.string))
        let downloaded = try #require(
            try browser.evaluate(
                """
                fetch('\(link)').then(async r => [r.status, r.headers.get('Content-Type'), (await r.arrayBuffer()).byteLength])
                """
            ) as? [Any]
        )
        print("page upload: job \(id), download \(downloaded)")
        #expect(downloaded.first as? Int == 200)
        #expect((downloaded.last as? Int ?? 0) > 100)
        let spooled = harness.directory.files(below: ".chute/spool").filter { $0.hasSuffix("out/dropped.jpg") }
        #expect(spooled.count == 1, "\(harness.directory.files(below: ".chute/spool"))")
        #expect(try Fixtures.identify(harness.directory.appending(".chute/spool/\(spooled[0])")).width == 320)
    }

    @Test func pageShowsARunningJobsProgressAndCancelsIt() async throws {
        let (harness, port) = try await Self.startDaemon()
        defer { harness.stop() }
        let browser = try Self.startBrowser()
        defer { browser.stop() }
        try await Self.signIn(browser, port: port)
        try Self.recordRows(browser)

        // A few photos done, one failed, and a film converting.
        let staging = try harness.directory.makeDirectory("staging")
        let photos = ["beach.png", "forest.png", "harbour.png"]
        for (index, name) in photos.enumerated() {
            try Fixtures.makeImage(at: staging.appending(name), width: 320 + 160 * index, height: 240)
        }
        try "not a picture".write(toFile: staging.appending("scan.png").string, atomically: true, encoding: .utf8)
        try harness.moveIn(photos + ["scan.png"], from: staging)
        try await Self.until(
            browser,
            "three completed photos and a failure",
            timeout: 90,
            "document.querySelectorAll('#history .job[data-state=\"completed\"]').length === 3"
                + " && document.querySelectorAll('#failed .job').length === 1"
        )
        try MediaFixtures.makeClip(
            at: staging.appending("holiday.mkv"),
            width: 640,
            height: 360,
            seconds: 60,
            codecArguments: ["-c:v", "mpeg4", "-q:v", "5", "-c:a", "aac"]
        )
        try harness.moveIn(["holiday.mkv"], from: staging)
        let label = try await Self.until(
            browser,
            "the film's progress bar with the time left",
            timeout: 180,
            """
            (() => {
              const row = document.querySelector('#running .job[data-source$="/holiday.mkv"]');
              const label = row && row.querySelector('.pct').textContent;
              return row && Number(row.dataset.progress) > 0 && label.includes('left') && label;
            })()
            """
        )
        #expect((label as? String)?.contains(" %") == true, "\(label)")
        // The budget line says what the status API says: the film holds cores of the budget.
        let budget = try await Self.until(
            browser,
            "the budget line with the film's cores in use",
            timeout: 60,
            """
            fetch('/api/status').then(r => r.json()).then(s => {
              const text = document.getElementById('budget').textContent;
              return s.budget.cpuInUse > 0
                && text.startsWith('Budget: ' + s.budget.cpuInUse + ' of ' + s.budget.cpu + ' cores, ') && text;
            })
            """
        )
        print("web page: \(budget)")

        // The screenshot of the docs: the whole page, as wide as a laptop's window.
        let height = try browser.evaluate("document.documentElement.scrollHeight") as? Int ?? 900
        try browser.resize(width: 1200, height: height, mobile: false)
        let png = try browser.screenshot(fullPage: false)
        let file = harness.directory.appending("web.png")
        try png.write(to: URL(fileURLWithPath: file.string))
        let image = try Fixtures.identify(file)
        #expect(image.format == "PNG" && image.width == 1200 && image.height == height, "\(image)")
        if let keep = ProcessInfo.processInfo.environment["CHUTE_WEB_SCREENSHOT"] {
            try png.write(to: URL(fileURLWithPath: keep))
        }

        // On a phone's screen the page fits its width: nothing scrolls sideways.
        try browser.resize(width: 390, height: 844, mobile: true)
        try await Self.until(
            browser,
            "the page laid out for a phone",
            "window.innerWidth === 390 && document.documentElement.scrollWidth <= 390"
        )
        if let keep = ProcessInfo.processInfo.environment["CHUTE_WEB_SCREENSHOT_PHONE"] {
            try browser.screenshot(fullPage: false).write(to: URL(fileURLWithPath: keep))
        }
        try browser.resize(width: 1200, height: 900, mobile: false)

        // Cancel from the page asks first: kept, the job runs on; confirmed, the row leaves the running jobs as
        // cancelled, and the sidecar says so.
        let cancel = "document.querySelector('#running .job[data-source$=\"/holiday.mkv\"] button.cancel').click()"
        try browser.evaluate(cancel)
        try await Self.until(browser, "the page to ask before cancelling", "document.querySelector('#confirm').open")
        print("web: asked: \(try browser.evaluate("document.querySelector('#confirm-title').textContent") ?? "")")
        try browser.evaluate("document.querySelector('#confirm-no').click()")
        try await Self.until(browser, "the question to close", "!document.querySelector('#confirm').open")
        #expect(try browser.evaluate("document.querySelectorAll('#running .job').length") as? Int == 1)
        try browser.evaluate(cancel)
        try await Self.until(browser, "the page to ask again", "document.querySelector('#confirm').open")
        try browser.evaluate("document.querySelector('#confirm-yes').click()")
        let film = try await waitUntil("the film's row to show cancelled", timeout: 60) {
            try Self.seen(browser).first { $0.source.hasSuffix("/holiday.mkv") && $0.states.contains("cancelled") }
        }
        #expect(film.states.contains("running"), "\(film.states)")
        #expect(try browser.evaluate("document.querySelectorAll('#running .job').length") as? Int == 0)
        let sidecar = try await waitUntil("the cancelled film's sidecar") {
            harness.sidecars()["holiday.mp4.chute.json"]
        }
        #expect(sidecar.status.rawValue == "cancelled")
        #expect(!FileManager.default.fileExists(atPath: harness.outbox.appending("holiday.mp4").string))
    }
}
