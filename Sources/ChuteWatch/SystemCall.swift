import Glibc

/// Calls `body`, a system call that returns -1 and sets `errno` on failure, again for as long as it fails with
/// `EINTR`.
///
/// - Returns: the first result that is not an interrupted call.
func retryingOnInterrupt<Result: FixedWidthInteger>(_ body: () -> Result) -> Result {
    while true {
        let result = body()
        if result >= 0 || errno != EINTR { return result }
    }
}
