//! Memref descriptors and the ops that allocate, free, read and write
//! through them. Views (subview, reshapes, casts) live in `views.rs`.
//!
//! A descriptor is MLIR's `{ ptr allocated, ptr aligned, i64 offset,
//! [N x i64] sizes, [N x i64] strides }`, held as an SSA aggregate. Sizes,
//! strides and offsets the memref type knows statically are used as
//! constants; only dynamic ones are read from the descriptor.

use super::types::{desc_type, elem_size, global_name, scalar, storage};
use super::{views, FnCx};
use ir::attr::Attribute;
use ir::dialects::op_error;
use ir::types::{Layout, MemRefType};
use ir::ArithOp;
use ir::{MemrefOp, Module, OpId, Result, ValueId, DYN};

/// Default (and minimum) alignment of heap buffers, in bytes.
pub(crate) const HEAP_ALIGN: i64 = 64;

pub(crate) fn emit(cx: &mut FnCx<'_>, op: OpId, which: MemrefOp) -> Result<()> {
    use MemrefOp as M;
    match which {
        M::Alloc => alloc(cx, op, false),
        M::Alloca => alloc(cx, op, true),
        M::Dealloc => dealloc(cx, op),
        M::Realloc => realloc(cx, op),
        M::Load => load(cx, op),
        M::Store => store(cx, op),
        M::Copy => copy(cx, op),
        M::Dim => dim(cx, op),
        M::GetGlobal => get_global(cx, op),
        M::ExtractAlignedPointerAsIndex => {
            let (src, r) = (cx.operand(op, 0)?, cx.result(op, 0)?);
            let d = desc_of(cx, op, src)?;
            let p = ev(cx, &d, "1");
            cx.define(r, format!("ptrtoint ptr {p} to i64"));
            Ok(())
        }
        M::Cast => {
            let (src, r) = (cx.operand(op, 0)?, cx.result(op, 0)?);
            let text = cx.val(src)?;
            cx.alias(r, text);
            Ok(())
        }
        M::Subview => views::subview(cx, op),
        M::ReinterpretCast => views::reinterpret_cast(cx, op),
        M::CollapseShape => views::collapse_shape(cx, op),
        M::ExpandShape => views::expand_shape(cx, op),
        M::Global => Err(op_error(cx.m, op, "is only valid at module level")),
    }
}

/// A descriptor value and its rank.
pub(crate) struct Desc {
    pub(crate) text: String,
    pub(crate) rank: usize,
}

/// The memref type of `v`.
pub(crate) fn memref_type(m: &Module, op: OpId, v: ValueId) -> Result<&MemRefType> {
    m.value_type(v)
        .as_memref()
        .ok_or_else(|| op_error(m, op, format!("expected a memref, got {}", m.value_type(v))))
}

pub(crate) fn desc_of(cx: &FnCx<'_>, op: OpId, v: ValueId) -> Result<Desc> {
    let mt = memref_type(cx.m, op, v)?;
    Ok(Desc {
        text: cx.val(v)?,
        rank: mt.rank(),
    })
}

/// `extractvalue` of a descriptor field (`"1"`, `"3, 0"`).
pub(crate) fn ev(cx: &mut FnCx<'_>, d: &Desc, path: &str) -> String {
    cx.assign(format!(
        "extractvalue {} {}, {path}",
        desc_type(d.rank),
        d.text
    ))
}

fn lit(s: &str) -> Option<i64> {
    s.parse().ok()
}

/// `a * b` on i64 texts, folded when constant.
pub(crate) fn mul(cx: &mut FnCx<'_>, a: &str, b: &str) -> String {
    match (lit(a), lit(b)) {
        (Some(x), Some(y)) => x.wrapping_mul(y).to_string(),
        (Some(0), _) | (_, Some(0)) => "0".into(),
        (Some(1), _) => b.into(),
        (_, Some(1)) => a.into(),
        _ => cx.assign(format!("mul i64 {a}, {b}")),
    }
}

