/// One problem found in a configuration file, with the position of the offending key or value.
///
/// Printed as `FILE:LINE:COL: message`, the form editors and terminals turn into a link to the spot.
package struct ConfigIssue: Sendable, Equatable, CustomStringConvertible {
    /// The file as named to the reader (only used in messages).
    package var file: String
    /// The 1-based line.
    package var line: Int
    /// The 1-based column, counted in Unicode scalars as libyaml does.
    package var column: Int
    /// What is wrong, and where possible what would be right.
    package var message: String

    package init(file: String, line: Int, column: Int, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    package var description: String { "\(self.file):\(self.line):\(self.column): \(self.message)" }
}

/// A configuration file that cannot be used, with every problem found in it.
package struct ConfigError: Error, Sendable, CustomStringConvertible {
    /// The problems, in the order they were found (which follows the file from top to bottom).
    package var issues: [ConfigIssue]

    package init(issues: [ConfigIssue]) {
        self.issues = issues
    }

    /// One issue per line.
    package var description: String { self.issues.map(\.description).joined(separator: "\n") }
}
