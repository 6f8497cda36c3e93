import ChuteCore
import ChuteRuntime
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import SystemPackage

/// The status API's routes: JSON under `/api`, the job events as server-sent events, the Prometheus metrics
/// (`/metrics`, ``JobMetrics``), and the web page (``WebPage``).
///
/// It reads the live jobs from the ``JobStatusBoard`` and the finished ones from the ``Journal``, and steers the
/// daemon only through the intake (pause, resume, queue a path, retry) and the running conversions (cancel). No
/// route takes a file path to read: a job's sidecar is read from the path the journal recorded for it.
package struct StatusAPI: Sendable {
    /// The largest request body taken (`POST /api/queue`'s JSON); a larger one is refused with 413.
    package static let maximumBodySize = 16 * 1024
    /// The largest sidecar a job's detail embeds.
    static let maximumSidecarSize: Int64 = 1 << 20

    package let board: JobStatusBoard
    package let queue: JobQueue
    package let journal: any JobStore
    package let intake: Intake
    package let events: JobEvents
    package let cancellations: JobCancellations
    package let metrics: JobMetrics
    /// The uploads (`POST /api/jobs`), and the spool that holds them; `nil` where nothing is taken.
    package let uploads: Uploads?
    package let spool: UploadSpool?
    /// The hand-offs of this agent's files to agents that cannot see its folders; `nil` where there are none.
    package let handoffs: HandoffDesk?
    /// Each event encoded once for all the clients of the event stream: enough for any client not about to be dropped
    /// as too slow (``JobEvents/hardLimit``) to find the events it has not read yet.
    private let encodedEvents = EncodedValues<JobEvent>(generation: 4096)
    /// Jobs encoded once for the pages that list them.
    private let encodedJobs = EncodedValues<API.Job>(generation: 4096)

    package init(
        board: JobStatusBoard,
        queue: JobQueue,
        journal: any JobStore,
        intake: Intake,
        events: JobEvents,
        cancellations: JobCancellations,
        metrics: JobMetrics,
        uploads: Uploads? = nil,
        spool: UploadSpool? = nil,
        handoffs: HandoffDesk? = nil
    ) {
        self.board = board
        self.queue = queue
        self.journal = journal
        self.intake = intake
        self.events = events
        self.cancellations = cancellations
        self.metrics = metrics
        self.uploads = uploads
        self.spool = spool
        self.handoffs = handoffs
    }

    /// The router with every route, behind a bearer token if given (on TCP).
    package func makeRouter(token: [UInt8]? = nil) -> Router<BasicRequestContext> {
        let router = Router()
        router.add(middleware: RouterRefusals())
        let sessions = token.map { WebSessions(token: $0) }
        // Before the token's middleware, which applies only to the routes added after it: the page holds no data.
        WebPage(sessions: sessions).addRoutes(to: router)
        // Also before it: each hand-off request carries its claim's lease and key, which the store grants.
        if let handoffs = self.handoffs { HandoffRoutes(desk: handoffs).add(to: router) }
        if let token { router.add(middleware: BearerToken(token, sessions: sessions)) }
        router.get("/api/health") { _, _ in try await self.health() }
        router.get("/api/status") { _, _ in try await self.status() }
        router.get("/api/jobs") { request, _ in try await self.jobs(request.uri.queryParameters) }
        router.get("/api/jobs/:id") { _, context in try await self.job(try context.parameters.require("id")) }
        if let uploads = self.uploads {
            // PUT too: `curl -T FILE` sends one.
            router.post("/api/jobs") { request, _ in try await uploads.upload(request) }
            router.put("/api/jobs") { request, _ in try await uploads.upload(request) }
            router.post("/api/convert") { request, context in try await uploads.convert(request, context: context) }
            router.put("/api/convert") { request, context in try await uploads.convert(request, context: context) }
        }
        router.get("/api/jobs/:id/outputs/:index") { request, context in
            try await self.download(
                try context.parameters.require("id"),
                index: try context.parameters.require("index", as: Int.self),
                request: request,
                context: context
            )
        }
        router.delete("/api/jobs/:id") { _, context in try await self.delete(try context.parameters.require("id")) }
        router.post("/api/jobs/:id/cancel") { _, context in
            try await self.cancel(try context.parameters.require("id"))
        }
        router.post("/api/jobs/:id/retry") { _, context in
            try await self.retry(try context.parameters.require("id"))
        }
        router.post("/api/retry") { request, _ in
            try await self.retryFailed(rule: request.uri.queryParameters.get("rule"))
        }
        router.post("/api/queue") { request, _ in try await self.queue(request) }
        router.post("/api/pause") { _, _ in
            await self.intake.pause()
            return try Self.json(API.Acknowledgement(state: "paused", paused: true))
        }
        router.post("/api/resume") { _, _ in
            await self.intake.resume()
            return try Self.json(API.Acknowledgement(state: "resumed", paused: false))
        }
        router.get("/api/rules") { _, _ in try await self.rules() }
        router.get("/api/events") { _, _ in self.eventStream() }
        router.get("/metrics") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(
                status: .ok,
                headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(string: await self.metrics.exposition()))
            )
        }
        return router
    }

    // MARK: - Routes

    private func health() async throws -> Response {
        try Self.json(
            API.Health(status: "ok", version: ChuteVersion.current, pid: getpid(), paused: self.intake.isPaused)
        )
    }

    private func status() async throws -> Response {
        var counts = try await self.journal.countsByState().filter { JobState.history.contains($0.key) }
        let running = await self.board.runningJobs
        counts["running"] = running.count
        counts["queued"] = await self.board.queuedCount
        counts["postponed"] = await self.board.postponedCount
        counts["waiting"] = await self.board.waitingCount
        let shared = self.journal as? any SharedQueue
        return try Self.json(
            API.Status(
                paused: self.intake.isPaused,
                counts: counts,
                running: running,
                budget: await self.queue.budgetStatus,
                agents: try await shared?.agents(),
                agent: shared?.agent
            )
        )
    }

    private func jobs(_ query: Hummingbird.Parameters) async throws -> Response {
        let limit = try Self.integer(query, "limit", default: 50, in: 1...1000)
        let offset = try Self.integer(query, "offset", default: 0, in: 0...Int(Int32.max))
        let state = query.get("state")
        let rule = query.get("rule")
        let text = query.get("text")
        let since = try query.get("since").map { value in
            guard let date = Self.date(value) else {
                throw Self.problem(.badRequest, "'since' must be an ISO 8601 time or seconds since 1970")
            }
            return date
        }
        let liveStates = ["waiting", "queued", "running", "postponed"]
        // `finished`: the history alone, in every state (the web page's history, which a long queue must not fill).
        let known = liveStates + JobState.history + ["finished"]
        if let state, !known.contains(state) {
            throw Self.problem(.badRequest, "unknown state '\(state)'; one of: \(known.joined(separator: ", "))")
        }
        // Live jobs first (the board's), then the history (the journal's), paged as one list.
        var page: [API.Job] = []
        var liveCount = 0
        if state == nil || liveStates.contains(state!) {
            let filter: @Sendable (API.Job) -> Bool = { job in
                (state == nil || job.state == state) && (rule == nil || job.rule == rule)
                    && (text == nil || job.source.contains(text!))
                    && (since == nil || (job.startedAt ?? job.queuedAt ?? .distantPast) >= since!)
            }
            let filtered = state != nil || rule != nil || text != nil || since != nil
            (page, liveCount) = await self.board.liveEntries(
                where: filtered ? filter : nil,
                offset: offset,
                limit: limit
            )
        }
        if state == nil || state == "finished" || JobState.history.contains(state!), page.count < limit {
            let filter = JobHistoryFilter(
                state: state == "finished" ? nil : state,
                rule: rule,
                since: since,
                text: text,
                limit: limit - page.count,
                offset: max(0, offset - liveCount)
            )
            page += try await self.journal.history(filter).map(Self.job)
        }
        let jobs = try page.map(self.encodedJobs.json)
        return Self.json(document: API.JobList.json(jobs: jobs, limit: limit, offset: offset))
    }

    private func job(_ id: String) async throws -> Response {
        let (job, sidecar, paths) = try await self.detail(id)
        return try Self.json(API.JobDetail(job: job, sidecar: sidecar, outputs: Self.outputs(paths)))
    }

    /// A job as the board (while it is live) or the journal knows it, with its sidecar and its outputs.
    private func detail(_ id: String) async throws -> (API.Job, Sidecar?, [FilePath]) {
        if let live = await self.board.entry(id), ["queued", "running"].contains(live.state) {
            return (live, nil, [])
        }
        guard let entry = try await self.journal.entry(id), entry.state != JobState.queued.rawValue else {
            if let live = await self.board.entry(id) {
                return (live, nil, live.outputs.map { FilePath($0) })
            }
            throw Self.problem(.notFound, "no job '\(id)'")
        }
        let sidecar = entry.sidecar.flatMap(Self.readSidecar)
        var paths = sidecar?.outputs?.map(\.filePath) ?? []
        if paths.isEmpty, let output = entry.output { paths = [output] }
        return (Self.job(entry), sidecar, paths)
    }

    /// `GET /api/jobs/ID/outputs/N`: the N-th output (from 0) of a completed job, with its length and an `ETag`, or
    /// the byte range its `Range` asks for (206), so that a client resumes a download.
    private func download(
        _ id: String,
        index: Int,
        request: Request,
        context: some RequestContext
    ) async throws -> Response {
        let (job, _, paths) = try await self.detail(id)
        guard job.state == "completed" else {
            throw Self.problem(.conflict, "job '\(id)' is \(job.state); its outputs are served once it completed")
        }
        guard paths.indices.contains(index) else {
            throw Self.problem(.notFound, "job '\(id)' has \(paths.count) output(s), numbered from 0")
        }
        let path = paths[index]
        guard let status = try? SourceInspector.status(of: path), status.isRegularFile else {
            throw Self.problem(.gone, "the output \(path.readableString) is no longer there")
        }
        let size = status.fingerprint.size
        let tag =
            "\"\(String(status.fingerprint.inode, radix: 16))-\(String(size, radix: 16))-"
            + "\(String(status.fingerprint.modifiedNanoseconds, radix: 16))\""
        var headers = HTTPFields()
        headers[.eTag] = tag
        headers[.acceptRanges] = "bytes"
        headers[.contentType] = "application/octet-stream"
        headers[.contentDisposition] = Self.attachment(path)
        if request.headers[.ifNoneMatch] == tag {
            return Response(status: .notModified, headers: headers)
        }
        var range: ClosedRange<Int64>?
        if let asked = request.headers[.range], request.headers[.ifRange].map({ $0 == tag }) ?? true {
            guard let satisfiable = ByteRange.parse(asked, size: size) else {
                headers[.contentRange] = "bytes */\(size)"
                throw APIProblem(
                    status: .rangeNotSatisfiable,
                    message: "the range \(asked) is outside the output's \(size) bytes",
                    headers: headers
                )
            }
            range = satisfiable
        }
        let files = FileIO()
        guard let range else {
            headers[.contentLength] = String(size)
            return Response(
                status: .ok,
                headers: headers,
                body: try await files.loadFile(path: path.string, context: context)
            )
        }
        headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound)/\(size)"
        headers[.contentLength] = String(range.count)
        let body = try await files.loadFile(
            path: path.string,
            range: Int(range.lowerBound)...Int(range.upperBound),
            context: context
        )
        return Response(status: .partialContent, headers: headers, body: body)
    }

    /// `DELETE /api/jobs/ID`: stops an upload's job if it is queued or converting, then removes the upload, its
    /// outputs in the spool and their sidecars.
    private func delete(_ id: String) async throws -> Response {
        guard let spool = self.spool, let uploads = self.uploads else {
            throw Self.problem(.notFound, "no job '\(id)'")
        }
        let recorded = try await self.journal.entry(id)
        let live = await self.board.entry(id)
        guard let source = recorded?.source ?? live.map({ FilePath($0.source) }) else {
            throw Self.problem(.notFound, "no job '\(id)'")
        }
        guard spool.contains(source) else {
            throw Self.problem(
                .conflict,
                "job '\(id)' converts a watched file, which is not deleted; cancel it with POST /api/jobs/\(id)/cancel"
            )
        }
        // The job is over, its sidecar written, before its files go.
        await uploads.stop(id)
        spool.remove(id)
        return try Self.json(API.Acknowledgement(state: "deleted", id: id))
    }

    private func cancel(_ id: String) async throws -> Response {
        if self.cancellations.cancel(id) {
            // The worker is killed at once; the job is over when its sidecar and journal row say so.
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                if let entry = await self.board.entry(id), entry.state != "running" {
                    return try Self.json(API.Acknowledgement(state: entry.state, id: id))
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            return try Self.json(API.Acknowledgement(state: "cancelling", id: id), status: .accepted)
        }
        if await self.intake.withdraw(id) != nil {
            return try Self.json(API.Acknowledgement(state: "cancelled", id: id))
        }
        if await self.intake.cancelPostponed(id) != nil {
            return try Self.json(API.Acknowledgement(state: "cancelled", id: id))
        }
        let live = await self.board.entry(id)
        let recorded = try await self.journal.entry(id)
        if live != nil || recorded != nil {
            throw Self.problem(.conflict, "job '\(id)' is neither queued nor converting")
        }
        throw Self.problem(.notFound, "no job '\(id)'")
    }

    /// Queues a failed or cancelled job's source again; a job cancelled while queued is known only to the board.
    private func retry(_ id: String) async throws -> Response {
        guard let entry = try await self.journal.entry(id) else {
            guard let live = await self.board.entry(id), live.state == "cancelled" else {
                throw Self.problem(.notFound, "no job '\(id)'")
            }
            do {
                try await self.intake.take(FilePath(live.source), again: true)
            } catch {
                throw Self.problem(.conflict, "its source \(live.source) is gone")
            }
            return try Self.json(API.Acknowledgement(state: "retried", id: id))
        }
        guard ["failed", "cancelled"].contains(entry.state) else {
            throw Self.problem(.conflict, "job '\(id)' is \(entry.state), neither failed nor cancelled")
        }
        if let reason = try await self.requeue(entry) { throw Self.problem(.conflict, reason) }
        return try Self.json(API.Acknowledgement(state: "retried", id: id))
    }

    private func retryFailed(rule: String?) async throws -> Response {
        if let rule, !(self.intake.rules.contains { $0.name == rule }) {
            throw Self.problem(.notFound, "no rule '\(rule)'")
        }
        var report = API.RetryReport(retried: [], skipped: [:])
        for entry in try await self.journal.failedJobs(rule: rule) {
            if let reason = try await self.requeue(entry) {
                report.skipped[entry.id] = reason
            } else {
                report.retried.append(entry.id)
            }
        }
        return try Self.json(report)
    }

    /// Queues a failed or cancelled job's source again.
    ///
    /// - Returns: why it could not be, or `nil`.
    private func requeue(_ entry: JobHistoryEntry) async throws -> String? {
        if let quarantine = entry.quarantine {
            return "its source was moved to quarantine, \(quarantine): move it back into the watched folder to try "
                + "again"
        }
        // Checked before the journal forgets the failure, which would otherwise let the intake take it anyway.
        do {
            try await self.intake.check(entry.source)
        } catch .outsideWatchedFolders {
            return "its source \(entry.source) is no longer beneath a watched folder"
        } catch .hardLink(let links) {
            return "its source \(entry.source) is a hard link (\(links) names); the watch's allowHardLinks takes "
                + "such files"
        } catch {
            return "its source \(entry.source) is gone (moved, or deleted)"
        }
        guard try await self.journal.markRetried(entry.id) else { return "job '\(entry.id)' is no longer failed" }
        do {
            try await self.intake.take(entry.source, again: true)
        } catch {
            return "its source \(entry.source) is gone"
        }
        return nil
    }

    private func queue(_ request: Request) async throws -> Response {
        let body = try await request.body.collect(upTo: Self.maximumBodySize)
        guard let asked = try? API.decoder().decode(API.QueueRequest.self, from: Data(body.readableBytesView)) else {
            throw Self.problem(.badRequest, "expected a JSON body {\"path\": \"/absolute/path\"}")
        }
        do {
            try await self.intake.take(FilePath(asked.path), again: true)
        } catch .outsideWatchedFolders {
            throw Self.problem(.forbidden, "the path is not beneath a watched folder")
        } catch .hardLink(let links) {
            throw Self.problem(
                .unprocessableContent,
                "the file is a hard link (\(links) names), which the daemon skips; the watch's allowHardLinks takes "
                    + "such files"
            )
        } catch {
            throw Self.problem(.notFound, "no regular file at that path")
        }
        return try Self.json(API.Acknowledgement(state: "taken"), status: .accepted)
    }

    private func rules() async throws -> Response {
        let rules = self.intake.rules.map { rule in
            API.RuleInfo(
                name: rule.name,
                match: rule.match.map(\.pattern),
                to: rule.to.name,
                output: rule.output.string,
                options: rule.options,
                upload: rule.upload
            )
        }
        return try Self.json(rules)
    }

    /// The shortest time between two writes to one client of the event stream.
    static let eventStreamPace = Duration.milliseconds(100)

    /// Every job event from now on, one `event:`/`data:` record each, until the client goes or shutdown. A client
    /// that reads too slowly loses progress events, then the stream (``JobEvents``): it never holds up a job. The
    /// events buffered since the last write go out in one write, at most every ``eventStreamPace``.
    private func eventStream() -> Response {
        let subscription = self.events.subscribe()
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        return Response(
            status: .ok,
            headers: headers,
            body: ResponseBody { writer in
                defer { subscription.finish() }
                try await writer.write(ByteBuffer(string: ": chute job events\n\n"))
                for await batch in subscription.batches.cancelOnGracefulShutdown() {
                    var buffer = ByteBuffer()
                    for event in batch {
                        var data = try self.encodedEvents.json(event)
                        buffer.writeString("event: \(event.kind.rawValue)\ndata: ")
                        buffer.writeBuffer(&data)
                        buffer.writeString("\n\n")
                    }
                    try await writer.write(buffer)
                    // Paced: in a burst of thousands of jobs, a write per event to each client costs the daemon more
                    // than the jobs' own bookkeeping; what arrives meanwhile goes out in the next write.
                    try? await Task.sleep(for: Self.eventStreamPace)
                }
                try await writer.finish(nil)
            }
        )
    }

    // MARK: - Helpers

    static func job(_ entry: JobHistoryEntry) -> API.Job {
        API.Job(
            id: entry.id,
            rule: entry.rule,
            source: entry.source.readableString,
            state: entry.state,
            outputs: entry.output.map { [$0.readableString] } ?? [],
            message: entry.failureMessage,
            code: entry.failureCode,
            progress: entry.state == "completed" ? 1 : nil,
            startedAt: entry.startedAt,
            endedAt: entry.updatedAt,
            quarantined: entry.quarantine?.readableString,
            agent: entry.agent
        )
    }

    /// The sidecar at a path the journal recorded, if it is one (its name, its size, its JSON).
    static func readSidecar(_ path: FilePath) -> Sidecar? {
        guard path.lastComponent?.string.hasSuffix(Sidecar.fileSuffix) == true,
            let status = try? SourceInspector.status(of: path), status.isRegularFile,
            status.fingerprint.size <= Self.maximumSidecarSize,
            let data = try? SystemCall.contents(of: path)
        else { return nil }
        return try? JSONDecoder().decode(Sidecar.self, from: data)
    }

    static func outputs(_ paths: [FilePath]) -> [API.Output] {
        paths.map { path in
            API.Output(path: path.readableString, size: (try? SourceInspector.status(of: path))?.fingerprint.size)
        }
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Self.json(document: ByteBuffer(bytes: try API.encoder().encode(value)), status: status)
    }

    /// A response with a JSON document already encoded, ended by a newline.
    static func json(document: ByteBuffer, status: HTTPResponse.Status = .ok) -> Response {
        var body = document
        body.writeString("\n")
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: body))
    }

    /// The `Content-Disposition` of an output sent as a file: its name, readable, without quotes.
    static func attachment(_ path: FilePath) -> String {
        let name = path.lastComponent.map { FilePath(root: nil, [$0]).readableString } ?? "output"
        return "attachment; filename=\"\(name.replacingOccurrences(of: "\"", with: "_"))\""
    }

    /// A refusal with its JSON body.
    static func problem(_ status: HTTPResponse.Status, _ message: String) -> APIProblem {
        APIProblem(status: status, message: message)
    }

    static func integer(
        _ query: Hummingbird.Parameters,
        _ name: String,
        default value: Int,
        in range: ClosedRange<Int>
    ) throws -> Int {
        guard let text = query.get(name) else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw Self.problem(
                .badRequest,
                "'\(name)' must be a whole number from \(range.lowerBound) to \(range.upperBound)"
            )
        }
        return number
    }

    /// An ISO 8601 time (with or without fractional seconds) or seconds since 1970.
    static func date(_ text: String) -> Date? {
        if let seconds = Double(text) { return Date(timeIntervalSince1970: seconds) }
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}

/// A refusal of the status API: its status and a JSON body `{"error": "…"}`.
package struct APIProblem: HTTPResponseError {
    package var status: HTTPResponse.Status
    package var message: String
    /// More header fields of the answer (`Retry-After`).
    package var headers: HTTPFields = [:]

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try StatusAPI.json(API.Problem(error: self.message), status: self.status)
        response.headers.append(contentsOf: self.headers)
        return response
    }
}

extension HTTPResponse.Status {
    /// 507: the server has no room to store what the request sends (a full spool).
    static let insufficientStorage = HTTPResponse.Status(code: 507, reasonPhrase: "Insufficient Storage")
}

/// Gives the router's own refusals (no route for the address, a method its route does not take) the API's JSON
/// body, as every route's refusals have: Hummingbird answers them with an empty body.
struct RouterRefusals<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.body == nil {
            switch error.status {
            case .notFound:
                throw APIProblem(status: .notFound, message: "no such address: \(request.method) \(request.uri.path)")
            case .methodNotAllowed:
                throw APIProblem(
                    status: .methodNotAllowed,
                    message: "\(request.uri.path) does not take \(request.method)"
                )
            default:
                throw error
            }
        }
    }
}
