/// One option's value as a rule gives it, after its syntax was checked: what ``ConversionOptions`` stores, the
/// worker protocol carries and the sidecar records (as the plain JSON value: `true`, `720`, `0.85`, `"h264"`).
package enum OptionValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case bool(Bool)
    case integer(Int)
    case number(Double)
    case text(String)

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else {
            self = .text(try container.decode(String.self))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .text(let value): try container.encode(value)
        }
    }

    /// The value as a rules file would write it: `true`, `720`, `29.97`, `h264`.
    package var description: String {
        switch self {
        case .bool(let value): "\(value)"
        case .integer(let value): "\(value)"
        case .number(let value):
            value == value.rounded() && abs(value) < 1e15 ? "\(Int(value))" : "\(value)"
        case .text(let value): value
        }
    }
}

extension OptionValue: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByStringLiteral
{
    package init(booleanLiteral value: Bool) { self = .bool(value) }
    package init(integerLiteral value: Int) { self = .integer(value) }
    package init(floatLiteral value: Double) { self = .number(value) }
    package init(stringLiteral value: String) { self = .text(value) }
}

/// A Swift type that an option's value converts to, so that an engine reads `options[ImageOptions.quality]` as a
/// `Double` rather than picking an ``OptionValue`` apart.
package protocol OptionValueConvertible: Sendable {
    init?(optionValue: OptionValue)
    var optionValue: OptionValue { get }
}

extension Bool: OptionValueConvertible {
    package init?(optionValue: OptionValue) {
        guard case .bool(let value) = optionValue else { return nil }
        self = value
    }
    package var optionValue: OptionValue { .bool(self) }
}

extension Int: OptionValueConvertible {
    package init?(optionValue: OptionValue) {
        guard case .integer(let value) = optionValue else { return nil }
        self = value
    }
    package var optionValue: OptionValue { .integer(self) }
}

extension Double: OptionValueConvertible {
    /// A whole number is a number too: JSON writes `30.0` as `30`, which reads back as an integer.
    package init?(optionValue: OptionValue) {
        switch optionValue {
        case .number(let value): self = value
        case .integer(let value): self = Double(value)
        case .bool, .text: return nil
        }
    }
    package var optionValue: OptionValue { .number(self) }
}

extension String: OptionValueConvertible {
    package init?(optionValue: OptionValue) {
        guard case .text(let value) = optionValue else { return nil }
        self = value
    }
    package var optionValue: OptionValue { .text(self) }
}

extension OptionValueConvertible where Self: RawRepresentable, Self.RawValue == String {
    package init?(optionValue: OptionValue) {
        guard case .text(let text) = optionValue else { return nil }
        self.init(rawValue: text)
    }
    package var optionValue: OptionValue { .text(self.rawValue) }
}
