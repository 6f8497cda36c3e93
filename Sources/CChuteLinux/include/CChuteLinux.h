#ifndef CHUTE_LINUX_H
#define CHUTE_LINUX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/inotify.h>

/// Renames `oldpath` to `newpath` (both relative to their directory fds) unless `newpath` exists.
/// Swift cannot call `renameat2` (glibc declares it only under _GNU_SOURCE, which Swift's Glibc module lacks).
/// Returns 0, or -1 with errno set (EEXIST when the target exists, EINVAL/ENOSYS where the file system lacks it).
int chute_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);

/// The name that follows an `inotify_event`: `name` is a flexible array member, which Swift does not import.
static inline const char *chute_inotify_event_name(const struct inotify_event *event) {
    return event->len > 0 ? event->name : "";
}

/// Opens a pidfd for process `pid` (`pidfd_open(2)`, reached through the variadic `syscall`, which Swift cannot call).
/// The descriptor becomes readable when the whole process has exited, not merely one of its threads.
/// Returns the descriptor, or -1 with errno set (ENOSYS before Linux 5.3).
int chute_pidfd_open(pid_t pid);

/// Stores in `type` the file system type (`f_type`, a magic number such as 0x6969 for NFS) of the file system that
/// holds `path`. Swift's Glibc module does not import `<sys/vfs.h>`, so `statfs` is wrapped here.
/// Returns 0, or -1 with errno set.
int chute_file_system_type(const char *path, uint32_t *type);

/// Whether any process has the file open for writing: tries to take a read lease on `fd` (opened read-only), which
/// the kernel refuses with EAGAIN while the file is open for writing anywhere, and gives it back at once. `fcntl` is
/// variadic, so Swift cannot call it.
/// Returns 1 (a writer has it open), 0 (none), or -1 with errno when leases cannot tell: EACCES for a process that
/// neither owns the file nor has CAP_LEASE, EINVAL on file systems without leases (NFS, SMB, FUSE).
int chute_file_has_writers(int fd);

/// Sets a thread's I/O scheduling class and level (`ioprio_set(2)`, which glibc does not wrap; Linux keeps it per
/// thread, and new threads inherit their creator's): `ioClass` 2 is best-effort with `level` 0 (highest) to 7
/// (lowest), 3 is idle (`level` ignored). `thread` 0 is the calling thread.
/// Returns 0, or -1 with errno set.
int chute_set_io_priority(pid_t thread, int ioClass, int level);

/// Denies the calling process, and every process it starts, new network sockets: `socket(2)` with any domain but
/// AF_UNIX fails with EACCES, and io_uring, which can create sockets too, is unavailable (ENOSYS). Sets
/// `no_new_privs` and installs a seccomp filter on every thread of the process; neither can be undone. The filter allows every call on an
/// architecture it was not written for (only x86-64 and AArch64 are known).
/// Returns 0, or -1 with errno set (EINVAL where the kernel lacks seccomp filters).
int chute_deny_network(void);

/// How many allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign) the C library has refused
/// in this process, from any code in it: Chute replaces those functions with ones that forward to glibc and count
/// the refusals, which is how a worker knows that a failed job ran into its memory limit.
unsigned long chute_refused_allocations(void);

#endif
