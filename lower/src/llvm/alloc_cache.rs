//! A library-wide cache of large freed heap blocks: a model frees an
//! activation or a scratch buffer (Winograd's transformed tiles, GEMM
//! panels) and soon allocates one of about the same size, in this call or
//! the next. Without the cache, glibc returns large blocks to the system
//! and every later one is page-faulted in afresh: a quarter of a CNN's run
//! time, and still 27% of a small one's when the cache was emptied after
//! every call (tv_mobilenet_v3_small: 7.5 → 5.5 ms per call).
//!
//! `__onnxc_alloc(align, bytes)` takes the smallest cached block that fits
//! (its capacity from `malloc_usable_size`), else calls `aligned_alloc`;
//! `__onnxc_release(p)` keeps a block of at least `MIN_CACHED` bytes in one
//! of `SLOTS` slots (evicting a smaller one), else frees it. Blocks are
//! ordinary `aligned_alloc` blocks, so a returned buffer is freed by the
//! caller with `free`. Like an inference runtime's arena, the cache holds
//! at most `SLOTS` blocks between calls; it is emptied when the library is
//! unloaded (a `global_dtors` entry). One spin lock guards it: calls from
//! several threads and libgomp's workers share it, and it is taken once
//! per buffer, not per element. The helpers are `linkonce_odr hidden`, so
//! the parts of a split module share one cache, and `noinline`: inlined at
//! each of ResNet-152's 128 buffers they made `main_graph` 12 times larger
//! and cost clang 0.7 s.

use super::ModuleCx;

pub(crate) const ALLOC: &str = "@__onnxc_alloc";
pub(crate) const RELEASE: &str = "@__onnxc_release";

/// Blocks below this size go straight back to malloc (its own bins are
/// fast for them); from here up, malloc's consolidation showed in tiny
/// transformers' profiles (hf_t5_encoder_tiny: 73 → 60 µs per call).
const MIN_CACHED: u64 = 4 * 1024;
const SLOTS: u64 = 16;

/// Defines the helpers once per module.
pub(crate) fn ensure(mcx: &mut ModuleCx) {
    if mcx.alloc_cache {
        return;
    }
    mcx.alloc_cache = true;
    for (sym, decl) in [
        ("aligned_alloc", "declare ptr @aligned_alloc(i64, i64)"),
        ("free", "declare void @free(ptr)"),
        ("malloc_usable_size", "declare i64 @malloc_usable_size(ptr)"),
    ] {
        mcx.declare(sym, decl);
    }
    mcx.helpers.push(helpers());
}

fn helpers() -> String {
    [lock(), alloc(), release(), flush()].concat()
}

/// The cache, its lock and the destructor entry; acquire and unlock.
fn lock() -> String {
    format!(
        r#"@__onnxc_cache_lock = linkonce_odr hidden global i32 0
@__onnxc_cache = linkonce_odr hidden global [{SLOTS} x {{ ptr, i64 }}] zeroinitializer
@llvm.global_dtors = appending global [1 x {{ i32, ptr, ptr }}] [{{ i32, ptr, ptr }} {{ i32 65535, ptr @__onnxc_cache_flush, ptr null }}]

define linkonce_odr hidden void @__onnxc_cache_acquire() {{
entry:
  br label %try
try:
  %old = atomicrmw xchg ptr @__onnxc_cache_lock, i32 1 acquire
  %free = icmp eq i32 %old, 0
  br i1 %free, label %done, label %wait
wait:
  %v = load atomic i32, ptr @__onnxc_cache_lock monotonic, align 4
  %still = icmp ne i32 %v, 0
  br i1 %still, label %wait, label %try
done:
  ret void
}}

define linkonce_odr hidden void @__onnxc_cache_unlock() {{
entry:
  store atomic i32 0, ptr @__onnxc_cache_lock release, align 4
  ret void
}}

"#
    )
}

