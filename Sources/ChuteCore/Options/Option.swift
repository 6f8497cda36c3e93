/// Where in a conversion an option acts. An engine applies its operations in this order, whatever order a rule
/// writes its keys in: decode → orient → crop → rotate/flip → resize → pad/aspect → watermark → tile → metadata →
/// encode (`tile` cuts the finished picture into the several outputs of `tiles`);
/// `decode` options say how to read an input that cannot say it itself, `streams` options choose what a video or
/// audio output keeps.
package enum OperationStage: String, Sendable, CaseIterable, Comparable {
    case decode, orient, crop, rotate, resize, pad, watermark, tile, metadata, encode, streams

    package static func < (left: Self, right: Self) -> Bool {
        Self.allCases.firstIndex(of: left)! < Self.allCases.firstIndex(of: right)!
    }
}

/// How an option's value is written in a rule, which also decides how it is checked, documented and described in
/// the JSON Schema.
package enum OptionSyntax: Sendable {
    /// `true` or `false`.
    case flag
    /// A whole number in the range.
    case integer(ClosedRange<Int>)
    /// A finite number in the range.
    case number(NumberRange)
    /// One of these words, case-insensitively; stored lower-case.
    case choice([String])
    /// Bits per second: `800000`, `128k`, `2.5M`.
    case bitrate(ClosedRange<Int>)
    /// A byte size such as `300KB` or `2MiB`, stored in bytes.
    case byteSize(ClosedRange<Int64>)
    /// Text with a grammar of its own, such as a crop box.
    case text(TextSyntax)
}

/// A range of numbers whose lower end may be open, such as 0 < q ≤ 100.
package struct NumberRange: Sendable {
    package var lower: Double
    package var lowerIncluded: Bool
    package var upper: Double
    /// The range in words for messages and docs, when the plain `0 < x ≤ 240` would not say it well.
    package var wording: String?

    package init(above lower: Double, upTo upper: Double, wording: String? = nil) {
        self.lower = lower
        self.lowerIncluded = false
        self.upper = upper
        self.wording = wording
    }

    package init(from lower: Double, upTo upper: Double, wording: String? = nil) {
        self.lower = lower
        self.lowerIncluded = true
        self.upper = upper
        self.wording = wording
    }

    package func contains(_ value: Double) -> Bool {
        (self.lowerIncluded ? value >= self.lower : value > self.lower) && value <= self.upper
    }

    /// The range in words: "greater than 0 and at most 240", or the ``wording``.
    package var words: String {
        let (lower, upper) = (OptionValue.number(self.lower), OptionValue.number(self.upper))
        return self.wording
            ?? (self.lowerIncluded ? "from \(lower) to \(upper)" : "greater than \(lower) and at most \(upper)")
    }
}

/// The grammar of a text option: a name for messages and docs, an example, a pattern for editors, and the check.
package struct TextSyntax: Sendable {
    /// What the value is, with an example: "a box WxH+X+Y or a ratio such as 16:9".
    package var name: String
    /// A regular expression (ECMA 262, as JSON Schema uses) that well-formed values match.
    package var pattern: String?
    /// Returns why a value is not well formed, or `nil` when it is.
    package var validate: @Sendable (String) -> String?

    package init(name: String, pattern: String? = nil, validate: @escaping @Sendable (String) -> String?) {
        self.name = name
        self.pattern = pattern
        self.validate = validate
    }
}

/// What is wrong with a value given the rest of the rule, and where to point.
package struct OptionProblem: Sendable, Equatable {
    package enum Place: Sendable { case key, value }

    package var message: String
    package var place: Place

    package init(_ message: String, at place: Place = .value) {
        self.message = message
        self.place = place
    }
}

/// The rest of the rule an option's check may look at: its target and every option it sets.
package struct OptionContext: Sendable {
    package var format: TargetFormat
    package var options: ConversionOptions

    package init(format: TargetFormat, options: ConversionOptions) {
        self.format = format
        self.options = options
    }
}

/// Everything Chute knows about one rule key that sets a conversion option: the rules reader, `chute check`,
/// `chute convert`'s flags, the config summary, the docs tables and the JSON Schema are all derived from it.
package struct OptionSpec: Sendable {
    /// The rule key, also the `chute convert` flag (`--key`).
    package var key: String
    package var syntax: OptionSyntax
    /// One line of documentation: what the option does.
    package var summary: String
    /// The default, in words for the docs (`0.85`, "none", "the source's").
    package var defaultValue: String
    /// Where the option acts.
    package var stage: OperationStage
    /// The target formats it applies to within the engines that accept it; `nil`: all of their formats.
    package var formats: Set<String>?
    /// Checks that depend on the target or on other options (a codec the container cannot hold, a key that needs
    /// another); `nil` when the syntax says everything.
    package var check: (@Sendable (OptionValue, OptionContext) -> OptionProblem?)?
    /// How `chute check` shows a value, such as `height ≤ 720`; by default `key value`.
    package var show: (@Sendable (OptionValue) -> String)?

    /// The value as `chute check`'s summary shows it.
    package func describe(_ value: OptionValue) -> String {
        self.show?(value) ?? "\(self.key) \(value)"
    }
}

/// A typed handle on an option: its spec, and the Swift type an engine reads its value as.
///
/// Engines declare their options as static `Option` values and read them with `request.options[SomeOptions.key]`.
package struct RuleOption<Value: OptionValueConvertible>: Sendable {
    package let spec: OptionSpec

    package init(
        _ key: String,
        _ syntax: OptionSyntax,
        summary: String,
        default defaultValue: String = "none",
        stage: OperationStage,
        formats: Set<String>? = nil,
        check: (@Sendable (Value, OptionContext) -> OptionProblem?)? = nil,
        show: (@Sendable (Value) -> String)? = nil
    ) {
        var erasedCheck: (@Sendable (OptionValue, OptionContext) -> OptionProblem?)?
        if let check {
            erasedCheck = { value, context in
                guard let typed = Value(optionValue: value) else { return nil }
                return check(typed, context)
            }
        }
        var erasedShow: (@Sendable (OptionValue) -> String)?
        if let show {
            erasedShow = { value in
                guard let typed = Value(optionValue: value) else { return "\(key) \(value)" }
                return show(typed)
            }
        }
        self.spec = OptionSpec(
            key: key,
            syntax: syntax,
            summary: summary,
            defaultValue: defaultValue,
            stage: stage,
            formats: formats,
            check: erasedCheck,
            show: erasedShow
        )
    }

    package var key: String { self.spec.key }
}
