import Foundation
import GRDB

extension Journal {
    /// A notification that its target did not take after every try: kept until the target answers again.
    package struct KeptNotification: Sendable, Equatable {
        package var id: Int64
        /// The target's kind (`url` or `ntfy`) and URL, as written in the rules file.
        package var kind: String
        package var url: String
        /// `failed`, `completed`, `cancelled` or `digest`.
        package var event: String
        /// The notification, as JSON.
        package var payload: Data
        package var keptAt: Date
    }

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
