import ArgumentParser
import ChuteApp
import ChuteCatalog
import ChuteCore
import Foundation
import Logging
import SystemPackage

/// The `chute` command: the daemon and its tools.
@main
struct Chute: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Watches drop folders and converts whatever lands there.",
        version: ChuteVersion.current,
        subcommands: [
            Run.self, Check.self, Explain.self, Convert.self, Schema.self, Status.self, Jobs.self, Show.self,
            Retry.self, Cancel.self, Pause.self, Resume.self, Submit.self,
        ]
    )
}

/// Options every command that logs shares.
struct LoggingOptions: ParsableArguments {
    @Option(help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    @Option(
        help: "Log format: logfmt (key=value pairs, quoted where needed) or json (one object per line).",
        transform: { text in
            guard let format = LogFormat(rawValue: text) else {
                throw ValidationError("--log-format must be logfmt or json, not '\(text)'")
            }
            return format
        }
    )
    var logFormat: LogFormat = .logfmt

    /// Sends every log record to standard error at the chosen level and in the chosen format, once per process.
    func bootstrap() -> Logger {
        let (level, format) = (self.logLevel, self.logFormat)
        LoggingSystem.bootstrap { _ in LineLogHandler(format: format, level: level) }
        return Logger(label: "chute")
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// The path of the running executable, beside which the workers are found.
func currentExecutable() -> FilePath {
    FilePath((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
}

/// Reads a config file, or prints its problems as `FILE:LINE:COL: message` and exits non-zero.
func loadConfig(_ path: String) throws -> ChuteConfig {
    do {
        return try ConfigReader.read(contentsOf: FilePath(path), registry: Engines.registry)
    } catch {
        FileHandle.standardError.write(Data((error.description + "\n").utf8))
        throw ExitCode(2)
    }
}

extension Chute {
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the daemon in the foreground, logging to standard error."
        )

        @Option(name: .shortAndLong, help: "The rules file (YAML).")
        var config: String

        @Option(
            help: ArgumentHelp(
                "The journal of every job, a SQLite file (default: .chute/journal.sqlite beside the rules file).",
                valueName: "file"
            )
        )
        var journal: String?

        @Option(
            help: ArgumentHelp(
                "Where jobs are kept, instead of settings.store: sqlite (the journal), or a PostgreSQL database "
                    + "postgres://USER@HOST:PORT/DATABASE, whose password comes from settings.storePasswordFile or "
                    + "CHUTE_STORE_PASSWORD, never from the address.",
                valueName: "address"
            )
        )
        var store: String?

        @OptionGroup var logging: LoggingOptions

        func validate() throws {
            if let store = self.store, case .failure(let error) = StoreLocation.parse(store) {
                throw ValidationError(error.description)
            }
        }

        func run() async throws {
            var config = try loadConfig(self.config)
            if let store = self.store, case .success(var location) = StoreLocation.parse(store) {
                // The password file of the rules' own store stays.
                if case .postgres(var database) = location, case .postgres(let configured) = config.settings.store {
                    database.passwordFile = configured.passwordFile
                    location = .postgres(database)
                }
                config.settings.store = location
            }
            let logger = self.logging.bootstrap()
            let configFolder = FilePath(self.config).removingLastComponent()
            let journal =
                self.journal.map { FilePath($0) }
                ?? (configFolder.isEmpty ? FilePath(".") : configFolder).appending(".chute/journal.sqlite")
            let application = ChuteApplication(
                config: config,
                configFile: FilePath(self.config),
                journal: journal,
                chute: currentExecutable(),
                logger: logger
            )
            try await application.run()
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate a rules file.",
            discussion: "Exits 0 and prints a summary when the file is valid; otherwise prints one line per problem "
                + "as FILE:LINE:COL: message and exits 2."
        )

        @Argument(help: "The rules file (YAML).")
        var file: String?

        @Option(name: .shortAndLong, help: "The rules file, as the other commands take it (instead of FILE).")
        var config: String?

        func validate() throws {
            guard (self.file == nil) != (self.config == nil) else {
                throw ValidationError("give the rules file once: chute check FILE, or chute check --config FILE")
            }
        }

        func run() throws {
            let file = self.file ?? self.config ?? ""
            let config = try loadConfig(file)
            print(ConfigSummary.render(config, file: file, registry: Engines.registry))
            // Not an error: a share mounted later, or a folder an uploader creates, is waited for by the daemon.
            for watch in config.watches where access(watch.path.string, F_OK) != 0 && errno == ENOENT {
                print("warning: watched folder \(watch.path) does not exist yet; chute run waits for it to appear")
            }
            for warning in ConfigSummary.warnings(config, registry: Engines.registry)
                + ChuteApplication.missingWorkers(for: config, beside: currentExecutable())
            {
                print(warning)
            }
        }
    }

    struct Explain: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show which rule a file would match and the output it would produce, or why nothing matches.",
            discussion: "Given a folder (a watched folder itself, or one below it) or several paths, a dry run: one "
                + "line per file with what it would become, then how many files each rule takes. Exits 1 when no "
                + "rule takes any of them."
        )

        @Option(name: .shortAndLong, help: "The rules file (YAML).")
        var config: String

        @Argument(help: "Files (they need not exist yet) or folders.")
        var paths: [String]

        func validate() throws {
            if self.paths.isEmpty { throw ValidationError("give at least one file or folder") }
        }

        func run() throws {
            let config = try loadConfig(self.config)
            let (text, matched) = Explanation.explain(self.paths.map { FilePath($0) }, config: config)
            print(text)
            if !matched { throw ExitCode(1) }
        }
    }

    struct Convert: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Convert one file, without the daemon, through the same engines and worker process.",
            discussion: "The output format follows OUTPUT's extension. The options are the rule keys of "
                + "docs/rules.md, with the same values and checks. An existing OUTPUT is never replaced unless "
                + "--overwrite is given.\n\n" + RuleOptionArguments.help(registry: Engines.registry)
        )

