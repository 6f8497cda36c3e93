import Foundation
import SystemPackage

/// The shared real-world corpus, `../shared/corpus` beside the repository, and its `MANIFEST.tsv`.
package enum Corpus {
    /// One manifest row: the file's path below the corpus folder and what it must do (`ok`, `fail` or `warn`).
    package struct Row: Sendable {
        package var path: String
        package var expect: String
    }

    /// The corpus folder.
    package static let folder: FilePath = {
        let repository = FilePath(#filePath).removingLastComponent().removingLastComponent().removingLastComponent()
        return repository.removingLastComponent().appending("shared/corpus")
    }()

    /// Whether the corpus is there (it is outside the repository, and absent outside this workplace).
    package static var isPresent: Bool {
        FileManager.default.fileExists(atPath: self.folder.appending("MANIFEST.tsv").string)
    }

    /// The manifest's rows, in order.
    package static func rows() throws -> [Row] {
        let manifest = try String(contentsOfFile: self.folder.appending("MANIFEST.tsv").string, encoding: .utf8)
        return manifest.split(separator: "\n").dropFirst().map { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            return Row(path: fields[0], expect: fields.count > 7 ? fields[7] : "")
        }
    }
}
