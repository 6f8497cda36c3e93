// Counts the allocations the C library refuses, so that a worker can tell that a job failed because it ran into its
// memory limit (RLIMIT_DATA), whatever error the library that asked for the memory then reported.
//
// The functions below take the place of the C library's own for the whole process (an executable's definitions
// come first in the dynamic linker's lookup, for every shared library too) and forward to glibc's allocator through
// its exported __libc_* entry points, so memory still comes from, and goes back to, the one glibc heap (free is not
// replaced). A thread whose stack the limit refuses counts too: pthread_create then fails with EAGAIN, which FFmpeg
// passes on as "Resource temporarily unavailable" from whatever opened its threads.
#define _GNU_SOURCE
#include "CChuteLinux.h"

#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static atomic_ulong refused_allocations;

static void *counted(void *pointer, size_t size) {
    if (pointer == NULL && size > 0) {
        atomic_fetch_add_explicit(&refused_allocations, 1, memory_order_relaxed);
    }
    return pointer;
}

void *malloc(size_t size) {
    return counted(__libc_malloc(size), size);
}

void *calloc(size_t count, size_t size) {
    return counted(__libc_calloc(count, size), count * size);
}

void *realloc(void *pointer, size_t size) {
    return counted(__libc_realloc(pointer, size), size);
}

void *memalign(size_t alignment, size_t size) {
    return counted(__libc_memalign(alignment, size), size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    return counted(__libc_memalign(alignment, size), size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    // The checks glibc's own posix_memalign makes.
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) {
        return EINVAL;
    }
    void *pointer = counted(__libc_memalign(alignment, size), size);
    if (pointer == NULL && size > 0) {
        return ENOMEM;
    }
    *result = pointer;
    return 0;
}

typedef int (*thread_creator)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

int pthread_create(pthread_t *thread, const pthread_attr_t *attributes, void *(*start)(void *), void *argument) {
    static _Atomic(thread_creator) next;
    thread_creator create = atomic_load_explicit(&next, memory_order_acquire);
    if (create == NULL) {
        create = (thread_creator)dlsym(RTLD_NEXT, "pthread_create");
        atomic_store_explicit(&next, create, memory_order_release);
    }
    int result = create(thread, attributes, start, argument);
    if (result == EAGAIN) {
        atomic_fetch_add_explicit(&refused_allocations, 1, memory_order_relaxed);
    }
    return result;
}

unsigned long chute_refused_allocations(void) {
    return atomic_load_explicit(&refused_allocations, memory_order_relaxed);
}

void chute_release_free_memory(void) {
    malloc_trim(0);
}
