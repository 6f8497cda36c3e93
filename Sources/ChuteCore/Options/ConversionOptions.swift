/// The options of one conversion, shared by rules, `chute convert`, the worker protocol and the sidecar.
///
/// Each value is stored under its rule key as the rules reader checked it against the option's ``OptionSpec``; an
/// option that is not set is absent and means the engine's default. Engines read values through their typed
/// ``RuleOption`` handles: `request.options[ImageOptions.quality]`. In JSON (worker protocol, sidecar) it is an object of
/// rule keys and plain values, `{"height": 720, "quality": 0.85}`.
package struct ConversionOptions: Sendable, Hashable, Codable, ExpressibleByDictionaryLiteral {
    /// The values, by rule key.
    package private(set) var values: [String: OptionValue]

    package init(_ values: [String: OptionValue] = [:]) {
        self.values = values
    }

    package init(dictionaryLiteral elements: (String, OptionValue)...) {
        self.values = Dictionary(elements) { _, last in last }
    }

    package init(from decoder: any Decoder) throws {
        self.values = try decoder.singleValueContainer().decode([String: OptionValue].self)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(self.values)
    }

    /// An option's value, typed; `nil` when the rule does not set it.
    package subscript<Value>(option: RuleOption<Value>) -> Value? {
        get { self.values[option.key].flatMap(Value.init(optionValue:)) }
        set { self.values[option.key] = newValue?.optionValue }
    }

    /// A value by rule key.
    package subscript(key: String) -> OptionValue? {
        get { self.values[key] }
        set { self.values[key] = newValue }
    }

    /// Whether no option is set.
    package var isEmpty: Bool { self.values.isEmpty }
}

extension ConversionOptions: CustomStringConvertible, CustomDebugStringConvertible {
    /// The values by key, in key order, with secrets (``CommonOptions/secretKeys``) hidden: a config is printed
    /// whole in debug logs (service-lifecycle describes its services).
    package var description: String {
        let values = self.values.sorted { $0.key < $1.key }.map { key, value in
            "\(key): \(CommonOptions.secretKeys.contains(key) ? CommonOptions.hiddenValue : value)"
        }
        return "[\(values.joined(separator: ", "))]"
    }

    package var debugDescription: String { self.description }
}