/// `a + b` on i64 texts, folded when constant.
pub(crate) fn add(cx: &mut FnCx<'_>, a: &str, b: &str) -> String {
    match (lit(a), lit(b)) {
        (Some(x), Some(y)) => x.wrapping_add(y).to_string(),
        (Some(0), _) => b.into(),
        (_, Some(0)) => a.into(),
        _ => cx.assign(format!("add i64 {a}, {b}")),
    }
}

/// Static value or `extractvalue` at `path`.
fn field(cx: &mut FnCx<'_>, d: &Desc, stat: i64, path: String) -> String {
    if stat == DYN {
        ev(cx, d, &path)
    } else {
        stat.to_string()
    }
}

pub(crate) fn offset(cx: &mut FnCx<'_>, d: &Desc, mt: &MemRefType) -> String {
    let (_, off) = mt.strides_and_offset();
    field(cx, d, off, "2".into())
}
pub(crate) fn size(cx: &mut FnCx<'_>, d: &Desc, mt: &MemRefType, i: usize) -> String {
    let stat = mt.shape.get(i).copied().unwrap_or(DYN);
    field(cx, d, stat, format!("3, {i}"))
}
pub(crate) fn stride(cx: &mut FnCx<'_>, d: &Desc, mt: &MemRefType, i: usize) -> String {
    let (strides, _) = mt.strides_and_offset();
    let stat = strides.get(i).copied().unwrap_or(DYN);
    field(cx, d, stat, format!("4, {i}"))
}
pub(crate) fn sizes(cx: &mut FnCx<'_>, d: &Desc, mt: &MemRefType) -> Vec<String> {
    (0..mt.rank()).map(|i| size(cx, d, mt, i)).collect()
}
pub(crate) fn strides(cx: &mut FnCx<'_>, d: &Desc, mt: &MemRefType) -> Vec<String> {
    (0..mt.rank()).map(|i| stride(cx, d, mt, i)).collect()
}

/// Builds a descriptor with `insertvalue`s; the last one defines `out`.
pub(crate) struct Fields {
    pub(crate) allocated: String,
    pub(crate) aligned: String,
    pub(crate) offset: String,
    pub(crate) sizes: Vec<String>,
    pub(crate) strides: Vec<String>,
}

pub(crate) fn build_desc(cx: &mut FnCx<'_>, f: Fields, out: ValueId) {
    let rank = f.sizes.len();
    let ty = desc_type(rank);
    let mut parts = vec![
        (format!("ptr {}", f.allocated), "0".to_string()),
        (format!("ptr {}", f.aligned), "1".to_string()),
        (format!("i64 {}", f.offset), "2".to_string()),
    ];
    for (i, s) in f.sizes.iter().enumerate() {
        parts.push((format!("i64 {s}"), format!("3, {i}")));
    }
    for (i, s) in f.strides.iter().enumerate() {
        parts.push((format!("i64 {s}"), format!("4, {i}")));
    }
    let mut agg = String::from("poison");
    let n = parts.len();
    for (k, (val, path)) in parts.into_iter().enumerate() {
        let rhs = format!("insertvalue {ty} {agg}, {val}, {path}");
        if k + 1 == n {
            cx.define(out, rhs);
        } else {
            agg = cx.assign(rhs);
        }
    }
}

/// What addressing an element needs: the aligned pointer, the offset and
/// the strides (constants where the type knows them).
pub(crate) struct Addressing {
    aligned: String,
    offset: String,
    strides: Vec<String>,
    /// The element's type in memory (`types::storage`).
    elem: String,
    /// The value type and signedness of sub-byte integers stored as `i8`.
    narrow: Option<(String, bool)>,
}

pub(crate) fn addressing(cx: &mut FnCx<'_>, op: OpId, v: ValueId) -> Result<Addressing> {
    let mt = memref_type(cx.m, op, v)?;
    let (elem, ext) = storage(&mt.elem).map_err(|e| op_error(cx.m, op, e))?;
    let narrow = match ext {
        Some(signed) => Some((scalar(&mt.elem).map_err(|e| op_error(cx.m, op, e))?, signed)),
        None => None,
    };
    let d = desc_of(cx, op, v)?;
    let aligned = ev(cx, &d, "1");
    let offset = offset(cx, &d, mt);
    let strides = strides(cx, &d, mt);
    Ok(Addressing {
        aligned,
        offset,
        strides,
        elem,
        narrow,
    })
}

