/* LD_PRELOAD heap counter for the dealloc differential benchmark:
 * counts heap allocations, the peak of live heap bytes (usable sizes) and
 * of live buffers, printed to stderr at exit as
 * "heap: allocs=N peak_bytes=B peak_buffers=K peak_bytes64=C" where C
 * counts requested sizes rounded up to 64 bytes (alignment-neutral).
 * Build: cc -O2 -shared -fPIC -o malloc_count.so malloc_count.c -ldl */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stddef.h>
#include <unistd.h>

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void (*real_free)(void *);
static long allocs, live, peak, nlive, npeak;
/* Requested sizes rounded up to 64 bytes (what an allocator aligning every
 * buffer to 64 would hand out), by pointer: an open-addressing table. */
#define SLOTS (1 << 20)
static void *keys[SLOTS];
static long vals[SLOTS];
static long live64, peak64;
static size_t slot(void *p) {
  size_t h = ((size_t)p >> 4) * 0x9E3779B97F4A7C15ull;
  return (h >> 44) & (SLOTS - 1);
}
static void remember(void *p, size_t n) {
  size_t i = slot(p);
  while (keys[i] && keys[i] != (void *)1) i = (i + 1) & (SLOTS - 1);
  keys[i] = p;
  vals[i] = (long)((n + 63) & ~(size_t)63);
  live64 += vals[i];
  if (live64 > peak64) peak64 = live64;
}
static void forget(void *p) {
  size_t i = slot(p);
  while (keys[i]) {
    if (keys[i] == p) {
      live64 -= vals[i];
      keys[i] = (void *)1; /* tombstone */
      return;
    }
    i = (i + 1) & (SLOTS - 1);
  }
}
static int ready;

/* dlsym may call calloc: serve it from a static buffer. */
static char boot[4096];
static size_t boot_used;

static void init(void) {
  if (ready) return;
  ready = -1;
  real_malloc = dlsym(RTLD_NEXT, "malloc");
  real_calloc = dlsym(RTLD_NEXT, "calloc");
  real_realloc = dlsym(RTLD_NEXT, "realloc");
  real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
  real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
  real_free = dlsym(RTLD_NEXT, "free");
  ready = 1;
}

static void *count(void *p) {
  if (p) {
    allocs++;
    if (++nlive > npeak) npeak = nlive;
    live += (long)malloc_usable_size(p);
    if (live > peak) peak = live;
  }
  return p;
}

static int from_boot(void *p) { return (char *)p >= boot && (char *)p < boot + sizeof boot; }

void *malloc(size_t n) {
  init();
  void *p = count(real_malloc(n));
  if (p) remember(p, n);
  return p;
}
void *calloc(size_t a, size_t b) {
  if (ready < 0) {
    void *p = boot + boot_used;
    boot_used += (a * b + 15) & ~(size_t)15;
    return p;
  }
  init();
  void *p = count(real_calloc(a, b));
  if (p) remember(p, a * b);
  return p;
}
void *realloc(void *p, size_t n) {
  init();
  if (p) live -= (long)malloc_usable_size(p);
  if (p) forget(p);
  void *q = real_realloc(p, n);
  if (q) remember(q, n);
  if (q) {
    live += (long)malloc_usable_size(q);
    if (live > peak) peak = live;
    if (!p && ++nlive > npeak) npeak = nlive;
    if (!p) allocs++;
  }
  return q;
}
void *aligned_alloc(size_t a, size_t n) {
  init();
  void *p = count(real_aligned_alloc(a, n));
  if (p) remember(p, n);
  return p;
}
int posix_memalign(void **out, size_t a, size_t n) {
  init();
  int r = real_posix_memalign(out, a, n);
  if (r == 0) {
    count(*out);
    remember(*out, n);
  }
  return r;
}
void free(void *p) {
  if (!p || from_boot(p)) return;
  init();
  live -= (long)malloc_usable_size(p);
  forget(p);
  nlive--;
  real_free(p);
}

__attribute__((destructor)) static void report(void) {
  char buf[128];
  int n = snprintf(buf, sizeof buf, "heap: allocs=%ld peak_bytes=%ld peak_buffers=%ld peak_bytes64=%ld\n", allocs, peak, npeak, peak64);
  if (n > 0) (void)!write(2, buf, (size_t)n);
}