/// `ALLOC`: the tightest cached block that fits and is aligned, else a
/// fresh one.
fn alloc() -> String {
    format!(
        r#"define linkonce_odr hidden ptr {ALLOC}(i64 %align, i64 %bytes) noinline {{
entry:
  %large = icmp uge i64 %bytes, {MIN_CACHED}
  br i1 %large, label %lock, label %fresh
lock:
  call void @__onnxc_cache_acquire()
  br label %scan
scan:
  %i = phi i64 [ 0, %lock ], [ %i1, %scan ]
  %best = phi i64 [ -1, %lock ], [ %best1, %scan ]
  %bestcap = phi i64 [ -1, %lock ], [ %bestcap1, %scan ]
  %p = getelementptr inbounds [{SLOTS} x {{ ptr, i64 }}], ptr @__onnxc_cache, i64 0, i64 %i, i32 0
  %capp = getelementptr inbounds [{SLOTS} x {{ ptr, i64 }}], ptr @__onnxc_cache, i64 0, i64 %i, i32 1
  %blk = load ptr, ptr %p
  %cap = load i64, ptr %capp
  %pi = ptrtoint ptr %blk to i64
  %am1 = sub i64 %align, 1
  %mis = and i64 %pi, %am1
  %held = icmp ne ptr %blk, null
  %fits = icmp uge i64 %cap, %bytes
  %tighter = icmp ult i64 %cap, %bestcap
  %aligned = icmp eq i64 %mis, 0
  %c1 = and i1 %held, %fits
  %c2 = and i1 %c1, %tighter
  %ok = and i1 %c2, %aligned
  %best1 = select i1 %ok, i64 %i, i64 %best
  %bestcap1 = select i1 %ok, i64 %cap, i64 %bestcap
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, {SLOTS}
  br i1 %more, label %scan, label %pick
pick:
  %found = icmp sge i64 %best1, 0
  br i1 %found, label %take, label %miss
take:
  %tp = getelementptr inbounds [{SLOTS} x {{ ptr, i64 }}], ptr @__onnxc_cache, i64 0, i64 %best1, i32 0
  %tb = load ptr, ptr %tp
  store ptr null, ptr %tp
  call void @__onnxc_cache_unlock()
  ret ptr %tb
miss:
  call void @__onnxc_cache_unlock()
  br label %fresh
fresh:
  %r = call ptr @aligned_alloc(i64 %align, i64 %bytes)
  ret ptr %r
}}

"#
    )
}

/// `RELEASE`: kept in place of the smallest cached block when larger,
/// else freed.
fn release() -> String {
    format!(
        r#"define linkonce_odr hidden void {RELEASE}(ptr %blk) noinline {{
entry:
  %held = icmp ne ptr %blk, null
  br i1 %held, label %size, label %plain
size:
  %cap = call i64 @malloc_usable_size(ptr %blk)
  %large = icmp uge i64 %cap, {MIN_CACHED}
  br i1 %large, label %lock, label %plain
lock:
  call void @__onnxc_cache_acquire()
  br label %scan
scan:
  %i = phi i64 [ 0, %lock ], [ %i1, %scan ]
  %low = phi i64 [ 0, %lock ], [ %low1, %scan ]
  %lowcap = phi i64 [ -1, %lock ], [ %lowcap1, %scan ]
  %capp = getelementptr inbounds [{SLOTS} x {{ ptr, i64 }}], ptr @__onnxc_cache, i64 0, i64 %i, i32 1
  %p = getelementptr inbounds [{SLOTS} x {{ ptr, i64 }}], ptr @__onnxc_cache, i64 0, i64 %i, i32 0
  %sb = load ptr, ptr %p
  %sc = load i64, ptr %capp
  %empty = icmp eq ptr %sb, null
  %slotcap = select i1 %empty, i64 0, i64 %sc
  %lower = icmp ult i64 %slotcap, %lowcap
  %low1 = select i1 %lower, i64 %i, i64 %low
  %lowcap1 = select i1 %lower, i64 %slotcap, i64 %lowcap
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, {SLOTS}
  br i1 %more, label %scan, label %choose
choose:
  %keep = icmp ult i64 %lowcap1, %cap
  br i1 %keep, label %swap, label %unkept
swap:
  %vp = getelementptr inbounds [{SLOTS} x {{ ptr, i64 }}], ptr @__onnxc_cache, i64 0, i64 %low1, i32 0
  %vc = getelementptr inbounds [{SLOTS} x {{ ptr, i64 }}], ptr @__onnxc_cache, i64 0, i64 %low1, i32 1
  %victim = load ptr, ptr %vp
  store ptr %blk, ptr %vp
  store i64 %cap, ptr %vc
  call void @__onnxc_cache_unlock()
  call void @free(ptr %victim)
  ret void
unkept:
  call void @__onnxc_cache_unlock()
  br label %plain
plain:
  call void @free(ptr %blk)
  ret void
}}

"#
    )
}

/// Frees every cached block (at unload).
fn flush() -> String {
    format!(
        r#"define linkonce_odr hidden void @__onnxc_cache_flush() {{
entry:
  call void @__onnxc_cache_acquire()
  br label %scan
scan:
  %i = phi i64 [ 0, %entry ], [ %i1, %scan ]
  %p = getelementptr inbounds [{SLOTS} x {{ ptr, i64 }}], ptr @__onnxc_cache, i64 0, i64 %i, i32 0
  %blk = load ptr, ptr %p
  call void @free(ptr %blk)
  store ptr null, ptr %p
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, {SLOTS}
  br i1 %more, label %scan, label %done
done:
  call void @__onnxc_cache_unlock()
  ret void
}}
"#
    )
}
