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
//! per buffer, not per element. Blocks below `MIN_CACHED` bytes are kept
//! by size class instead (`SMALL_CLASSES` classes of 64 · 2^c bytes, up
//! to `SMALL_DEPTH` blocks each): a model with dynamic dims cannot have
//! its small buffers on the stack, and glibc's `aligned_alloc`/`free` of
//! them was a fifth of a tiny transformer's call (hf_t5_encoder_tiny at
//! 7 tokens). `ALLOC` and `RELEASE` also record the blocks a library
//! call holds (`alloc_track`). The helpers are `linkonce_odr hidden`, so
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
/// Size classes of small blocks: 64, 128, ..., 2048 bytes, 64-aligned.
const SMALL_CLASSES: u64 = 6;
const SMALL_DEPTH: u64 = 16;

/// What the helpers call: symbol and declaration.
const DECLS: [(&str, &str); 7] = [
    ("aligned_alloc", "declare ptr @aligned_alloc(i64, i64)"),
    ("free", "declare void @free(ptr)"),
    ("malloc_usable_size", "declare i64 @malloc_usable_size(ptr)"),
    ("llvm.ctlz.i64", "declare i64 @llvm.ctlz.i64(i64, i1)"),
    ("llvm.umax.i64", "declare i64 @llvm.umax.i64(i64, i64)"),
    ("llvm.smax.i64", "declare i64 @llvm.smax.i64(i64, i64)"),
    ("llvm.smin.i64", "declare i64 @llvm.smin.i64(i64, i64)"),
];

/// Defines the helpers once per module.
pub(crate) fn ensure(mcx: &mut ModuleCx) {
    if mcx.alloc_cache {
        return;
    }
    mcx.alloc_cache = true;
    for (sym, decl) in DECLS.iter().chain(&super::alloc_track::DECLS) {
        mcx.declare(sym, decl);
    }
    mcx.helpers.push(helpers());
}

fn helpers() -> String {
    let tracked = super::alloc_track::helpers();
    [lock(), alloc(), small(), release(), flush(), tracked].concat()
}