        @Argument(help: "The file to convert.")
        var input: String

        @Argument(help: "The file to create; its extension picks the format (jpg, webp, mp4, mp3, …).")
        var output: String

        @Flag(help: "Replace OUTPUT if it exists.")
        var overwrite = false

        @Option(help: "Give up after this many seconds.")
        var timeout: Int = 1800

        @OptionGroup var logging: LoggingOptions

        @Argument(
            parsing: .allUnrecognized,
            help: ArgumentHelp(
                "Conversion options and job limits: any rule key of the target's engine, or a limit key "
                    + "(--maxPixels, --maxImageSide, --memoryLimit, …), as --key value (--strip alone is true).",
                valueName: "--key value"
            )
        )
        var ruleOptions: [String] = []

        func run() async throws {
            let logger = self.logging.bootstrap()
            var options = ConversionOptions()
            // An unknown output format is reported by the conversion itself, with the list of known ones.
            if let format = Engines.registry.format(named: FilePath(self.output).extension ?? "") {
                let values = try RuleOptionArguments.parse(self.ruleOptions, registry: Engines.registry).filter {
                    !JobLimits.keys.contains($0.key)
                }
                do {
                    options = try ConfigReader.options(values, for: format, registry: Engines.registry)
                } catch {
                    throw ValidationError(error.issues.map(\.message).joined(separator: "\n"))
                }
            }
            var limits = JobLimits()
            limits.timeout = .seconds(self.timeout)
            // The job limits (--maxPixels, --maxImageSide, --memoryLimit, …) are read as in a rule.
            let limitValues = try RuleOptionArguments.parse(self.ruleOptions, registry: Engines.registry).filter {
                JobLimits.keys.contains($0.key)
            }
            do {
                limits = try ConfigReader.limits(limitValues, base: limits, registry: Engines.registry)
            } catch {
                throw ValidationError(error.issues.map(\.message).joined(separator: "\n"))
            }
            let conversion = CommandConversion(
                input: FilePath(self.input),
                output: FilePath(self.output),
                options: options,
                overwrite: self.overwrite,
                chute: currentExecutable(),
                limits: limits,
                logger: logger
            )
            do {
                print(try await conversion.run())
            } catch {
                FileHandle.standardError.write(Data("chute convert: \(error.message) (\(error.code.rawValue))\n".utf8))
                throw ExitCode(1)
            }
        }
    }

    struct Schema: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the JSON Schema of the rules file, for editors (or, with --markdown, the docs tables).",
            discussion: "Save it and point the YAML language server at it with a first line such as "
                + "'# yaml-language-server: $schema=chute.schema.json'."
        )

        @Flag(help: "Print the option and format tables of docs/rules.md instead, written from the same registry.")
        var markdown = false

        func run() {
            if self.markdown {
                print(OptionDocs.optionTable(Engines.registry) + "\n\n" + OptionDocs.formatTable(Engines.registry))
            } else {
                print(ConfigSchema.text(Engines.registry))
            }
        }
    }
}
