import CChuteLinux
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// How a worker opens a job's input: once, so that everything after uses the one descriptor and the path is never
/// looked up twice, and so that nothing but the regular file the supervisor found can stand in for it.
///
/// Below its watched folder the input is looked up with `openat2` and no symbolic link is followed on the way, so a
/// folder swapped for a link to elsewhere leads nowhere; without a folder (`chute convert`) `O_NOFOLLOW` refuses a
/// final link. `O_NONBLOCK` makes a FIFO's open return at once. `fstat` then refuses anything but a regular file,
/// and a file with several names (a hard link can give an upload a file the uploader could not otherwise reach)
/// unless the watch allows hard links.
package enum InputOpening {
    /// Opens `request.input` for reading.
    ///
    /// - Returns: the descriptor, which the caller closes, and the file's size.
    /// - Throws: `unsupportedInput` for a symbolic link (anywhere below the watched folder), FIFO, socket, device,
    ///   directory or refused hard link; `inputChanged` when the file is gone; `sourceBusy` when a lease or lock
    ///   refuses the open; `internalError` for other failures.
    package static func open(_ request: ConversionRequest) throws(ConversionFailure) -> (descriptor: Int32, size: Int64)
    {
        let flags = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK
        let descriptor: Int32
        var relative = request.input
        do throws(SystemCallError) {
            if let root = request.root, relative.removePrefix(root), !relative.isEmpty {
                descriptor = try SystemCall.check("openat2") {
                    root.withPlatformString { rootName in
                        relative.withPlatformString { chute_open_beneath(rootName, $0, flags) }
                    }
                }
            } else {
                descriptor = try SystemCall.check("open") {
                    request.input.withPlatformString { Glibc.open($0, flags) }
                }
            }
        } catch {
            let error = error.cause
            switch error {
            case .tooManySymbolicLinkLevels, .improperLink, .notDirectory:
                throw ConversionFailure(
                    .unsupportedInput,
                    "the input's path has a symbolic link, which is not followed"
                )
            case .noSuchAddressOrDevice: throw ConversionFailure(.unsupportedInput, "not a regular file")
            case .noSuchFileOrDirectory: throw ConversionFailure(.inputChanged, "input disappeared before it was read")
            case .resourceBusy, .textFileBusy, .wouldBlock:
                throw ConversionFailure(.sourceBusy, "another program holds the input (\(error))")
            default: throw ConversionFailure(.internalError, "cannot open input: \(error)")
            }
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let error = Errno(rawValue: errno)
            close(descriptor)
            throw ConversionFailure(.internalError, "cannot inspect input: \(error)")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            close(descriptor)
            throw ConversionFailure(.unsupportedInput, "not a regular file")
        }
        guard status.st_nlink <= 1 || request.allowsHardLinks else {
            close(descriptor)
            throw ConversionFailure(
                .unsupportedInput,
                "the input is a hard link (\(status.st_nlink) names), which its watch does not allow (allowHardLinks)"
            )
        }
        return (descriptor, Int64(status.st_size))
    }
}
