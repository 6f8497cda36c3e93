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
}
