import ChuteApp
import ChuteCore
import Foundation
import SystemPackage

extension Sidecar {
    /// A failed job's sidecar with every field set, for tests that write and read sidecars.
    static let sample = Sidecar(
        chuteVersion: "0",
        jobID: "j",
        status: .failed,
        rule: "r",
        engine: "image",
        libraries: ["L": "1"],
        parameters: .init(format: "jpg", options: ConversionOptions(["quality": 0.5])),
        source: .init(path: "/in/a\nb.png", size: 3, mtime: "t", sha256: nil, sniffedType: nil),
        output: nil,
        startedAt: "s",
        endedAt: "e",
        durationSeconds: 1,
        error: .init(code: "corruptInput", message: "bad"),
        warnings: [],
        details: [:]
    )

    /// Reads a sidecar back, or `nil` when there is none or it is unreadable.
    static func read(at path: FilePath) -> Sidecar? {
        guard let data = FileManager.default.contents(atPath: path.string) else { return nil }
        return try? JSONDecoder().decode(Sidecar.self, from: data)
    }
}
