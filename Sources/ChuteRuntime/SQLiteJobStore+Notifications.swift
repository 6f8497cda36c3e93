import Foundation
import GRDB

extension SQLiteJobStore {
    /// Keeps a notification its target did not take, to be sent when it answers again.
    package func keepNotification(kind: String, url: String, event: String, payload: Data) async throws {
        try await self.writeHistory { db in
            try db.execute(
                sql: "INSERT INTO notification (kind, url, event, payload, keptAt) VALUES (?, ?, ?, ?, ?)",
                arguments: [kind, url, event, payload, Date().timeIntervalSince1970]
            )
        }
    }

    /// The notifications kept for a target, the oldest first.
    package func keptNotifications(kind: String, url: String) async throws -> [KeptNotification] {
        try await self.readHistory { db in
            try Row.fetchAll(
                db,
                sql: "SELECT * FROM notification WHERE kind = ? AND url = ? ORDER BY id",
                arguments: [kind, url]
            ).map { row in
                KeptNotification(
                    id: row["id"],
                    kind: row["kind"],
                    url: row["url"],
                    event: row["event"],
                    payload: row["payload"],
                    keptAt: Date(timeIntervalSince1970: row["keptAt"])
                )
            }
        }
    }

    /// Forgets a kept notification once it was sent.
    package func forgetNotification(_ id: Int64) async throws {
        try await self.writeHistory { db in
            try db.execute(sql: "DELETE FROM notification WHERE id = ?", arguments: [id])
        }
    }
}
