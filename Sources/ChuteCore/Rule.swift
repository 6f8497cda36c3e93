import SystemPackage

/// One conversion rule: which files it takes, what it makes of them and where the output goes.
package struct Rule: Sendable, Equatable {
    /// `name` (string, required, unique): names the rule in logs and sidecars.
    package var name: String
    /// `match` (glob or list of globs, required): case-insensitive globs on the file name.
    package var match: [GlobPattern]
    /// `to` (format, required): the target format, which also picks the engine.
    package var to: TargetFormat
    /// `output` (path, required): the target folder.
    package var output: FilePath
    /// Conversion parameters (`quality`, `width`, `height`, `strip`).
    package var options: ConversionOptions
    /// Conditions a file must also meet (`minSize`, `maxSize`, `type`, `minAge`, `maxAge`).
    package var filters: RuleFilters
    /// `rename` (template, default `{stem}.{ext}`): the output file name.
    package var rename: NameTemplate
    /// `keepStructure` (bool, default true): keep the source's sub-folder path below the watched folder.
    package var keepStructure: Bool
    /// `onConflict` (`rename`|`skip`|`overwrite`, default `rename`): what to do when the output name is taken.
    package var onConflict: ConflictPolicy
    /// `concurrency` (int, default: the engine's): at most this many jobs of this rule run at once.
    package var concurrency: Int?
    /// `watch` (path or list of paths, default: all): only files below these watched folders.
    package var watches: [FilePath]
    /// `owner`, `group` and `mode`: who owns the outputs, sidecars and folders the rule writes, and their permissions;
    /// whatever is unset comes from the target folder.
    package var ownership: OutputOwnership
    /// `source` (`keep`|`move`|`delete`, default keep) and `doneFolder`: what happens to a source once its output is
    /// verified and in place.
    package var sourcePolicy: SourcePolicy
    /// `quarantine` (path, default none): where the sources of jobs that failed for a reason of their own (damaged,
    /// refused, over a limit, crashing the worker) are moved, each with a reason file.
    package var quarantine: FilePath?
    /// The job limits: the settings' values, with whichever of `jobTimeout`, `memoryLimit`, `cpuTimeLimit`,
    /// `maxOutputSize`, `maxPixels`, `maxImageSide`, `maxFrames` and `maxDuration` the rule sets.
    package var limits: JobLimits
    /// `onDuplicate` (`skip`|`convert`, default skip): what to do with a source whose content (SHA-256) this rule
    /// already converted into an output that still exists.
    package var onDuplicate: DuplicatePolicy
    /// `sidecars` (`beside`, `failed-only` or a folder, default beside): where the sidecars go.
    package var sidecars: SidecarPlacement
    /// `groupBy` (`folder`, default none): each sub-folder of the watched folder becomes one job, whose matching files
    /// in natural name order make one output named after the folder: a merged PDF, an animation, a contact sheet, or
    /// clips joined into one video or sound file.
    package var grouping: RuleGrouping?
    /// `notify` (list, default: the top-level `notify`): where notifications of this rule's jobs go, instead of the
    /// top-level list; `[]` sends none.
    package var notify: [NotifyTarget]?
    /// `upload` (bool, default false): the status API takes files for this rule (`POST /api/jobs?rule=NAME`).
    package var upload: Bool
    /// `uploadOutput` (`spool` or `folder`, default `spool`): where an uploaded file's outputs go: into the spool
    /// beside the journal, to be downloaded and deleted after `uploadRetention`, or into `output` as a dropped
    /// file's would.
    package var uploadOutput: UploadOutput
    /// `run` (a command as a list, or a mapping of `command` and `on`; default none) with `runTimeout`: what the rule
    /// runs after each of its jobs ends (``RuleHook``).
    package var hook: RuleHook?
    /// `pre` (a command as a list, default none), with `runTimeout`: what the rule runs before each of its jobs
    /// converts, which may refuse the file or change the copy that is converted (``RuleHook``; its `events` unused).
    package var preHook: RuleHook?

    package init(
        name: String,
        match: [GlobPattern],
        to: TargetFormat,
        output: FilePath,
        options: ConversionOptions = ConversionOptions(),
        filters: RuleFilters = RuleFilters(),
        rename: NameTemplate = .default,
        keepStructure: Bool = true,
        onConflict: ConflictPolicy = .rename,
        concurrency: Int? = nil,
        watches: [FilePath] = [],
        ownership: OutputOwnership = OutputOwnership(),
        sourcePolicy: SourcePolicy = .keep,
        quarantine: FilePath? = nil,
        limits: JobLimits = JobLimits(),
        onDuplicate: DuplicatePolicy = .skip,
        sidecars: SidecarPlacement = .besideOutput,
        grouping: RuleGrouping? = nil,
        notify: [NotifyTarget]? = nil,
        upload: Bool = false,
        uploadOutput: UploadOutput = .spool,
        hook: RuleHook? = nil,
        preHook: RuleHook? = nil
    ) {
        self.name = name
        self.match = match
        self.to = to
        self.output = output
        self.options = options
        self.filters = filters
        self.rename = rename
        self.keepStructure = keepStructure
        self.onConflict = onConflict
        self.concurrency = concurrency
        self.watches = watches
        self.ownership = ownership
        self.sourcePolicy = sourcePolicy
        self.quarantine = quarantine
        self.limits = limits
        self.onDuplicate = onDuplicate
        self.sidecars = sidecars
        self.grouping = grouping
        self.notify = notify
        self.upload = upload
        self.uploadOutput = uploadOutput
        self.hook = hook
        self.preHook = preHook
    }
}

