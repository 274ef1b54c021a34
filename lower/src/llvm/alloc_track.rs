//! The heap blocks a library call holds, so that a call that fails part
//! way (a failed runtime check, an allocation that runs out of memory)
//! frees them: the C wrapper (capi) points `@__onnxc_frame` at a frame
//! `{ ptr items, i64 n, i64 cap }` for the call, the allocation helpers
//! record each block they hand out and forget each one released, and on
//! failure the wrapper frees what is left. Outside such a call (`onnxc
//! run`'s driver, libgomp's worker threads) the frame is null and nothing
//! is recorded. A call holds tens to hundreds of blocks, released mostly
//! in reverse order: the search from the end stays short.

use super::alloc_cache::{ALLOC, RELEASE};

/// `RETRACK(old, new)`: after a realloc, `new` replaces `old` (nothing
/// changes when `new` is null: `old` is still held).
pub(crate) const RETRACK: &str = "@__onnxc_retrack";

/// What the helpers below call beyond the cache's own declarations.
pub(crate) const DECLS: [(&str, &str); 2] = [
    ("realloc", "declare ptr @realloc(ptr, i64)"),
    (
        "llvm.threadlocal.address.p0",
        "declare ptr @llvm.threadlocal.address.p0(ptr)",
    ),
];

/// `ALLOC` and `RELEASE` around the cache's own (`..._untracked`), and
/// the frame's helpers.
pub(crate) fn helpers() -> String {
    format!(
        r#"@__onnxc_frame = linkonce_odr hidden thread_local global ptr null

define linkonce_odr hidden ptr {ALLOC}(i64 %align, i64 %bytes) noinline {{
entry:
  %p = call ptr @__onnxc_alloc_untracked(i64 %align, i64 %bytes)
  call void @__onnxc_track(ptr %p)
  ret ptr %p
}}

define linkonce_odr hidden void {RELEASE}(ptr %blk) noinline {{
entry:
  call void @__onnxc_untrack(ptr %blk)
  call void @__onnxc_release_untracked(ptr %blk)
  ret void
}}

define linkonce_odr hidden void {RETRACK}(ptr %old, ptr %new) noinline {{
entry:
  %none = icmp eq ptr %new, null
  br i1 %none, label %done, label %swap
swap:
  call void @__onnxc_untrack(ptr %old)
  call void @__onnxc_track(ptr %new)
  br label %done
done:
  ret void
}}

define linkonce_odr hidden void @__onnxc_track(ptr %p) noinline {{
entry:
  %slot = call ptr @llvm.threadlocal.address.p0(ptr @__onnxc_frame)
  %f = load ptr, ptr %slot
  %nof = icmp eq ptr %f, null
  %nop = icmp eq ptr %p, null
  %skip = or i1 %nof, %nop
  br i1 %skip, label %done, label %have
have:
  %ip = getelementptr inbounds {{ ptr, i64, i64 }}, ptr %f, i32 0, i32 0
  %np = getelementptr inbounds {{ ptr, i64, i64 }}, ptr %f, i32 0, i32 1
  %cp = getelementptr inbounds {{ ptr, i64, i64 }}, ptr %f, i32 0, i32 2
  %items = load ptr, ptr %ip
  %n = load i64, ptr %np
  %cap = load i64, ptr %cp
  %full = icmp eq i64 %n, %cap
  br i1 %full, label %grow, label %put
grow:
  %c2 = shl i64 %cap, 1
  %nc = call i64 @llvm.umax.i64(i64 %c2, i64 64)
  %bytes = shl i64 %nc, 3
  %ni = call ptr @realloc(ptr %items, i64 %bytes)
  ; Out of memory for the list itself: the block goes unrecorded.
  %lost = icmp eq ptr %ni, null
  br i1 %lost, label %done, label %grown
grown:
  store ptr %ni, ptr %ip
  store i64 %nc, ptr %cp
  br label %put
put:
  %it = phi ptr [ %items, %have ], [ %ni, %grown ]
  %at = getelementptr inbounds ptr, ptr %it, i64 %n
  store ptr %p, ptr %at
  %n1 = add i64 %n, 1
  store i64 %n1, ptr %np
  br label %done
done:
  ret void
}}

define linkonce_odr hidden void @__onnxc_untrack(ptr %p) noinline {{
entry:
  %slot = call ptr @llvm.threadlocal.address.p0(ptr @__onnxc_frame)
  %f = load ptr, ptr %slot
  %nof = icmp eq ptr %f, null
  br i1 %nof, label %done, label %have
have:
  %ip = getelementptr inbounds {{ ptr, i64, i64 }}, ptr %f, i32 0, i32 0
  %np = getelementptr inbounds {{ ptr, i64, i64 }}, ptr %f, i32 0, i32 1
  %items = load ptr, ptr %ip
  %n = load i64, ptr %np
  br label %scan
scan:
  %i = phi i64 [ %n, %have ], [ %im, %next ]
  %more = icmp sgt i64 %i, 0
  br i1 %more, label %look, label %done
look:
  %im = sub i64 %i, 1
  %ap = getelementptr inbounds ptr, ptr %items, i64 %im
  %v = load ptr, ptr %ap
  %hit = icmp eq ptr %v, %p
  br i1 %hit, label %remove, label %next
next:
  br label %scan
remove:
  %last = sub i64 %n, 1
  %lp = getelementptr inbounds ptr, ptr %items, i64 %last
  %lv = load ptr, ptr %lp
  store ptr %lv, ptr %ap
  store i64 %last, ptr %np
  br label %done
done:
  ret void
}}

"#
    )
}
