import ChuteCore
import SystemPackage

extension FilePath {
    /// The path escaped for a log record or an error message (see ``LogText/escaped(_:)``).
    var escapedForLog: String { LogText.escaped(self) }
}
