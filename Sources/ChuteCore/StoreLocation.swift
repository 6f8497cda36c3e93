import Foundation
import SystemPackage

/// Where the daemon keeps its jobs (`settings.store`, or `chute run --store`).
package enum StoreLocation: Sendable, Equatable {
    /// The journal, a SQLite file beside the rules (or `chute run --journal FILE`): the default, nothing to set up.
    case journal
    /// A PostgreSQL database (``PostgresLocation``).
    case postgres(PostgresLocation)

    /// Reads `sqlite`, `journal` or a `postgres://` (`postgresql://`) address.
    ///
    /// - Returns: the location, or why the text is not one.
    package static func parse(_ text: String) -> Result<StoreLocation, StoreLocationError> {
        if text == "sqlite" || text == "journal" { return .success(.journal) }
        return PostgresLocation.parse(text).map { .postgres($0) }
    }

    /// How the location reads in `chute check` and the log: never with a password.
    package var description: String {
        switch self {
        case .journal: "the journal (SQLite)"
        case .postgres(let location): "PostgreSQL at \(location.description)"
        }
    }
}

/// A PostgreSQL database, from an address as libpq writes it: `postgres://USER@HOST:PORT/DATABASE?sslmode=MODE`, with
/// `?host=/run/postgresql` for a Unix socket's folder.
///
/// The password is never part of the address, which a rules file or `ps` would show: it comes from `passwordFile`
/// (`settings.storePasswordFile`) or from the environment (`CHUTE_STORE_PASSWORD`), read when the store is opened.
package struct PostgresLocation: Sendable, Equatable {
    /// Whether the connection is encrypted (libpq's `sslmode`).
    package enum Encryption: String, Sendable, Equatable, CaseIterable {
        /// Never: for loopback and Unix sockets.
        case disable
        /// When the server offers it (the default, as libpq's).
        case prefer
        /// Always; the server's certificate is checked against the system's authorities.
        case require
    }

    /// A host name or address, or for a Unix socket the folder it is in (starting with `/`).
    package var host: String
    package var port: Int
    package var user: String
    package var database: String
    package var encryption: Encryption
    /// The file holding the password (its first line), or `nil` for `CHUTE_STORE_PASSWORD` or none.
    package var passwordFile: FilePath?
    /// This daemon's name among the agents that share the database (`settings.agent`), or `nil` for the machine's
    /// host name.
    package var agent: String?
    /// How long an agent's claim on a job holds without a heartbeat (`settings.agentLease`): once it runs out, another
    /// agent takes the job over.
    package var lease: Duration = Self.defaultLease

    /// Whether this agent watches its folders (`settings.watch`, default `true`); one that does not converts the files
    /// other agents found.
    package var watches = true

    /// The address other agents reach this agent's API at (`settings.agentURL`, `http://HOST:PORT`): an agent that
    /// cannot see the folder of a file this agent found fetches the file there, and sends the output back; `nil` when
    /// this agent's files are only for agents that see its folders.
    package var url: String?

    /// The lease unless `agentLease` says otherwise.
    package static let defaultLease: Duration = .seconds(30)

    package init(
        host: String,
        port: Int = 5432,
        user: String,
        database: String,
        encryption: Encryption = .prefer,
        passwordFile: FilePath? = nil
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.database = database
        self.encryption = encryption
        self.passwordFile = passwordFile
    }

    /// The environment variable the password is read from when no `passwordFile` is given.
    package static let passwordVariable = "CHUTE_STORE_PASSWORD"

    /// Whether `host` names a Unix socket's folder.
    package var isUnixSocket: Bool { self.host.hasPrefix("/") }

    /// The Unix socket's path, as PostgreSQL names it in its folder.
    package var socketPath: String { "\(self.host)/.s.PGSQL.\(self.port)" }

    /// `USER@HOST:PORT/DATABASE`, without a password.
    package var description: String { "\(self.user)@\(self.host):\(self.port)/\(self.database)" }

    /// Reads an address.
    ///
    /// - Returns: the location, or why the text is not one (a password in it is refused).
    package static func parse(_ text: String) -> Result<PostgresLocation, StoreLocationError> {
        guard let components = URLComponents(string: text),
            components.scheme == "postgres" || components.scheme == "postgresql"
        else {
            return .failure(
                StoreLocationError(
                    "expected 'sqlite' or a PostgreSQL address such as postgres://chute@db.lan:5432/chute, found '\(text)'"
                )
            )
        }
        if components.password != nil {
            return .failure(
                StoreLocationError(
                    "the store's address must not carry a password, which anyone reading the rules file or ps would "
                        + "see: put it in a file named by 'storePasswordFile', or in \(Self.passwordVariable)"
                )
            )
        }
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] { query[item.name] = item.value ?? "" }
        for name in query.keys where name != "sslmode" && name != "host" {
            return .failure(StoreLocationError("the store's address takes only ?sslmode= and ?host=, not ?\(name)="))
        }
        var encryption = Encryption.prefer
        if let mode = query["sslmode"] {
            guard let chosen = Encryption(rawValue: mode) else {
                let modes = Encryption.allCases.map(\.rawValue).joined(separator: ", ")
                return .failure(StoreLocationError("sslmode must be one of \(modes), not '\(mode)'"))
            }
            encryption = chosen
        }
        let host = query["host"].flatMap { $0.isEmpty ? nil : $0 } ?? components.host.flatMap { $0.isEmpty ? nil : $0 }
        guard let host else {
            return .failure(StoreLocationError("the store's address names no host: postgres://USER@HOST/DATABASE"))
        }
        guard let user = components.user, !user.isEmpty else {
            return .failure(StoreLocationError("the store's address names no user: postgres://USER@HOST/DATABASE"))
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty, !database.contains("/") else {
            return .failure(
                StoreLocationError("the store's address names no database: postgres://USER@HOST/DATABASE")
            )
        }
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else {
            return .failure(StoreLocationError("the store's port must be from 1 to 65535, not \(port)"))
        }
        return .success(
            PostgresLocation(
                host: host,
                port: port,
                user: user.removingPercentEncoding ?? user,
                database: database.removingPercentEncoding ?? database,
                encryption: encryption
            )
        )
    }

    /// The password: the first line of `passwordFile`, or `CHUTE_STORE_PASSWORD`, or `nil` (the server asks none).
    ///
    /// - Throws: ``StoreLocationError`` when `passwordFile` cannot be read.
    package func password(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String? {
        if let file = self.passwordFile {
            do {
                let text = try String(contentsOfFile: file.string, encoding: .utf8)
                return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
            } catch {
                throw StoreLocationError("cannot read the store's password file \(file): \(error.localizedDescription)")
            }
        }
        return environment[Self.passwordVariable]
    }
}

/// A store's address that cannot be used, and why.
package struct StoreLocationError: Error, CustomStringConvertible, Equatable {
    package var description: String

    package init(_ description: String) {
        self.description = description
    }
}
