import ArgumentParser
import ChuteCatalog
import ChuteCore

/// `chute convert`'s conversion options: every option key of the registry, and the job limit keys
/// (``JobLimits/keys``), given as `--key value`.
enum RuleOptionArguments {
    /// Pairs the arguments into rule keys and values: `--key value`, `--key=value`, or a lone `--key` for an option
    /// whose value is true or false.
    ///
    /// - Throws: `ValidationError` naming an unknown key (with the known ones) or a missing value.
    static func parse(_ arguments: [String], registry: EngineRegistry) throws -> [(key: String, value: String)] {
        var values: [(key: String, value: String)] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw ValidationError("unexpected argument '\(argument)'; options are written --key value")
            }
            var key = String(argument.dropFirst(2))
            var value: String?
            if let equals = key.firstIndex(of: "=") {
                value = String(key[key.index(after: equals)...])
                key = String(key[..<equals])
            }
            let spec = registry.option(key)
            guard spec != nil || JobLimits.keys.contains(key) else {
                let known = (registry.optionKeys + JobLimits.keys).map { "--\($0)" }.joined(separator: ", ")
                throw ValidationError("unknown option '--\(key)'; the options are: \(known)")
            }
            if value == nil {
                if case .flag = spec?.syntax, index == arguments.count || arguments[index].hasPrefix("--") {
                    value = "true"
                } else if index < arguments.count {
                    value = arguments[index]
                    index += 1
                } else {
                    throw ValidationError("'--\(key)' needs a value")
                }
            }
            values.append((key, value ?? ""))
        }
        return values
    }

    /// The options for `chute convert --help`: each key, its values and its line of documentation.
    static func help(registry: EngineRegistry) -> String {
        var lines = ["Conversion options (rule keys; see docs/rules.md):"]
        for spec in registry.options {
            let engines = registry.engines.filter { $0.options.contains { $0.key == spec.key } }
            let scope = engines.map(\.kind.rawValue).joined(separator: ", ")
            lines.append("  --\(spec.key) \(OptionDocs.syntax(of: spec.syntax)) (\(scope)): \(spec.summary)")
        }
        lines.append("Job limits (as in a rule; see docs/rules.md, Job limits):")
        lines.append("  " + JobLimits.keys.map { "--\($0)" }.joined(separator: ", "))
        return lines.joined(separator: "\n")
    }
}
