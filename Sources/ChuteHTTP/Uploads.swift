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
/// at once (429, with `Retry-After`); a full disk answers 507. The content is sniffed and matched by the rule as a
/// dropped file's would be, and a file the rule does not take is refused at once (415, with the reason). An upload
/// refused, cut short by its client, or stopped by a kill leaves no job and, once swept, no file.
package struct Uploads: Sendable {
    private let spool: UploadSpool
    private let submitter: JobSubmitter
    private let rules: @Sendable () -> [Rule]
    private let reads: @Sendable (EngineKind, ChuteCore.MediaType) -> Bool
    private let maxUploadSize: Int64
    private let maxUploads: Int
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
    package init(
        spool: UploadSpool,
        submitter: JobSubmitter,
        settings: Settings,
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
        self.receiving = receiving
        self.logger = logger
    }

    /// How many seconds a client refused for `maxUploads` is asked to wait.
    static let retryAfterSeconds = 5

    /// `POST /api/jobs?rule=NAME[&name=FILE]` (or `PUT`, as `curl -T` sends): the body is the file.
    ///
    /// - Returns: 202 with the job's id, its status (`pending`) and its address, also in `Location`.
    func upload(_ request: Request) async throws -> Response {
        let query = request.uri.queryParameters
        guard let ruleName = query.get("rule") else {
            throw StatusAPI.problem(.badRequest, "say which rule converts the file: POST /api/jobs?rule=NAME")
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
        if request.headers[.contentType]?.lowercased().hasPrefix("multipart/") == true {
            throw StatusAPI.problem(
                .unsupportedMediaType,
                "send the file itself as the body (curl -T FILE or --data-binary @FILE), with ?name=FILE for its name"
            )
        }
        let id = UUID().uuidString.lowercased()
        guard self.receiving.enter(id, limit: self.maxUploads) else {
            var headers = HTTPFields()
            headers[.retryAfter] = String(Self.retryAfterSeconds)
            throw APIProblem(
                status: .tooManyRequests,
                message: "\(self.maxUploads) uploads are being received (maxUploads); try again in a few seconds",
                headers: headers
            )
        }
        defer { self.receiving.leave(id) }
        let name = UploadSpool.fileName(query.get("name"))
        let file: FilePath
        do {
            file = try await self.receive(request.body, for: id, as: name)
        } catch {
            self.spool.remove(id)
            throw error
        }
        switch self.spool.job(id, file: file, rule: rule, reads: self.reads) {
        case .failure(let refusal):
            self.spool.remove(id)
            throw StatusAPI.problem(.unsupportedMediaType, refusal.message)
        case .success(let job):
            guard await self.submitter.submit(job) != nil else {
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
            let location = "/api/jobs/\(id)"
            var response = try StatusAPI.json(
                API.Upload(id: id, status: "pending", location: location, rule: rule.name, size: job.fingerprint.size),
                status: .accepted
            )
            response.headers[HTTPField.Name.location] = location
            return response
        }
    }

    /// Writes the body to the upload's partial file in the spool, then renames it to `name` once whole.
    ///
    /// - Returns: the uploaded file.
    /// - Throws: 413 past `maxUploadSize`, 507 on a full disk, 500 when the spool cannot be written; the caller
    ///   removes what was written.
    private func receive(
        _ body: RequestBody,
        for id: String,
        as name: FilePath.Component
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
            for try await chunk in body {
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
        guard written > 0 else {
            throw StatusAPI.problem(.badRequest, "the body is empty: send the file as the request's body")
        }
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
