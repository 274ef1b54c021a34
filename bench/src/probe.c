/* onnxc bench probe, LD_PRELOADed into every measured process.
 *
 * ru_maxrss of a spawned child starts at its parent's peak RSS on Linux, so
 * the probe reads the process's own VmHWM (per address space, reset by
 * exec) at exit. Built with -DCOUNT_HEAP it also interposes the C allocator
 * and records the peak of bytes in use (malloc_usable_size) and the number
 * of allocations. At exit it appends one line
 *   pid <TAB> VmHWM KiB <TAB> peak heap bytes <TAB> allocations
 * to the file named by $ONNXC_PROBE_OUT (one line per process).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef COUNT_HEAP
static long long live, peak, count;

/* glibc's own entry points: no dlsym, so no allocation while resolving. */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static void grow(void *p, int fresh) {
  if (!p)
    return;
  long long n = __atomic_add_fetch(&live, (long long)malloc_usable_size(p),
                                   __ATOMIC_RELAXED);
  if (fresh)
    __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
  long long old = __atomic_load_n(&peak, __ATOMIC_RELAXED);
  while (n > old && !__atomic_compare_exchange_n(&peak, &old, n, 1,
                                                 __ATOMIC_RELAXED,
                                                 __ATOMIC_RELAXED)) {
  }
}

static void shrink(size_t n) {
  __atomic_sub_fetch(&live, (long long)n, __ATOMIC_RELAXED);
}

void *malloc(size_t n) {
  void *p = __libc_malloc(n);
  grow(p, 1);
  return p;
}

void *calloc(size_t a, size_t b) {
  void *p = __libc_calloc(a, b);
  grow(p, 1);
  return p;
}

void free(void *p) {
  if (p)
    shrink(malloc_usable_size(p));
  __libc_free(p);
}

void *realloc(void *q, size_t n) {
  size_t old = q ? malloc_usable_size(q) : 0;
  void *p = __libc_realloc(q, n);
  if (p) {
    shrink(old);
    grow(p, q == NULL);
  } else if (q && n == 0) {
    shrink(old); /* glibc frees q */
  }
  return p;
}

void *memalign(size_t a, size_t n) {
  void *p = __libc_memalign(a, n);
  grow(p, 1);
  return p;
}

void *aligned_alloc(size_t a, size_t n) { return memalign(a, n); }

void *valloc(size_t n) { return memalign((size_t)getpagesize(), n); }

int posix_memalign(void **out, size_t a, size_t n) {
  if (a < sizeof(void *) || (a & (a - 1)) != 0)
    return EINVAL;
  void *p = memalign(a, n);
  if (!p)
    return ENOMEM;
  *out = p;
  return 0;
}
#else
static const long long peak = -1, count = -1; /* not counted */
#endif

/* VmHWM from /proc/self/status, read without allocating. */
static long vm_hwm_kib(void) {
  static char buf[8192];
  int fd = open("/proc/self/status", O_RDONLY);
  if (fd < 0)
    return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0)
    return -1;
  buf[n] = 0;
  char *line = strstr(buf, "\nVmHWM:");
  return line ? strtol(line + 7, NULL, 10) : -1;
}

__attribute__((destructor)) static void probe_report(void) {
  const char *path = getenv("ONNXC_PROBE_OUT");
  if (!path)
    return;
  char line[160];
  int len = snprintf(line, sizeof line, "%d\t%ld\t%lld\t%lld\n", (int)getpid(),
                     vm_hwm_kib(), peak, count);
  int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0 || len <= 0)
    return;
  ssize_t w = write(fd, line, (size_t)len);
  (void)w;
  close(fd);
}
