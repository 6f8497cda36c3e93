import Foundation
import SystemPackage

/// A fresh directory under the system temp folder, removed with everything in it by ``remove()``.
///
/// Tests create one each and never touch the working directory.
package struct TemporaryDirectory: Sendable {
    /// The directory's absolute path.
    package let path: FilePath

    /// Creates `/tmp/chute-test-<prefix>-XXXXXX`.
    package init(prefix: String = "test") throws {
        var template = Array("/tmp/chute-\(prefix)-XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard let created else { throw Errno(rawValue: errno) }
        self.path = FilePath(String(cString: created))
    }

    /// A path below the directory (nothing is created).
    package func appending(_ relative: String) -> FilePath {
        self.path.appending(relative)
    }

    /// Creates a sub-folder (and its parents) and returns its path.
    @discardableResult
    package func makeDirectory(_ relative: String) throws -> FilePath {
        let folder = self.path.appending(relative)
        try FileManager.default.createDirectory(atPath: folder.string, withIntermediateDirectories: true)
        return folder
    }

    /// Removes the directory and everything below it.
    package func remove() {
        try? FileManager.default.removeItem(atPath: self.path.string)
    }

    /// Every regular file below the directory, as paths relative to it, sorted.
    package func files(below relative: String = "") -> [String] {
        let base = relative.isEmpty ? self.path : self.path.appending(relative)
        guard let enumerator = FileManager.default.enumerator(atPath: base.string) else { return [] }
        var found: [String] = []
        while let item = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: base.appending(item).string, isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                found.append(item)
            }
        }
        return found.sorted()
    }
}