/// Pointer to the element at `idx`: `aligned + offset + Σ idx_i * stride_i`.
pub(crate) fn element_ptr(cx: &mut FnCx<'_>, a: &Addressing, idx: &[String]) -> String {
    let mut lin = a.offset.clone();
    for (i, s) in idx.iter().zip(&a.strides) {
        let t = mul(cx, i, s);
        lin = add(cx, &lin, &t);
    }
    if lin == "0" {
        return a.aligned.clone();
    }
    cx.assign(format!(
        "getelementptr {}, ptr {}, i64 {lin}",
        a.elem, a.aligned
    ))
}

fn index_texts(cx: &FnCx<'_>, vals: &[ValueId]) -> Result<Vec<String>> {
    vals.iter().map(|&v| cx.val(v)).collect()
}

fn load(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let src = cx.operand(op, 0)?;
    let r = cx.result(op, 0)?;
    let a = addressing(cx, op, src)?;
    let idx = index_texts(cx, cx.m.operands(op).get(1..).unwrap_or(&[]))?;
    let p = element_ptr(cx, &a, &idx);
    match &a.narrow {
        Some((ty, _)) => {
            let byte = cx.assign(format!("load i8, ptr {p}"));
            cx.define(r, format!("trunc i8 {byte} to {ty}"));
        }
        None => cx.define(r, format!("load {}, ptr {p}", a.elem)),
    }
    Ok(())
}

fn store(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let (val, dst) = (cx.operand(op, 0)?, cx.operand(op, 1)?);
    let a = addressing(cx, op, dst)?;
    let idx = index_texts(cx, cx.m.operands(op).get(2..).unwrap_or(&[]))?;
    let p = element_ptr(cx, &a, &idx);
    let mut v = cx.val(val)?;
    if let Some((ty, signed)) = &a.narrow {
        let ext = if *signed { "sext" } else { "zext" };
        v = cx.assign(format!("{ext} {ty} {v} to i8"));
    }
    cx.line(format!("store {} {v}, ptr {p}", a.elem));
    Ok(())
}

fn alignment_attr(cx: &FnCx<'_>, op: OpId) -> Result<Option<i64>> {
    match cx.m.attr(op, "alignment").and_then(Attribute::as_int) {
        None => Ok(None),
        Some(a) if a > 0 && (a & (a - 1)) == 0 => Ok(Some(a)),
        Some(a) => Err(op_error(
            cx.m,
            op,
            format!("alignment {a} is not a power of two"),
        )),
    }
}

/// Row-major strides of `sizes` (innermost 1).
pub(crate) fn row_major(cx: &mut FnCx<'_>, sizes: &[String]) -> Vec<String> {
    let mut out = vec![String::from("1"); sizes.len()];
    for i in (0..sizes.len().saturating_sub(1)).rev() {
        out[i] = mul(cx, &out[i + 1], &sizes[i + 1]);
    }
    out
}

/// `(max(bytes, 1) + align - 1) & -align`: a non-zero multiple of `align`.
fn round_up(cx: &mut FnCx<'_>, bytes: &str, align: i64) -> String {
    if let Some(b) = lit(bytes) {
        return (b.max(1).saturating_add(align - 1) & -align).to_string();
    }
    cx.mcx
        .declare("llvm.umax.i64", "declare i64 @llvm.umax.i64(i64, i64)");
    let nz = cx.assign(format!("call i64 @llvm.umax.i64(i64 {bytes}, i64 1)"));
    let up = cx.assign(format!("add i64 {nz}, {}", align - 1));
    cx.assign(format!("and i64 {up}, {}", -align))
}

/// Sizes from this many bytes up are refused before asking for memory: no
/// machine has them, and rounding such a size up would wrap.
const MAX_ALLOC_BYTES: u64 = 1 << 48;

