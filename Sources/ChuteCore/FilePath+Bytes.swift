import Foundation
import SystemPackage

extension FilePath {
    /// The path's bytes, without the terminating NUL: how the journal stores a path and the worker protocol sends it,
    /// so that a file name that is not valid UTF-8 survives.
    package var bytes: Data {
        self.withPlatformString { Data(bytes: $0, count: strlen($0)) }
    }

    /// The path of these bytes (``bytes``).
    package init(bytes: Data) {
        self = (bytes + [0]).withUnsafeBytes { FilePath(platformString: $0.bindMemory(to: CChar.self).baseAddress!) }
    }

    /// The path as text when its bytes are valid UTF-8; `nil` when they are not (a Latin-1 name written by an old
    /// Windows client, Samba or unzip), where ``string`` would repair them into U+FFFD and name another file.
    package var validString: String? {
        String(validating: self.bytes, as: UTF8.self)
    }

    /// The path as text for a reader (a sidecar's `path`, the status API, `chute jobs`): its text when its bytes are
    /// valid UTF-8, else escaped as the log shows it (`caf\x{e9}.jpg`), never with U+FFFD.
    package var readableString: String {
        self.validString ?? LogText.escaped(self, limit: .max)
    }

    /// The path with `suffix` added to its last component's bytes (`photo.jpg` and `.chute.json` give
    /// `photo.jpg.chute.json`), keeping bytes that are not valid UTF-8.
    package func appendingToLastComponent(_ suffix: String) -> FilePath {
        let name = self.lastComponent?.bytes ?? []
        // The suffix is text without a `/` or a NUL, so a component with a name always comes out.
        return self.removingLastComponent().appending(FilePath.Component(bytes: name + Array(suffix.utf8))!)
    }
}

extension FilePath.Component {
    /// The component's bytes, without the terminating NUL.
    package var bytes: [UInt8] {
        self.withPlatformString { Array(UnsafeRawBufferPointer(start: $0, count: strlen($0))) }
    }

    /// The component of these bytes; `nil` when they are empty, contain a `/` or a NUL, or are `.` or `..`.
    package init?(bytes: some Collection<UInt8>) {
        guard !bytes.isEmpty, !bytes.contains(0), !bytes.contains(UInt8(ascii: "/")) else { return nil }
        let component = (Array(bytes) + [0]).withUnsafeBytes {
            FilePath.Component(platformString: $0.bindMemory(to: CChar.self).baseAddress!)
        }
        guard let component, component.kind == .regular else { return nil }
        self = component
    }

    /// Splits the name's bytes at its last dot, as ``NameTemplate/split(_:)`` splits text: `IMG_1.HEIC` into
    /// (`IMG_1`, `HEIC`); a name without a dot (or only a leading one) has no extension.
    package var stemAndExtensionBytes: (stem: [UInt8], ext: [UInt8]) {
        let bytes = self.bytes
        guard let dot = bytes.lastIndex(of: UInt8(ascii: ".")), dot > 0 else { return (bytes, []) }
        return (Array(bytes[..<dot]), Array(bytes[(dot + 1)...]))
    }
}

/// One unit of a file name read as UTF-8 without repairing it: a character's scalar, or a byte that is not part of
/// valid UTF-8 (which `String(decoding:as:)` would replace with U+FFFD).
package enum NameUnit: Sendable, Equatable {
    case scalar(Unicode.Scalar)
    case invalidByte(UInt8)

    /// Reads `bytes` as UTF-8, keeping each byte of an invalid sequence as it is.
    package static func decode(_ bytes: some Collection<UInt8>) -> [NameUnit] {
        let bytes = Array(bytes)
        var units: [NameUnit] = []
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                units.append(.scalar(Unicode.UTF8.decode(encoded)))
                offset += encoded.count
            case .error(let length):
                units += bytes[offset..<(offset + length)].map { .invalidByte($0) }
                offset += length
            case .emptyInput:
                return units
            }
        }
    }

    /// The unit's bytes in a file name.
    package var bytes: [UInt8] {
        switch self {
        case .scalar(let scalar): Array(String(scalar).utf8)
        case .invalidByte(let byte): [byte]
        }
    }
}
