#ifndef CHUTE_LINUX_H
#define CHUTE_LINUX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/inotify.h>
#include <sys/stat.h>

/// Renames `oldpath` to `newpath` (both relative to their directory fds) unless `newpath` exists.
/// Swift cannot call `renameat2` (glibc declares it only under _GNU_SOURCE, which Swift's Glibc module lacks).
/// Returns 0, or -1 with errno set (EEXIST when the target exists, EINVAL/ENOSYS where the file system lacks it).
int chute_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);

/// Makes the file open for writing at `destination` share the blocks of the file open for reading at `source` (a
/// reflink: Btrfs, XFS, bcachefs), through `ioctl(FICLONE)`, a macro Swift cannot import.
/// Returns 0, or -1 with errno set (EOPNOTSUPP or EINVAL where the file system cannot, EXDEV across file systems).
int chute_clone_file(int destination, int source);

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

/// Starts writing the file's dirty pages to storage without waiting for them (`sync_file_range` with
/// `SYNC_FILE_RANGE_WRITE` over the whole file; glibc declares it only under _GNU_SOURCE), so that a later `fsync`
/// finds most of the work done. Not a durability guarantee: only `fsync` is.
/// Returns 0, or -1 with errno set.
int chute_start_writeback(int fd);

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

/// Opens `relative` (a path below the folder `root`) with `flags`, never leaving `root` and following no symbolic
/// link on the way, not even in a folder part of the path (`openat2` with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
/// RESOLVE_NO_MAGICLINKS; where the kernel lacks `openat2`, one `openat` per component with O_NOFOLLOW). With
/// O_PATH | O_NOFOLLOW a final symbolic link is opened itself, for `fstat`; otherwise it fails with ELOOP. `root`
/// itself is looked up as usual: it is the configuration's. O_CLOEXEC is added.
/// Returns the descriptor, or -1 with errno set (ELOOP or EXDEV when a link or `..` would lead elsewhere).
int chute_open_beneath(const char *root, const char *relative, int flags);

/// What chute_open_beneath does where the kernel lacks `openat2` (before Linux 5.6, as on many NAS systems): from
/// the folder `rootfd`, each folder component is opened with O_PATH | O_NOFOLLOW, `..` and empty components are
/// refused (EXDEV), and the last component is opened with `flags` | O_NOFOLLOW. A link fails with ENOTDIR (a folder
/// component) or ELOOP (the last one).
/// Returns the descriptor, or -1 with errno set.
int chute_open_beneath_by_component(int rootfd, const char *relative, int flags);

/// Like `lstat` for `relative` below `root`, with the lookup of chute_open_beneath: a symbolic link on the way fails
/// (ELOOP or EXDEV), a final one is described itself. (O_PATH, which this needs, is not visible to Swift.)
/// Returns 0, or -1 with errno set.
int chute_stat_beneath(const char *root, const char *relative, struct stat *info);

/// How many allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign, and thread stacks: a
/// pthread_create that failed with EAGAIN) the C library has refused in this process, from any code in it: Chute
/// replaces those functions with ones that forward to glibc and count the refusals, which is how a worker knows that
/// a failed job ran into its memory limit.
unsigned long chute_refused_allocations(void);

/// Returns the free memory of glibc's heap to the kernel (malloc_trim, which is not visible to Swift): the free pages
/// inside every arena as well as at their ends.
void chute_release_free_memory(void);

#endif