/// The cache, its lock and the destructor entry; acquire and unlock.
fn lock() -> String {
    format!(
        r#"@__onnxc_cache_lock = linkonce_odr hidden global i32 0
@__onnxc_cache = linkonce_odr hidden global [{SLOTS} x {{ ptr, i64 }}] zeroinitializer
@__onnxc_small = linkonce_odr hidden global [{SMALL_CLASSES} x [{SMALL_DEPTH} x ptr]] zeroinitializer
@__onnxc_small_count = linkonce_odr hidden global [{SMALL_CLASSES} x i64] zeroinitializer
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
    let small_max = 64u64 << (SMALL_CLASSES - 1);
    format!(
        r#"define linkonce_odr hidden ptr @__onnxc_alloc_untracked(i64 %align, i64 %bytes) noinline {{
entry:
  %large = icmp uge i64 %bytes, {MIN_CACHED}
  br i1 %large, label %lock, label %smallish
smallish:
  %fitsclass = icmp ule i64 %bytes, {small_max}
  %align64 = icmp ule i64 %align, 64
  %small = and i1 %fitsclass, %align64
  br i1 %small, label %byclass, label %fresh
byclass:
  %sr = call ptr @__onnxc_small_alloc(i64 %bytes)
  ret ptr %sr
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

/// The size-class helpers: `__onnxc_small_alloc(bytes)` pops a block of
/// the class `bytes` rounds up to (or allocates one of the class's whole
/// size, so any request of the class can reuse it);
/// `__onnxc_small_release(blk, cap)` pushes a 64-aligned block onto the
/// largest class its usable size `cap` covers, false when it cannot.
fn small() -> String {
    let classes = format!("[{SMALL_CLASSES} x [{SMALL_DEPTH} x ptr]]");
    let counts = format!("[{SMALL_CLASSES} x i64]");
    format!(
        r#"define linkonce_odr hidden ptr @__onnxc_small_alloc(i64 %bytes) noinline {{
entry:
  %b1 = call i64 @llvm.umax.i64(i64 %bytes, i64 1)
  %bm1 = sub i64 %b1, 1
  %lz = call i64 @llvm.ctlz.i64(i64 %bm1, i1 false)
  %lg = sub i64 64, %lz
  %c6 = sub i64 %lg, 6
  %cls = call i64 @llvm.smax.i64(i64 %c6, i64 0)
  %size = shl i64 64, %cls
  %cntp = getelementptr inbounds {counts}, ptr @__onnxc_small_count, i64 0, i64 %cls
  call void @__onnxc_cache_acquire()
  %cnt = load i64, ptr %cntp
  %has = icmp ugt i64 %cnt, 0
  br i1 %has, label %pop, label %miss
pop:
  %top = sub i64 %cnt, 1
  %sp = getelementptr inbounds {classes}, ptr @__onnxc_small, i64 0, i64 %cls, i64 %top
  %blk = load ptr, ptr %sp
  store ptr null, ptr %sp
  store i64 %top, ptr %cntp
  call void @__onnxc_cache_unlock()
  ret ptr %blk
miss:
  call void @__onnxc_cache_unlock()
  %r = call ptr @aligned_alloc(i64 64, i64 %size)
  ret ptr %r
}}

define linkonce_odr hidden i1 @__onnxc_small_release(ptr %blk, i64 %cap) noinline {{
entry:
  %pi = ptrtoint ptr %blk to i64
  %mis = and i64 %pi, 63
  %aligned = icmp eq i64 %mis, 0
  %big = icmp uge i64 %cap, 64
  %ok = and i1 %aligned, %big
  br i1 %ok, label %class, label %no
class:
  %lz = call i64 @llvm.ctlz.i64(i64 %cap, i1 false)
  %fl = sub i64 63, %lz
  %c6 = sub i64 %fl, 6
  %cls = call i64 @llvm.smin.i64(i64 %c6, i64 {last})
  %cntp = getelementptr inbounds {counts}, ptr @__onnxc_small_count, i64 0, i64 %cls
  call void @__onnxc_cache_acquire()
  %cnt = load i64, ptr %cntp
  %room = icmp ult i64 %cnt, {SMALL_DEPTH}
  br i1 %room, label %push, label %full
push:
  %sp = getelementptr inbounds {classes}, ptr @__onnxc_small, i64 0, i64 %cls, i64 %cnt
  store ptr %blk, ptr %sp
  %cnt1 = add i64 %cnt, 1
  store i64 %cnt1, ptr %cntp
  call void @__onnxc_cache_unlock()
  ret i1 true
full:
  call void @__onnxc_cache_unlock()
  br label %no
no:
  ret i1 false
}}

"#,
        last = SMALL_CLASSES - 1,
    )
}

/// `RELEASE`: kept in place of the smallest cached block when larger,
/// else freed.
fn release() -> String {
    format!(
        r#"define linkonce_odr hidden void @__onnxc_release_untracked(ptr %blk) noinline {{
entry:
  %held = icmp ne ptr %blk, null
  br i1 %held, label %size, label %plain
size:
  %cap = call i64 @malloc_usable_size(ptr %blk)
  %large = icmp uge i64 %cap, {MIN_CACHED}
  br i1 %large, label %lock, label %small
small:
  %kept = call i1 @__onnxc_small_release(ptr %blk, i64 %cap)
  br i1 %kept, label %done, label %plain
done:
  ret void
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
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, {SLOTS}
  br i1 %more, label %scan, label %small
small:
  %j = phi i64 [ 0, %scan ], [ %j1, %small ]
  %sp = getelementptr inbounds ptr, ptr @__onnxc_small, i64 %j
  %sb = load ptr, ptr %sp
  call void @free(ptr %sb)
  %j1 = add i64 %j, 1
  %smore = icmp ult i64 %j1, {small_slots}
  br i1 %smore, label %small, label %done
done:
  store [{SLOTS} x {{ ptr, i64 }}] zeroinitializer, ptr @__onnxc_cache
  store [{SMALL_CLASSES} x [{SMALL_DEPTH} x ptr]] zeroinitializer, ptr @__onnxc_small
  store [{SMALL_CLASSES} x i64] zeroinitializer, ptr @__onnxc_small_count
  call void @__onnxc_cache_unlock()
  ret void
}}
"#,
        small_slots = SMALL_CLASSES * SMALL_DEPTH,
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use std::process::Command;

    /// The helpers built by clang and called from a small program: a
    /// released small block is handed out again for a request of its class
    /// (64-aligned), an empty class gets a fresh block, a full class frees
    /// what it cannot keep (40 blocks released into 16 places; valgrind
    /// runs of compiled models check that nothing leaks), and large blocks
    /// still go through the slots.
    #[test]
    fn small_blocks_are_reused_by_class() {
        let clang = ["/usr/lib/llvm-19/bin/clang", "clang-19", "clang"]
            .into_iter()
            .find(|c| Command::new(c).arg("--version").output().is_ok())
            .expect("needs LLVM 19's clang (scripts/setup-llvm.sh)");
        let all = DECLS.iter().chain(&super::super::alloc_track::DECLS);
        let decls: Vec<&str> = all.map(|&(_, d)| d).collect();
        let decls = decls.join("\n");
        let main = r#"
define i32 @main() {
entry:
  %a = call ptr @__onnxc_alloc(i64 64, i64 100)
  call void @__onnxc_release(ptr %a)
  %b = call ptr @__onnxc_alloc(i64 16, i64 120)
  %same = icmp eq ptr %a, %b
  %bi = ptrtoint ptr %b to i64
  %mis = and i64 %bi, 63
  %aligned = icmp eq i64 %mis, 0
  %c = call ptr @__onnxc_alloc(i64 64, i64 70)
  %fresh = icmp ne ptr %c, %b
  %held = alloca [40 x ptr]
  br label %take
take:
  %i = phi i64 [ 0, %entry ], [ %i1, %take ]
  %x = call ptr @__onnxc_alloc(i64 64, i64 2000)
  %xp = getelementptr inbounds [40 x ptr], ptr %held, i64 0, i64 %i
  store ptr %x, ptr %xp
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, 40
  br i1 %more, label %take, label %give
give:
  %j = phi i64 [ 0, %take ], [ %j1, %give ]
  %yp = getelementptr inbounds [40 x ptr], ptr %held, i64 0, i64 %j
  %y = load ptr, ptr %yp
  call void @__onnxc_release(ptr %y)
  %j1 = add i64 %j, 1
  %jmore = icmp ult i64 %j1, 40
  br i1 %jmore, label %give, label %large
large:
  %l = call ptr @__onnxc_alloc(i64 64, i64 100000)
  call void @__onnxc_release(ptr %l)
  %m = call ptr @__onnxc_alloc(i64 64, i64 90000)
  %reused = icmp eq ptr %l, %m
  call void @__onnxc_release(ptr %m)
  call void @__onnxc_release(ptr %b)
  call void @__onnxc_release(ptr %c)
  %ok1 = and i1 %same, %aligned
  %ok2 = and i1 %ok1, %fresh
  %ok = and i1 %ok2, %reused
  %r = select i1 %ok, i32 0, i32 1
  ret i32 %r
}
"#;
        let dir = std::env::temp_dir().join(format!("onnxc-alloc-cache-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ll = dir.join("t.ll");
        std::fs::write(&ll, format!("{decls}\n{}\n{main}", helpers())).unwrap();
        let exe = dir.join("t");
        let built = Command::new(clang)
            .args(["-O2", "-w", "-o"])
            .arg(&exe)
            .arg(&ll)
            .output()
            .unwrap();
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        let ran = Command::new(&exe).status().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(ran.code(), Some(0), "a cache property failed");
    }
}
