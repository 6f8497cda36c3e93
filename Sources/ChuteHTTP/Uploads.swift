import ChuteCore
import ChuteRuntime
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization
import SystemPackage

/// The status API's uploads: `POST /api/jobs?rule=NAME` takes a file as the request's body, streamed into the spool
/// (``UploadSpool``) and never held in memory, and makes it a job of that rule through the ``JobSubmitter``, as the
/// intake does a dropped file.
///
/// Only a rule with `upload: true` takes uploads (403 otherwise). A body larger than `maxUploadSize` is refused: from
/// its `Content-Length` before it is read, or as soon as it grows past it (413); at most `maxUploads` bodies are taken
/// at once, and none while `maxQueued` jobs wait in the queue (429, with `Retry-After`); a full disk answers 507. The content is sniffed and matched by the rule as a
/// dropped file's would be, and a file the rule does not take is refused at once (415, with the reason). An upload
/// refused, cut short by its client, or stopped by a kill leaves no job and, once swept, no file.
package struct Uploads: Sendable {
    private let spool: UploadSpool
    private let submitter: JobSubmitter
    private let rules: @Sendable () -> [Rule]
    private let reads: @Sendable (EngineKind, ChuteCore.MediaType) -> Bool
    private let maxUploadSize: Int64
    private let maxUploads: Int
    private let maxQueued: Int
    private let requestTimeout: Duration
    private let queuedJobs: @Sendable () async -> Int
    private let cancellations: JobCancellations
    private let logger: Logger
    /// The uploads whose bodies are being received, by job id: counted against `maxUploads`, and left alone by the
    /// spool's sweep.
    private let receiving: Receiving

    /// The ids of the uploads being received; shared by the copies of one ``Uploads``.
    package final class Receiving: Sendable {
        private let ids = Mutex<Set<String>>([])

        package init() {}

        /// The uploads being received now.
        package var current: Set<String> { self.ids.withLock { $0 } }

        /// Counts an upload in, unless `limit` are being received already.
        func enter(_ id: String, limit: Int) -> Bool {
            self.ids.withLock { ids in
                guard ids.count < limit else { return false }
                ids.insert(id)
                return true
            }
        }

        func leave(_ id: String) {
            self.ids.withLock { _ = $0.remove(id) }
        }
    }

    /// - Parameters:
    ///   - rules: the rules in force (a reload changes them).
    ///   - reads: whether an engine reads a sniffed type (the engine registry's answer).
    ///   - receiving: where the uploads being received are counted, which the spool's sweep leaves alone.
    ///   - queuedJobs: how many jobs wait in the queue now, against `maxQueued`.
    ///   - cancellations: where a synchronous conversion past `requestTimeout` is cancelled.
    package init(
        spool: UploadSpool,
        submitter: JobSubmitter,
        settings: Settings,
        queuedJobs: @escaping @Sendable () async -> Int,
        cancellations: JobCancellations,
        rules: @escaping @Sendable () -> [Rule],
        reads: @escaping @Sendable (EngineKind, ChuteCore.MediaType) -> Bool,
        receiving: Receiving,
        logger: Logger
    ) {
        self.spool = spool
        self.submitter = submitter
        self.rules = rules
        self.reads = reads
        self.maxUploadSize = settings.maxUploadSize
        self.maxUploads = settings.maxUploads
        self.maxQueued = settings.maxQueued
        self.requestTimeout = settings.requestTimeout
        self.queuedJobs = queuedJobs
        self.cancellations = cancellations
        self.receiving = receiving
        self.logger = logger
    }

    /// How many seconds a client refused for `maxUploads` is asked to wait.
    static let retryAfterSeconds = 5

    /// `POST /api/jobs?rule=NAME[&name=FILE]` (or `PUT`, as `curl -T` sends): the body is the file.
    ///
    /// - Returns: 202 with the job's id, its status (`pending`) and its address, also in `Location`.
    func upload(_ request: Request) async throws -> Response {
        let (job, _) = try await self.take(request, route: "/api/jobs")
        let location = "/api/jobs/\(job.id)"
        var response = try StatusAPI.json(
            API.Upload(
                id: job.id,
                status: "pending",
                location: location,
                rule: job.rule.name,
                size: job.fingerprint.size
            ),
            status: .accepted
        )
        response.headers[HTTPField.Name.location] = location
        return response
    }

    /// `POST /api/convert?rule=NAME[&name=FILE]`: the body is the file, and the answer's body is its output once
    /// converted, after which the upload is removed. A job with several outputs is answered 300 with their addresses
    /// (kept for `uploadRetention`); a failed one 422 with why. Past `requestTimeout` the job is cancelled and the
    /// answer is 503.
    func convert(_ request: Request, context: some RequestContext) async throws -> Response {
        let (job, ticket) = try await self.take(request, route: "/api/convert")
        let timeout = self.requestTimeout
        let outcome: JobOutcome? = await withTaskGroup(of: JobOutcome?.self) { group in
            group.addTask { try? await ticket.outcome() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let outcome else {
            await self.stop(job.id)
            self.spool.remove(job.id)
            throw StatusAPI.problem(
                .serviceUnavailable,
                "the job did not end within requestTimeout (\(ValueParsing.describe(timeout))); it was cancelled"
            )
        }
        switch outcome {
        case .completed(let output, let others) where others.isEmpty:
            return try await self.answer(with: output, of: job, context: context)
        case .completed(_, let others):
            let addresses = (0...others.count).map { "/api/jobs/\(job.id)/outputs/\($0)" }
            return try StatusAPI.json(API.Choices(id: job.id, result: addresses), status: .multipleChoices)
        case .failed(let failure), .postponed(let failure):
            self.spool.remove(job.id)
            throw APIProblem(
                status: .unprocessableContent,
                message: "\(failure.message) (\(failure.code.rawValue))"
            )
        case .cancelled, .cancelledOnRequest, .vanished, .skipped, .handedOver:
            self.spool.remove(job.id)
            throw StatusAPI.problem(.serviceUnavailable, "the job was cancelled before it converted anything")
        }
    }

    /// Stops an upload's job, queued or converting, and waits, up to 30 s, until it has ended, sidecar and journal
    /// row written, so that nothing of it is written into the spool once its files go.
    ///
    /// A job the queue has just handed to a lane can be neither withdrawn nor cancelled until its worker has it:
    /// both are tried again until one takes.
    package func stop(_ id: String) async {
        let deadline = ContinuousClock.now + .seconds(30)
        var stopped = false
        while self.submitter.isLive(id), ContinuousClock.now < deadline {
            if !stopped {
                stopped = self.cancellations.cancel(id)
                if !stopped { stopped = await self.submitter.withdraw(id) != nil }
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The answer whose body is `output`, streamed from the spool, which is removed once it was sent.
    private func answer(with output: FilePath, of job: Job, context: some RequestContext) async throws -> Response {
        guard let status = try? SourceInspector.status(of: output), status.isRegularFile else {
            self.spool.remove(job.id)
            throw StatusAPI.problem(.internalServerError, "the output is gone from the spool")
        }
        var headers = HTTPFields()
        headers[.contentType] = "application/octet-stream"
        headers[.contentLength] = String(status.fingerprint.size)
        headers[.contentDisposition] = StatusAPI.attachment(output)
        headers[HTTPField.Name("Chute-Job-Id")!] = job.id
        let body = try await FileIO().loadFile(path: output.string, context: context)
        let spool = self.spool
        let id = job.id
        // An output in the rule's folder (`uploadOutput: folder`) stays; the upload in the spool goes once sent.
        return Response(
            status: .ok,
            headers: headers,
            body: ResponseBody { writer in
                defer { spool.remove(id) }
                try await body.write(writer)
            }
        )
    }

    /// Receives an upload and submits its job: the checks, limits and refusals of ``upload(_:)``.
    ///
    /// - Returns: the job and its ticket.
    private func take(_ request: Request, route: String) async throws -> (Job, JobTicket) {
        let query = request.uri.queryParameters
        guard let ruleName = query.get("rule") else {
            throw StatusAPI.problem(.badRequest, "say which rule converts the file: POST \(route)?rule=NAME")
        }
        let rules = self.rules()
        guard let rule = rules.first(where: { $0.name == ruleName }) else {
            throw StatusAPI.problem(.notFound, "no rule '\(ruleName)'")
        }
        guard rule.upload else {
            let takers = rules.filter(\.upload).map { "'\($0.name)'" }
            throw StatusAPI.problem(
                .forbidden,
                "rule '\(rule.name)' does not take uploads (upload: true); "
                    + (takers.isEmpty ? "no rule does" : "rules that do: " + takers.joined(separator: ", "))
            )
        }
        if let length = request.headers[.contentLength].flatMap({ Int64($0) }), length > self.maxUploadSize {
            throw StatusAPI.problem(.contentTooLarge, Self.tooLarge(self.maxUploadSize))
        }
        var form: FormDataFile?
        if let type = request.headers[.contentType], type.lowercased().hasPrefix("multipart/") {
            guard let reader = FormDataFile(contentType: type) else {
                throw StatusAPI.problem(
                    .unsupportedMediaType,
                    "a multipart body must be multipart/form-data with a boundary (curl -F file=@FILE); or send the "
                        + "file itself as the body (curl -T FILE), with ?name=FILE for its name"
                )
            }
            form = reader
        }
        let queued = await self.queuedJobs()
        guard queued < self.maxQueued else {
            throw Self.busy("\(queued) jobs wait in the queue (maxQueued)")
        }
        let id = UUID().uuidString.lowercased()
        guard self.receiving.enter(id, limit: self.maxUploads) else {
            throw Self.busy("\(self.maxUploads) uploads are being received (maxUploads)")
        }
        defer { self.receiving.leave(id) }
        let file: FilePath
        do {
            file = try await self.receive(request.body, form: form, for: id, named: query.get("name"))
        } catch {
            self.spool.remove(id)
            throw error
        }
        switch self.spool.job(id, file: file, rule: rule, reads: self.reads) {
        case .failure(let refusal):
            self.spool.remove(id)
            throw StatusAPI.problem(.unsupportedMediaType, refusal.message)
        case .success(let job):
            guard let ticket = await self.submitter.submit(job) else {
                self.spool.remove(id)
                throw StatusAPI.problem(.serviceUnavailable, "the daemon is shutting down; try again later")
            }
            self.logger.info(
                "Upload taken",
                metadata: [
                    "job.id": "\(id)", "rule.name": "\(rule.name)", "input.path": "\(LogText.escaped(file))",
                    "bytes": "\(job.fingerprint.size)",
                ]
            )
            return (job, ticket)
        }
    }

    /// 429, with `Retry-After`: a load balancer tries another instance.
    private static func busy(_ why: String) -> APIProblem {
        var headers = HTTPFields()
        headers[.retryAfter] = String(Self.retryAfterSeconds)
        return APIProblem(
            status: .tooManyRequests,
            message: "\(why); try again in \(Self.retryAfterSeconds) seconds",
            headers: headers
        )
    }

    /// Writes the body (or the file of a form's body) to the upload's partial file in the spool, then renames it
    /// once whole to the client's name for it (``UploadSpool/fileName(_:)``): `?name=`, else the form's file name.
    ///
    /// - Returns: the uploaded file.
    /// - Throws: 413 past `maxUploadSize`, 507 on a full disk, 400 for a malformed or cut form, 500 when the spool
    ///   cannot be written; the caller removes what was written.
    private func receive(
        _ body: RequestBody,
        form: FormDataFile?,
        for id: String,
        named clientName: String?
    ) async throws -> FilePath {
        do {
            try self.spool.makeFolders(for: id)
        } catch {
            throw StatusAPI.problem(.internalServerError, error.message)
        }
        let partial = self.spool.inputFolder(of: id).appending(UploadSpool.partialName)
        let descriptor: SystemPackage.FileDescriptor
        do {
            descriptor = try SystemPackage.FileDescriptor.open(
                partial,
                .writeOnly,
                options: [.create, .exclusiveCreate, .closeOnExec],
                permissions: [.ownerReadWrite]
            )
        } catch {
            throw StatusAPI.problem(.internalServerError, "cannot write the spool: \(error)")
        }
        var written: Int64 = 0
        do {
            defer { try? descriptor.close() }
            for try await received in body {
                let chunk: ByteBuffer
                do {
                    chunk = try form?.file(in: received) ?? received
                } catch {
                    throw StatusAPI.problem(.badRequest, error.message)
                }
                written += Int64(chunk.readableBytes)
                guard written <= self.maxUploadSize else {
                    throw StatusAPI.problem(.contentTooLarge, Self.tooLarge(self.maxUploadSize))
                }
                // Written off Swift's cooperative threads, each chunk as it comes: the body is never held whole.
                try await Blocking.run { () throws(Errno) in
                    do {
                        _ = try chunk.withUnsafeReadableBytes { try descriptor.writeAll($0) }
                    } catch {
                        // swift-system's writes throw its Errno, retrying EINTR.
                        throw error as? Errno ?? .ioError
                    }
                }
            }
            // The corresponding C function is `fsync`: the upload is on disk before its job is accepted.
            try await Blocking.run { () throws(Errno) in
                guard fsync(descriptor.rawValue) == 0 else { throw Errno(rawValue: errno) }
            }
        } catch let error as Errno where error == .noSpace || error == .diskQuotaExceeded {
            throw StatusAPI.problem(
                .insufficientStorage,
                "the spool's disk is full (\(error)) after \(written) bytes; the upload was removed"
            )
        } catch let error as Errno {
            throw StatusAPI.problem(.internalServerError, "cannot write the spool: \(error)")
        }
        do {
            try form?.finish()
        } catch {
            throw StatusAPI.problem(.badRequest, error.message)
        }
        guard written > 0 else {
            throw StatusAPI.problem(
                .badRequest,
                form == nil
                    ? "the body is empty: send the file as the request's body"
                    : "the form's file is empty (0 bytes): nothing to convert"
            )
        }
        let name = UploadSpool.fileName(clientName ?? form?.clientFileName)
        let file = self.spool.inputFolder(of: id).appending(name)
        guard rename(partial.string, file.string) == 0 else {
            throw StatusAPI.problem(.internalServerError, "cannot write the spool: \(Errno(rawValue: errno))")
        }
        return file
    }

    private static func tooLarge(_ limit: Int64) -> String {
        "the file is larger than maxUploadSize (\(ValueParsing.describe(bytes: limit))); nothing was kept"
    }
}