extension Rule {
    /// The folders this rule writes into: its output folder, and its done and quarantine folders if it has them.
    package var writtenFolders: [FilePath] {
        var folders = [self.output]
        if case .move(let folder) = self.sourcePolicy { folders.append(folder) }
        if let quarantine = self.quarantine { folders.append(quarantine) }
        if case .folder(let folder) = self.sidecars { folders.append(folder) }
        return folders
    }

    /// The engines this rule's jobs may run on, as far as its `match` tells: for a pattern with a known literal
    /// extension, the engine that writes the target from that type (the video engine for a poster of `*.mkv`); for
    /// any other pattern, where the content decides, every engine that writes the target.
    package var engines: Set<EngineKind> {
        var engines: Set<EngineKind> = []
        for pattern in self.match {
            if let type = pattern.literalExtension.flatMap(MediaType.usual(forExtension:)) {
                engines.insert(self.to.engine(reading: type))
            } else {
                engines.formUnion([self.to.engine] + self.to.writers.values)
            }
        }
        return engines
    }

    /// Where the sidecar of `output` (a path below ``output``) goes: beside it, or in the `sidecars` folder at the
    /// same path below it as `output` is below the output folder, such as `meta/trip/IMG_1.jpg.chute.json`.
    package func sidecarPath(for output: FilePath) -> FilePath {
        let beside = output.appendingToLastComponent(Sidecar.fileSuffix)
        guard case .folder(let folder) = self.sidecars, let name = beside.lastComponent else { return beside }
        var relative = output.removingLastComponent()
        guard relative.removePrefix(self.output) else { return folder.appending(name) }
        return folder.pushing(relative).appending(name)
    }

    /// Whether a job that ended this way gets a sidecar: always, unless `sidecars: failed-only` and it completed.
    package func writesSidecar(completed: Bool) -> Bool {
        !(completed && self.sidecars == .failedOnly)
    }
}

/// How a rule gathers several files into one job.
package enum RuleGrouping: String, Sendable, Equatable, CaseIterable {
    /// `folder`: a sub-folder dropped into the watched folder is one job once it is complete; the files below it
    /// that the rule matches, in natural name order (``NaturalOrder``), make one output named after the folder.
    case folder
}

/// What to do with a source whose content a rule already converted.
package enum DuplicatePolicy: String, Sendable, Equatable, CaseIterable {
    /// Convert nothing; the log names the earlier output (the default). A source is a duplicate when a completed job
    /// of the same rule had the same SHA-256 and its output still exists: once the output is deleted, the same
    /// content is converted again.
    case skip
    /// Convert it again, as any other file.
    case convert
}

/// Where the outputs of a rule's uploaded files go.
package enum UploadOutput: String, Sendable, Equatable, CaseIterable {
    /// Into the upload's folder in the spool, served by the API and deleted after `uploadRetention`.
    case spool
    /// Into the rule's `output`, as a dropped file's outputs.
    case folder
}

/// Where a rule's sidecars go.
package enum SidecarPlacement: Sendable, Equatable {
    /// `beside`: next to the output, `NAME.chute.json` (the default).
    case besideOutput
    /// `failed-only`: only failed jobs get one, beside where the output would have been.
    case failedOnly
    /// A folder, below which each sidecar keeps the output's sub-folder path.
    case folder(FilePath)
}

/// Extra conditions on a matched file.
package struct RuleFilters: Sendable, Equatable {
    /// `minSize` (byte size such as `10KB`, default none): smaller files are skipped.
    package var minSize: Int64?
    /// `maxSize` (byte size such as `2GB`, default none): larger files are skipped.
    package var maxSize: Int64?
    /// `type` (`image`|`video`|`audio`|`document`, or a list): the category sniffed from the file's content.
    package var types: Set<MediaCategory>
    /// `minAge` (duration, default none): files whose modification time is more recent are skipped.
    package var minAge: Duration?
    /// `maxAge` (duration, default none): files whose modification time is older are skipped.
    package var maxAge: Duration?

    package init(
        minSize: Int64? = nil,
        maxSize: Int64? = nil,
        types: Set<MediaCategory> = [],
        minAge: Duration? = nil,
        maxAge: Duration? = nil
    ) {
        self.minSize = minSize
        self.maxSize = maxSize
        self.types = types
        self.minAge = minAge
        self.maxAge = maxAge
    }
}

/// What to do when the output name is already taken in the target folder.
package enum ConflictPolicy: String, Sendable, Equatable, CaseIterable, Codable {
    /// Add `-1`, `-2`, … before the extension until the name is free (the default).
    case rename
    /// Leave the existing file, record the job as failed with the reason.
    case skip
    /// Replace the existing file; the sidecar records the replacement as a warning.
    case overwrite
}

/// What happens to a source after its output was verified and put in place.
package enum SourcePolicy: Sendable, Equatable {
    /// Leave it where it is (the default).
    case keep
    /// Move it to this folder, below which it keeps its sub-folder path; a taken name gets `-1`, `-2`, ….
    case move(to: FilePath)
    /// Delete it.
    case delete

    /// The values of the `source` key.
    package enum Choice: String, Sendable, CaseIterable {
        case keep, move, delete
    }
}