/// The bytes of `esize`-byte elements over `sizes`, with whether the
/// product overflowed (`None`: it is known not to). Static sizes that
/// overflow are a compile error.
fn checked_bytes(
    cx: &mut FnCx<'_>,
    op: OpId,
    sizes: &[String],
    esize: u64,
) -> Result<(String, Option<String>)> {
    let mut acc = esize.to_string();
    let mut over: Option<String> = None;
    for s in sizes {
        if let (Some(a), Some(b)) = (lit(&acc), lit(s)) {
            let p = a.checked_mul(b).filter(|&p| p >= 0);
            acc = p
                .ok_or_else(|| op_error(cx.m, op, "the allocation size overflows"))?
                .to_string();
            continue;
        }
        cx.mcx.declare(
            "llvm.umul.with.overflow.i64",
            "declare { i64, i1 } @llvm.umul.with.overflow.i64(i64, i64)",
        );
        let r = cx.assign(format!(
            "call {{ i64, i1 }} @llvm.umul.with.overflow.i64(i64 {acc}, i64 {s})"
        ));
        acc = cx.assign(format!("extractvalue {{ i64, i1 }} {r}, 0"));
        let o = cx.assign(format!("extractvalue {{ i64, i1 }} {r}, 1"));
        over = Some(match over {
            Some(prev) => cx.assign(format!("or i1 {prev}, {o}")),
            None => o,
        });
    }
    Ok((acc, over))
}

