#define _GNU_SOURCE
#include "CChuteLinux.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <linux/ioprio.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

int chute_rename_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    return (int)syscall(SYS_renameat2, olddirfd, oldpath, newdirfd, newpath, RENAME_NOREPLACE);
}

int chute_clone_file(int destination, int source) {
    return ioctl(destination, FICLONE, source);
}

int chute_pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}

int chute_file_system_type(const char *path, uint32_t *type) {
    struct statfs info;
    int result = statfs(path, &info);
    if (result == 0) {
        // Every magic number fits in 32 bits; f_type is a signed word, so a large one may read as negative.
        *type = (uint32_t)info.f_type;
    }
    return result;
}

int chute_start_writeback(int fd) {
    return sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
}

int chute_file_has_writers(int fd) {
    if (fcntl(fd, F_SETLEASE, F_RDLCK) == 0) {
        fcntl(fd, F_SETLEASE, F_UNLCK);
        return 0;
    }
    return errno == EAGAIN ? 1 : -1;
}

int chute_set_io_priority(pid_t thread, int ioClass, int level) {
    return (int)syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, thread, IOPRIO_PRIO_VALUE(ioClass, level));
}

#if defined(__x86_64__)
#define CHUTE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CHUTE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

int chute_deny_network(void) {
#ifdef CHUTE_AUDIT_ARCH
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif
    struct sock_filter filter[] = {
        // Another calling convention (i386 or x32 system calls from an x86-64 process): refused outright.
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CHUTE_AUDIT_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#if defined(__x86_64__)
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
#endif
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        // socket(domain, …): the low 32 bits of the first argument (both architectures are little-endian).
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
    };
    struct sock_fprog program = {
        .len = (unsigned short)(sizeof(filter) / sizeof(filter[0])),
        .filter = filter,
    };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        return -1;
    }
    // TSYNC puts every thread of the process under the filter (and no_new_privs), not only the calling one.
    long result = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &program);
    if (result > 0) {
        // The id of a thread that could not be synchronised.
        errno = EBUSY;
        return -1;
    }
    return (int)result;
#else
    errno = EINVAL;
    return -1;
#endif
}

int chute_open_beneath_by_component(int rootfd, const char *relative, int flags) {
    char path[4096];
    if (strlen(relative) >= sizeof(path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(path, relative);
    int current = dup(rootfd);
    if (current < 0) {
        return -1;
    }
    char *rest = path;
    for (;;) {
        while (*rest == '/') {
            rest++;
        }
        char *slash = strchr(rest, '/');
        if (slash != NULL) {
            *slash = 0;
        }
        if (strcmp(rest, "..") == 0 || *rest == 0) {
            close(current);
            errno = EXDEV;
            return -1;
        }
        int next = slash != NULL
            ? openat(current, rest, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            : openat(current, rest, flags | O_NOFOLLOW | O_CLOEXEC);
        int saved = errno;
        close(current);
        if (next < 0 || slash == NULL) {
            errno = saved;
            return next;
        }
        current = next;
        rest = slash + 1;
    }
}

int chute_open_beneath(const char *root, const char *relative, int flags) {
    int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) {
        return -1;
    }
    struct open_how how;
    memset(&how, 0, sizeof(how));
    how.flags = (unsigned long long)(flags | O_CLOEXEC);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    int fd = (int)syscall(SYS_openat2, rootfd, relative, &how, sizeof(how));
    if (fd < 0 && errno == ENOSYS) {
        fd = chute_open_beneath_by_component(rootfd, relative, flags);
    }
    int saved = errno;
    close(rootfd);
    errno = saved;
    return fd;
}

int chute_stat_beneath(const char *root, const char *relative, struct stat *info) {
    int fd = chute_open_beneath(root, relative, O_PATH | O_NOFOLLOW);
    if (fd < 0) {
        return -1;
    }
    int result = fstat(fd, info);
    int saved = errno;
    close(fd);
    errno = saved;
    return result;
}
