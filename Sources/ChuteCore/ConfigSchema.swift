import Foundation

/// A JSON Schema (draft-07) of the rules file, for editors: the YAML language server validates and completes a rules
/// file against it (`# yaml-language-server: $schema=chute.schema.json`). `chute schema` prints it.
///
/// The option keys, their types and documentation come from the registry; the fixed keys from the tables below,
/// which a test holds to ``ConfigReader/schemaKeys(registry:)``. The schema checks shapes and values; what depends on
/// several keys (an option that does not apply to the rule's target, a codec the container cannot hold) is left to
/// `chute check`.
package enum ConfigSchema {
    /// A JSON value, enough to write a schema.
    package indirect enum JSON: Encodable, Equatable {
        case object([String: JSON])
        case array([JSON])
        case string(String)
        case number(Double)
        case integer(Int)
        case bool(Bool)

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .object(let value): try container.encode(value)
            case .array(let value): try container.encode(value)
            case .string(let value): try container.encode(value)
            case .number(let value): try container.encode(value)
            case .integer(let value): try container.encode(value)
            case .bool(let value): try container.encode(value)
            }
        }
    }

    /// The schema as pretty-printed JSON with sorted keys.
    package static func text(_ registry: EngineRegistry) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(Self.schema(registry))) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    /// The schema.
    package static func schema(_ registry: EngineRegistry) -> JSON {
        let formats = registry.formats.flatMap { [$0.name] + $0.aliases }
        var rule = Self.ruleKeys
        rule["to"] = Self.described(
            .object([
                "type": .string("string"), "enum": .array((formats + formats.map { $0.uppercased() }).map(JSON.string)),
            ]),
            "The target format; it also picks the engine."
        )
        for spec in registry.options {
            rule[spec.key] = Self.described(
                Self.type(of: spec.syntax),
                spec.summary + " Default: \(spec.defaultValue)."
            )
        }
        var settings = Self.settingsKeys
        let lanes = registry.engines.map(\.kind.rawValue)
        settings["concurrency"] = Self.described(
            Self.closed(Dictionary(uniqueKeysWithValues: lanes.map { ($0, Self.positiveInteger) })),
            "How many jobs each engine runs at once."
        )
        return .object([
            "$schema": .string("http://json-schema.org/draft-07/schema#"),
            "title": .string("Chute rules file"),
            "type": .string("object"),
            "additionalProperties": .bool(false),
            "required": .array([.string("watch"), .string("rules")]),
            "properties": .object([
                "watch": .object([
                    "type": .string("array"), "minItems": .integer(1),
                    "items": Self.closed(Self.watchKeys, required: ["path"]),
                ]),
                "rules": .object([
                    "type": .string("array"), "minItems": .integer(1),
                    "items": Self.closed(rule, required: ["name", "match", "to", "output"]),
                ]),
                "settings": .object(["anyOf": .array([Self.closed(settings), .object(["type": .string("null")])])]),
                "notify": Self.notifyList,
            ]),
        ])
    }

    /// The JSON Schema of an option's syntax.
    private static func type(of syntax: OptionSyntax) -> JSON {
        switch syntax {
        case .flag:
            return .object(["type": .string("boolean")])
        case .integer(let range):
            var type: [String: JSON] = ["type": .string("integer"), "minimum": .integer(range.lowerBound)]
            if range.upperBound != Int.max { type["maximum"] = .integer(range.upperBound) }
            return .object(type)
        case .number(let range):
            return .object([
                "type": .string("number"),
                range.lowerIncluded ? "minimum" : "exclusiveMinimum": .number(range.lower),
                "maximum": .number(range.upper),
            ])
        case .choice(let choices):
            return .object(["type": .string("string"), "enum": .array(choices.map(JSON.string))])
        case .bitrate:
            return .object([
                "type": .array([.string("integer"), .string("string")]), "pattern": .string("^[0-9.]+[kKM]?$"),
            ])
        case .byteSize:
            return Self.byteSize
        case .text(let grammar):
            var type: [String: JSON] = ["type": .string("string")]
            if let pattern = grammar.pattern { type["pattern"] = .string(pattern) }
            return .object(type)
        }
    }

    private static func described(_ type: JSON, _ description: String) -> JSON {
        guard case .object(var fields) = type else { return type }
        fields["description"] = .string(description)
        return .object(fields)
    }

    /// An object with exactly these keys.
    private static func closed(_ properties: [String: JSON], required: [String] = []) -> JSON {
        var object: [String: JSON] = [
            "type": .string("object"), "additionalProperties": .bool(false), "properties": .object(properties),
        ]
        if !required.isEmpty { object["required"] = .array(required.map(JSON.string)) }
        return .object(object)
    }

    private static let string = JSON.object(["type": .string("string")])
    private static let boolean = JSON.object(["type": .string("boolean")])
    private static let positiveInteger = JSON.object(["type": .string("integer"), "minimum": .integer(1)])
    private static let stringOrList = JSON.object([
        "anyOf": .array([
            .object(["type": .string("string")]),
            .object(["type": .string("array"), "items": .object(["type": .string("string")])]),
        ])
    ])
    /// `2s`, `1.5m`, or a bare number of seconds.
    private static let duration = JSON.object(["type": .array([.string("string"), .string("number")])])
    /// `300KB`, `2GiB`, or a bare number of bytes.
    private static let byteSize = JSON.object(["type": .array([.string("string"), .string("integer")])])

    private static func choice(_ values: [String]) -> JSON {
        .object(["type": .string("string"), "enum": .array(values.map(JSON.string))])
    }

    /// The limit keys of rules and settings.
    private static let limitKeys: [String: JSON] = [
        "jobTimeout": Self.duration, "memoryLimit": Self.byteSize, "cpuTimeLimit": Self.duration,
        "maxOutputSize": Self.byteSize, "maxPixels": Self.positiveInteger, "maxImageSide": Self.positiveInteger,
        "maxFrames": Self.positiveInteger,
        "maxDuration": Self.duration,
    ]

    /// A `notify:` list: each entry has `url` (a webhook) or `ntfy` (a topic), and `on`.
    static let notifyList: JSON = {
        guard case .object(var entry) = Self.closed(Self.notifyKeys) else { return .object([:]) }
        entry["oneOf"] = .array([
            .object(["required": .array([.string("url")])]), .object(["required": .array([.string("ntfy")])]),
        ])
        return .object(["type": .string("array"), "items": .object(entry)])
    }()

    /// An `http://` or `https://` URL.
    private static let httpURL = JSON.object([
        "type": .string("string"), "pattern": .string("^[Hh][Tt][Tt][Pp][Ss]?://"),
    ])
    private static let notifyEvent = Self.choice(NotifyEvent.allCases.map(\.rawValue))

    /// The keys of a `notify:` entry.
    static let notifyKeys: [String: JSON] = [
        "url": Self.httpURL, "ntfy": Self.httpURL,
        "on": .object([
            "anyOf": .array([Self.notifyEvent, .object(["type": .string("array"), "items": Self.notifyEvent])])
        ]),
    ]

    /// The keys of a `watch:` entry.
    static let watchKeys: [String: JSON] = [
        "path": Self.string, "recursive": Self.boolean, "ignore": Self.stringOrList,
        "poll": Self.choice(PollMode.allCases.map(\.rawValue)), "pollInterval": Self.duration,
        "doneSuffix": Self.string, "lockSuffix": Self.string, "allowHardLinks": Self.boolean,
        "incompleteTimeout": Self.duration,
    ]

    /// The fixed keys of a rule (`to` and the options come from the registry).
    static let ruleKeys: [String: JSON] = Self.limitKeys.merging([
        "name": Self.string, "match": Self.stringOrList, "output": Self.string, "rename": Self.string,
        "keepStructure": Self.boolean, "onConflict": Self.choice(ConflictPolicy.allCases.map(\.rawValue)),
        "concurrency": Self.positiveInteger, "watch": Self.stringOrList, "minSize": Self.byteSize,
        "maxSize": Self.byteSize,
        "type": .object([
            "anyOf": .array([
                Self.choice(MediaCategory.allCases.map(\.rawValue)),
                .object(["type": .string("array"), "items": Self.choice(MediaCategory.allCases.map(\.rawValue))]),
            ])
        ]),
        "minAge": Self.duration, "maxAge": Self.duration,
        "owner": .object(["type": .array([.string("string"), .string("integer")])]),
        "group": .object(["type": .array([.string("string"), .string("integer")])]),
        "mode": .object(["type": .string("string"), "pattern": .string("^[0-7]{3,4}$")]),
        "source": Self.choice(SourcePolicy.Choice.allCases.map(\.rawValue)), "doneFolder": Self.string,
        "quarantine": Self.string, "onDuplicate": Self.choice(DuplicatePolicy.allCases.map(\.rawValue)),
        "sidecars": Self.string, "groupBy": Self.choice(RuleGrouping.allCases.map(\.rawValue)),
        "notify": Self.notifyList, "upload": Self.boolean,
        "uploadOutput": Self.choice(UploadOutput.allCases.map(\.rawValue)),
        "run": .object([
            "anyOf": .array([
                Self.command,
                Self.closed(
                    [
                        "command": Self.command,
                        "on": .object([
                            "anyOf": .array([
                                Self.hookEvent, .object(["type": .string("array"), "items": Self.hookEvent]),
                            ])
                        ]),
                    ],
                    required: ["command"]
                ),
            ])
        ]),
        "pre": Self.command, "runTimeout": Self.duration,
    ]) { first, _ in first }

    /// A hook's command: a program by its absolute path, and its arguments.
    private static let command = JSON.object([
        "type": .string("array"), "minItems": .integer(1), "items": Self.string,
    ])
    private static let hookEvent = Self.choice(RuleHook.events.map(\.rawValue))

    /// The keys of `settings:` (`concurrency` comes from the registry's lanes).
    static let settingsKeys: [String: JSON] = Self.limitKeys.merging([
        "quietPeriod": Self.duration, "incompleteTimeout": Self.duration, "retryDelay": Self.duration,
        "retryLimit": Self.positiveInteger, "gracePeriod": Self.duration, "workerJobs": Self.positiveInteger,
        "workerIdle": Self.duration,
        "niceness": .object(["type": .string("integer"), "minimum": .integer(0), "maximum": .integer(19)]),
        "ioPriority": .object(["type": .array([.string("string"), .string("integer")])]),
        "api": Self.closed([
            "socket": Self.string, "listen": Self.string, "tokenFile": Self.string, "idleTimeout": Self.duration,
        ]),
        "cpuBudget": Self.positiveInteger, "memoryBudget": Self.byteSize, "agingLimit": Self.duration,
        "historyRetention": Self.duration, "uploadRetention": Self.duration, "maxUploadSize": Self.byteSize,
        "maxUploads": Self.positiveInteger, "maxQueued": Self.positiveInteger, "requestTimeout": Self.duration,
        "digestAt": .object(["type": .string("string"), "pattern": .string("^[0-9]{1,2}:[0-9]{2}$")]),
        "digestEvery": Self.duration,
        "store": .object(["type": .string("string"), "pattern": .string("^(sqlite|journal|postgres(ql)?://.+)$")]),
        "storePasswordFile": Self.string, "agent": Self.string, "agentLease": Self.duration,
        "watch": Self.boolean, "agentURL": Self.string,
        "hookConcurrency": Self.positiveInteger,
    ]) { first, _ in first }
}