/// `alloc(bytes)` (a call returning a pointer), checked: a size that
/// overflowed or is beyond any machine, or a null result, ends the run
/// with the out-of-memory message naming the op's node (`oom_exit`).
fn guarded(
    cx: &mut FnCx<'_>,
    op: OpId,
    (bytes, over): &(String, Option<String>),
    alloc: impl FnOnce(&mut FnCx<'_>, &str) -> String,
) -> String {
    let oom = cx.label();
    if lit(bytes).is_none() || over.is_some() {
        let huge = cx.assign(format!("icmp ugt i64 {bytes}, {MAX_ALLOC_BYTES}"));
        let bad = match over {
            Some(o) => cx.assign(format!("or i1 {huge}, {o}")),
            None => huge,
        };
        let fits = cx.label();
        cx.line(format!("br i1 {bad}, label %{oom}, label %{fits}"));
        cx.start_block(fits);
    }
    let p = alloc(cx, bytes);
    let null = cx.assign(format!("icmp eq ptr {p}, null"));
    let ok = cx.label();
    cx.line(format!("br i1 {null}, label %{oom}, label %{ok}"));
    cx.start_block(oom);
    oom_exit(cx, op);
    cx.start_block(ok);
    p
}

/// Prints `out of memory: ...` naming the op's ONNX node to stderr and
/// aborts: in a library, its wrapper turns that into an error return of
/// the call, which frees what the call allocated (capi).
fn oom_exit(cx: &mut FnCx<'_>, op: OpId) {
    let whom = match cx.m.loc(op) {
        ir::Location::Name(n) => format!("node '{n}'"),
        _ => "the model".to_string(),
    };
    let text = format!("out of memory: {whom} could not allocate a buffer\n");
    let s = cx.mcx.string(text.as_bytes());
    cx.mcx.declare("stderr", "@stderr = external global ptr");
    cx.mcx.declare("fputs", "declare i32 @fputs(ptr, ptr)");
    cx.mcx.declare("abort", "declare void @abort()");
    let err = cx.assign("load ptr, ptr @stderr");
    cx.assign(format!("call i32 @fputs(ptr {s}, ptr {err})"));
    cx.line("call void @abort()");
    cx.line("unreachable");
}

/// A heap block through the block cache (`alloc_cache`).
fn cached_alloc(cx: &mut FnCx<'_>, bytes: &str, align: i64) -> String {
    let rounded = round_up(cx, bytes, align);
    super::alloc_cache::ensure(cx.mcx);
    cx.assign(format!(
        "call ptr {}(i64 {align}, i64 {rounded})",
        super::alloc_cache::ALLOC
    ))
}

fn aligned_alloc(cx: &mut FnCx<'_>, bytes: &str, align: i64) -> String {
    let rounded = round_up(cx, bytes, align);
    cx.mcx
        .declare("aligned_alloc", "declare ptr @aligned_alloc(i64, i64)");
    cx.assign(format!(
        "call ptr @aligned_alloc(i64 {align}, i64 {rounded})"
    ))
}

fn alloc(cx: &mut FnCx<'_>, op: OpId, stack: bool) -> Result<()> {
    let m = cx.m;
    let r = cx.result(op, 0)?;
    let mt = memref_type(m, op, r)?;
    let esize = elem_size(&mt.elem).map_err(|e| op_error(m, op, e))?;
    let (elem, _) = storage(&mt.elem).map_err(|e| op_error(m, op, e))?;
    let mut dyn_sizes = m.operands(op).iter();
    let mut sizes = Vec::with_capacity(mt.rank());
    for &d in &mt.shape {
        if d == DYN {
            let v = dyn_sizes
                .next()
                .ok_or_else(|| op_error(m, op, "missing a dynamic size operand"))?;
            sizes.push(cx.val(*v)?);
        } else {
            sizes.push(d.to_string());
        }
    }
    let (strides, off, count) = match &mt.layout {
        Layout::Identity => {
            let strides = row_major(cx, &sizes);
            let count = sizes
                .iter()
                .fold(String::from("1"), |acc, s| mul(cx, &acc, s));
            (strides, 0, count)
        }
        Layout::Strided { offset, strides } => {
            if *offset == DYN || strides.contains(&DYN) || !mt.has_static_shape() {
                return Err(op_error(
                    m,
                    op,
                    "allocating a memref with a dynamic strided layout is not supported",
                ));
            }
            // Elements up to the farthest one the layout can address.
            let too_big = || op_error(m, op, "the allocation size overflows");
            let mut count = offset.checked_add(1).ok_or_else(too_big)?;
            for (&d, &s) in mt.shape.iter().zip(strides) {
                let reach = (d - 1).max(0).checked_mul(s).ok_or_else(too_big)?;
                count = count.checked_add(reach).ok_or_else(too_big)?;
            }
            if mt.shape.contains(&0) {
                count = 0;
            }
            (
                strides.iter().map(i64::to_string).collect(),
                *offset,
                count.to_string(),
            )
        }
    };
    let align = alignment_attr(cx, op)?;
    let p = if stack {
        let a = align.unwrap_or(16).max(esize as i64);
        cx.assign(format!("alloca {elem}, i64 {count}, align {a}"))
    } else {
        // A strided layout's reach is a static count; else the sizes.
        let factors = match mt.layout {
            Layout::Identity => sizes.clone(),
            Layout::Strided { .. } => vec![count.clone()],
        };
        let bytes = checked_bytes(cx, op, &factors, esize)?;
        let align = align.unwrap_or(HEAP_ALIGN).max(HEAP_ALIGN);
        guarded(cx, op, &bytes, |cx, b| cached_alloc(cx, b, align))
    };
    build_desc(
        cx,
        Fields {
            allocated: p.clone(),
            aligned: p,
            offset: off.to_string(),
            sizes,
            strides,
        },
        r,
    );
    Ok(())
}

fn dealloc(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let src = cx.operand(op, 0)?;
    let d = desc_of(cx, op, src)?;
    let p = ev(cx, &d, "0");
    super::alloc_cache::ensure(cx.mcx);
    cx.line(format!(
        "call void {}(ptr {p})",
        super::alloc_cache::RELEASE
    ));
    Ok(())
}

/// `realloc` keeps the data; when the new block is not aligned as our
/// buffers must be, it is moved to a fresh `aligned_alloc` block.
fn realloc(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let m = cx.m;
    let (src, r) = (cx.operand(op, 0)?, cx.result(op, 0)?);
    let mt = memref_type(m, op, r)?;
    let esize = elem_size(&mt.elem).map_err(|e| op_error(m, op, e))?;
    let n = match mt.shape.first() {
        Some(&d) if d != DYN => d.to_string(),
        _ => cx.val(cx.operand(op, 1)?)?,
    };
    let align = alignment_attr(cx, op)?
        .unwrap_or(HEAP_ALIGN)
        .max(HEAP_ALIGN);
    let d = desc_of(cx, op, src)?;
    let old = ev(cx, &d, "0");
    let checked = checked_bytes(cx, op, std::slice::from_ref(&n), esize)?;
    cx.mcx.declare("realloc", "declare ptr @realloc(ptr, i64)");
    // A failed realloc leaves `old` allocated (and tracked: capi frees it).
    let p = guarded(cx, op, &checked, |cx, b| {
        let rounded = round_up(cx, b, align);
        let p = cx.assign(format!("call ptr @realloc(ptr {old}, i64 {rounded})"));
        super::alloc_cache::ensure(cx.mcx);
        cx.line(format!(
            "call void {}(ptr {old}, ptr {p})",
            super::alloc_track::RETRACK
        ));
        p
    });
    let bytes = checked.0;
    let rounded = round_up(cx, &bytes, align);
    let pi = cx.assign(format!("ptrtoint ptr {p} to i64"));
    let mis = cx.assign(format!("and i64 {pi}, {}", align - 1));
    let ok = cx.assign(format!("icmp eq i64 {mis}, 0"));
    let (fix, done) = (cx.label(), cx.label());
    let from = cx.cur_label();
    cx.line(format!("br i1 {ok}, label %{done}, label %{fix}"));
    cx.start_block(fix.clone());
    let q = guarded(cx, op, &(bytes.clone(), None), |cx, b| {
        aligned_alloc(cx, b, align)
    });
    cx.mcx.declare(
        "llvm.memcpy.p0.p0.i64",
        "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)",
    );
    cx.line(format!(
        "call void @llvm.memcpy.p0.p0.i64(ptr {q}, ptr {p}, i64 {rounded}, i1 false)"
    ));
    cx.mcx.declare("free", "declare void @free(ptr)");
    cx.line(format!("call void @free(ptr {p})"));
    cx.line(format!(
        "call void {}(ptr {p}, ptr {q})",
        super::alloc_track::RETRACK
    ));
    cx.line(format!("br label %{done}"));
    let fix_end = cx.cur_label();
    cx.start_block(done);
    let np = cx.assign(format!("phi ptr [ {p}, %{from} ], [ {q}, %{fix_end} ]"));
    build_desc(
        cx,
        Fields {
            allocated: np.clone(),
            aligned: np,
            offset: "0".into(),
            sizes: vec![n],
            strides: vec!["1".into()],
        },
        r,
    );
    Ok(())
}

/// memcpy when both sides are contiguous row-major, else an element loop.
fn copy(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let m = cx.m;
    let (src, dst) = (cx.operand(op, 0)?, cx.operand(op, 1)?);
    let (smt, dmt) = (memref_type(m, op, src)?, memref_type(m, op, dst)?);
    let esize = elem_size(&smt.elem).map_err(|e| op_error(m, op, e))?;
    let sd = desc_of(cx, op, src)?;
    let n = sizes(cx, &sd, smt);
    let a = addressing(cx, op, src)?;
    let b = addressing(cx, op, dst)?;
    if smt.is_identity_layout() && dmt.is_identity_layout() {
        let count = n.iter().fold(String::from("1"), |acc, s| mul(cx, &acc, s));
        let bytes = mul(cx, &count, &esize.to_string());
        let zeros = vec![String::from("0"); n.len()];
        let (ps, pd) = (element_ptr(cx, &a, &zeros), element_ptr(cx, &b, &zeros));
        cx.mcx.declare(
            "llvm.memcpy.p0.p0.i64",
            "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)",
        );
        cx.line(format!(
            "call void @llvm.memcpy.p0.p0.i64(ptr {pd}, ptr {ps}, i64 {bytes}, i1 false)"
        ));
        return Ok(());
    }
    let mut ivs = Vec::new();
    loop_nest(cx, &n, &mut ivs, &mut |cx, idx| {
        let ps = element_ptr(cx, &a, idx);
        let v = cx.assign(format!("load {}, ptr {ps}", a.elem));
        let pd = element_ptr(cx, &b, idx);
        cx.line(format!("store {} {v}, ptr {pd}", b.elem));
    });
    Ok(())
}

/// Emits `for i0 < n0 { for i1 < n1 { ... body(i0, i1, ...) } }` as blocks.
pub(crate) fn loop_nest(
    cx: &mut FnCx<'_>,
    n: &[String],
    ivs: &mut Vec<String>,
    body: &mut dyn FnMut(&mut FnCx<'_>, &[String]),
) {
    let Some((bound, rest)) = n.split_first() else {
        body(cx, ivs);
        return;
    };
    let (head, inner, latch, exit) = (cx.label(), cx.label(), cx.label(), cx.label());
    let (iv, next) = (cx.tmp(), cx.tmp());
    let pre = cx.cur_label();
    cx.line(format!("br label %{head}"));
    cx.start_block(head.clone());
    cx.line(format!(
        "{iv} = phi i64 [ 0, %{pre} ], [ {next}, %{latch} ]"
    ));
    let c = cx.assign(format!("icmp slt i64 {iv}, {bound}"));
    cx.line(format!("br i1 {c}, label %{inner}, label %{exit}"));
    cx.start_block(inner);
    ivs.push(iv.clone());
    loop_nest(cx, rest, ivs, body);
    ivs.pop();
    cx.line(format!("br label %{latch}"));
    cx.start_block(latch);
    cx.line(format!("{next} = add i64 {iv}, 1"));
    cx.line(format!("br label %{head}"));
    cx.start_block(exit);
}

/// The integer value of `v` if an `arith.constant` defines it.
pub(crate) fn const_int(m: &Module, v: ValueId) -> Option<i64> {
    let d = m.defining_op(v)?;
    if !m.is(d, ArithOp::Constant) {
        return None;
    }
    match m.attr(d, "value")? {
        Attribute::Int(i, _) => Some(*i),
        _ => None,
    }
}

fn dim(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let m = cx.m;
    let (src, idx, r) = (cx.operand(op, 0)?, cx.operand(op, 1)?, cx.result(op, 0)?);
    let mt = memref_type(m, op, src)?;
    let d = desc_of(cx, op, src)?;
    if let Some(i) = const_int(m, idx) {
        let Some(&stat) = usize::try_from(i).ok().and_then(|i| mt.shape.get(i)) else {
            return Err(op_error(
                m,
                op,
                format!("index {i} is out of range for rank {}", mt.rank()),
            ));
        };
        if stat != DYN {
            cx.alias(r, stat.to_string());
        } else {
            cx.define(
                r,
                format!("extractvalue {} {}, 3, {i}", desc_type(d.rank), d.text),
            );
        }
        return Ok(());
    }
    // A dynamic index picks among the sizes with a select chain.
    let i = cx.val(idx)?;
    let all = sizes(cx, &d, mt);
    let mut acc = String::from("poison");
    for (k, s) in all.iter().enumerate().rev() {
        let is_k = cx.assign(format!("icmp eq i64 {i}, {k}"));
        if k == 0 {
            cx.define(r, format!("select i1 {is_k}, i64 {s}, i64 {acc}"));
            return Ok(());
        }
        acc = cx.assign(format!("select i1 {is_k}, i64 {s}, i64 {acc}"));
    }
    cx.alias(r, acc);
    Ok(())
}

fn get_global(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let m = cx.m;
    let r = cx.result(op, 0)?;
    let mt = memref_type(m, op, r)?;
    let name = m
        .attr(op, "name")
        .and_then(Attribute::as_symbol)
        .ok_or_else(|| op_error(m, op, "requires a 'name' symbol"))?;
    let (strides, off) = mt.strides_and_offset();
    if !mt.has_static_shape() || off == DYN || strides.contains(&DYN) {
        return Err(op_error(
            m,
            op,
            "a global must have a static shape and layout",
        ));
    }
    let g = match cx.mcx.sidecar.get(name) {
        Some(off) => format!(
            "getelementptr inbounds (i8, ptr @{}, i64 {off})",
            super::globals::WEIGHTS_SYM
        ),
        None => global_name(name),
    };
    build_desc(
        cx,
        Fields {
            allocated: g.clone(),
            aligned: g,
            offset: off.to_string(),
            sizes: mt.shape.iter().map(i64::to_string).collect(),
            strides: strides.iter().map(i64::to_string).collect(),
        },
        r,
    );
    Ok(())
}
