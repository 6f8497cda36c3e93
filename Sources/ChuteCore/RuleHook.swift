/// A command a rule runs after each of its jobs ends (`run:`): a program and its arguments, started without a shell,
/// with the job's facts in its environment and the sidecar on its standard input.
package struct RuleHook: Sendable, Equatable {
    /// The program (an absolute path) and its arguments.
    package var command: [String]
    /// `on` (`completed`, `failed` and/or `cancelled`; default `completed`): the ends it runs after.
    package var events: Set<NotifyEvent>
    /// `runTimeout` (duration, default 60s): a hook still running after it is killed.
    package var timeout: Duration

    package init(command: [String], events: Set<NotifyEvent> = [.completed], timeout: Duration = Self.defaultTimeout) {
        self.command = command
        self.events = events
        self.timeout = timeout
    }

    /// A hook's timeout unless `runTimeout` says otherwise.
    package static let defaultTimeout: Duration = .seconds(60)

    /// The events a hook may run after: a job's ends, not the digest.
    package static let events: [NotifyEvent] = [.completed, .failed, .cancelled]

    /// Why `command` cannot be a hook's, or `nil`.
    package static func problem(with command: [String]) -> String? {
        guard let program = command.first else { return "the command is empty" }
        guard program.hasPrefix("/") else {
            return "the program '\(program)' must be an absolute path: a hook runs without a shell or a PATH lookup, "
                + "such as [/usr/local/bin/index, --quiet]"
        }
        return nil
    }
}
