//! `vector` ops: loads and stores as LLVM vector loads (masked ones as
//! `llvm.masked.*`), broadcast as insert + zero shuffle, `vector.fma` as
//! `llvm.fmuladd` (fused where the target has an FMA unit; a multiply and
//! an add otherwise, never a libm call), reductions as
//! `llvm.vector.reduce.*` (float sums with `reassoc`: lanes may be added
//! in any order, which is what a vectorized sum means).

use super::memref::{addressing, element_ptr};
use super::types::{overload_suffix, scalar};
use super::FnCx;
use ir::dialects::op_error;
use ir::dialects::vector::{position, reduction_kind};
use ir::{OpId, Result, ValueId, VectorOp};

pub(crate) fn emit(cx: &mut FnCx<'_>, op: OpId, which: VectorOp) -> Result<()> {
    use VectorOp as V;
    match which {
        V::Load => load(cx, op),
        V::Store => store(cx, op),
        V::Maskedload => masked_load(cx, op),
        V::Maskedstore => masked_store(cx, op),
        V::Gather => gather(cx, op),
        V::Broadcast | V::Splat => broadcast(cx, op),
        V::Fma => fma(cx, op),
        V::Reduction => reduction(cx, op),
        V::CreateMask => create_mask(cx, op),
        V::Extract => extract(cx, op),
        V::Insert => insert(cx, op),
        V::Shuffle => shuffle(cx, op),
        V::Bitcast => bitcast(cx, op),
    }
}

fn lanes(cx: &FnCx<'_>, op: OpId, v: ValueId) -> Result<i64> {
    cx.m.value_type(v)
        .as_vector()
        .map(ir::types::VectorType::len)
        .ok_or_else(|| op_error(cx.m, op, "expected a vector"))
}

/// The element pointer of `base[idx]` (the base is operand `at`, the
/// indices follow it up to `rank_end`).
fn pointer(cx: &mut FnCx<'_>, op: OpId, at: usize, rank_end: usize) -> Result<String> {
    let base = cx.operand(op, at)?;
    let a = addressing(cx, op, base)?;
    let idx: Vec<String> =
        cx.m.operands(op)
            .get(at + 1..rank_end)
            .unwrap_or(&[])
            .iter()
            .map(|&v| cx.val(v))
            .collect::<Result<_>>()?;
    Ok(element_ptr(cx, &a, &idx))
}

/// Alignment of one element (what any index guarantees).
fn align(cx: &FnCx<'_>, op: OpId, v: ValueId) -> Result<u64> {
    let t = cx.m.value_type(v).element_type();
    // LLVM packs such vectors' elements in memory; ours take a byte each.
    if t.int_width().is_some_and(|w| (2..8).contains(&w)) {
        return Err(op_error(
            cx.m,
            op,
            format!("vectors of {t} are unsupported in codegen"),
        ));
    }
    super::types::elem_size(t).map_err(|e| op_error(cx.m, op, e))
}

fn load(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let n = cx.m.operands(op).len();
    let p = pointer(cx, op, 0, n)?;
    let r = cx.result(op, 0)?;
    let vt = cx.vty(op, r)?;
    let al = align(cx, op, r)?;
    cx.define(r, format!("load {vt}, ptr {p}, align {al}"));
    Ok(())
}

fn store(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let n = cx.m.operands(op).len();
    let v = cx.operand(op, 0)?;
    let p = pointer(cx, op, 1, n)?;
    let vt = cx.vty(op, v)?;
    let x = cx.val(v)?;
    let al = align(cx, op, v)?;
    cx.line(format!("store {vt} {x}, ptr {p}, align {al}"));
    Ok(())
}

fn masked_load(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let n = cx.m.operands(op).len();
    let (mask, pass) = (cx.operand(op, n - 2)?, cx.operand(op, n - 1)?);
    let p = pointer(cx, op, 0, n - 2)?;
    let r = cx.result(op, 0)?;
    let (vt, mt) = (cx.vty(op, r)?, cx.vty(op, mask)?);
    let suffix = overload_suffix(cx.m.value_type(r)).map_err(|e| op_error(cx.m, op, e))?;
    let f = format!("llvm.masked.load.{suffix}.p0");
    cx.mcx.declare(
        &f,
        &format!("declare {vt} @{f}(ptr, i32 immarg, {mt}, {vt})"),
    );
    let al = align(cx, op, r)?;
    let (m, x) = (cx.val(mask)?, cx.val(pass)?);
    cx.define(
        r,
        format!("call {vt} @{f}(ptr {p}, i32 {al}, {mt} {m}, {vt} {x})"),
    );
    Ok(())
}

fn masked_store(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let n = cx.m.operands(op).len();
    let (mask, v) = (cx.operand(op, n - 2)?, cx.operand(op, n - 1)?);
    let p = pointer(cx, op, 0, n - 2)?;
    let (vt, mt) = (cx.vty(op, v)?, cx.vty(op, mask)?);
    let suffix = overload_suffix(cx.m.value_type(v)).map_err(|e| op_error(cx.m, op, e))?;
    let f = format!("llvm.masked.store.{suffix}.p0");
    cx.mcx.declare(
        &f,
        &format!("declare void @{f}({vt}, ptr, i32 immarg, {mt})"),
    );
    let al = align(cx, op, v)?;
    let (m, x) = (cx.val(mask)?, cx.val(v)?);
    cx.line(format!(
        "call void @{f}({vt} {x}, ptr {p}, i32 {al}, {mt} {m})"
    ));
    Ok(())
}

/// `x` in every lane of the vector type of `r`.
fn splat(cx: &mut FnCx<'_>, op: OpId, x: &str, r: ValueId) -> Result<String> {
    let n = lanes(cx, op, r)?;
    let et = scalar(cx.m.value_type(r).element_type()).map_err(|e| op_error(cx.m, op, e))?;
    let one = cx.assign(format!("insertelement <1 x {et}> poison, {et} {x}, i64 0"));
    Ok(format!(
        "shufflevector <1 x {et}> {one}, <1 x {et}> poison, <{n} x i32> zeroinitializer"
    ))
}

fn broadcast(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let r = cx.result(op, 0)?;
    let x = cx.val(cx.operand(op, 0)?)?;
    let rhs = splat(cx, op, &x, r)?;
    cx.define(r, rhs);
    Ok(())
}

fn fma(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let r = cx.result(op, 0)?;
    let suffix = overload_suffix(cx.m.value_type(r)).map_err(|e| op_error(cx.m, op, e))?;
    same_type_call(cx, op, &format!("llvm.fmuladd.{suffix}"))
}

/// `r = call @f(operands...)` where the operands and the result share one
/// type, declaring `f`.
fn same_type_call(cx: &mut FnCx<'_>, op: OpId, f: &str) -> Result<()> {
    let r = cx.result(op, 0)?;
    let vt = cx.vty(op, r)?;
    let a: Vec<String> =
        cx.m.operands(op)
            .iter()
            .map(|&v| cx.val(v).map(|x| format!("{vt} {x}")))
            .collect::<Result<_>>()?;
    let types = vec![vt.as_str(); a.len()].join(", ");
    cx.mcx.declare(f, &format!("declare {vt} @{f}({types})"));
    cx.define(r, format!("call {vt} @{f}({})", a.join(", ")));
    Ok(())
}

fn bitcast(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let (src, r) = (cx.operand(op, 0)?, cx.result(op, 0)?);
    let (from, to) = (cx.vty(op, src)?, cx.vty(op, r)?);
    let x = cx.val(src)?;
    cx.define(r, format!("bitcast {from} {x} to {to}"));
    Ok(())
}

/// `x86vector.vpdpbusd` as its LLVM intrinsic (bufferize writes the op only
/// for targets with AVX-512 VNNI or AVX-VNNI).
pub(crate) fn vpdpbusd(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let r = cx.result(op, 0)?;
    let bits = 32 * lanes(cx, op, r)?;
    same_type_call(cx, op, &format!("llvm.x86.avx512.vpdpbusd.{bits}"))
}

/// `x86vector.pmaddwd` as SSE2's 128-bit intrinsic per quarter or half
/// of the operands, the results concatenated: that runs on every x86-64
/// CPU, and LLVM joins the parts into one AVX2 or AVX-512 `vpmaddwd` in
/// functions built for those.
pub(crate) fn pmaddwd(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let r = cx.result(op, 0)?;
    let n = lanes(cx, op, r)?;
    let (x, y) = (cx.operand(op, 0)?, cx.operand(op, 1)?);
    let xt = cx.vty(op, x)?;
    let (x, y) = (cx.val(x)?, cx.val(y)?);
    let f = "llvm.x86.sse2.pmadd.wd";
    cx.mcx
        .declare(f, &format!("declare <4 x i32> @{f}(<8 x i16>, <8 x i16>)"));
    let indices = |from: i64, count: i64| {
        (from..from + count)
            .map(|i| format!("i32 {i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    for part in 0..n / 4 {
        let idx = indices(8 * part, 8);
        let a = cx.assign(format!(
            "shufflevector {xt} {x}, {xt} poison, <8 x i32> <{idx}>"
        ));
        let b = cx.assign(format!(
            "shufflevector {xt} {y}, {xt} poison, <8 x i32> <{idx}>"
        ));
        parts.push(cx.assign(format!("call <4 x i32> @{f}(<8 x i16> {a}, <8 x i16> {b})")));
    }
    // Concatenated pairwise: 4 lanes to 8 to 16.
    let mut width = 4;
    while parts.len() > 1 {
        let t = format!("<{width} x i32>");
        let idx = indices(0, 2 * width);
        parts = parts
            .chunks(2)
            .map(|p| match p {
                [a, b] => cx.assign(format!(
                    "shufflevector {t} {a}, {t} {b}, <{} x i32> <{idx}>",
                    2 * width
                )),
                [a] => a.clone(),
                _ => String::new(),
            })
            .collect();
        width *= 2;
    }
    let joined = parts.pop().unwrap_or_default();
    cx.alias(r, joined);
    Ok(())
}

fn reduction(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let v = cx.operand(op, 0)?;
    let r = cx.result(op, 0)?;
    let vt = cx.vty(op, v)?;
    let et = cx.vty(op, r)?;
    let float = cx.m.value_type(r).is_float();
    let kind = reduction_kind(cx.m, op).ok_or_else(|| op_error(cx.m, op, "bad kind"))?;
    let (name, start) = match (kind, float) {
        ("add", true) => ("fadd", Some("-0.0")),
        ("mul", true) => ("fmul", Some("1.0")),
        ("maximumf", true) => ("fmaximum", None),
        ("minimumf", true) => ("fminimum", None),
        ("add", false) => ("add", None),
        ("mul", false) => ("mul", None),
        ("and", false) => ("and", None),
        ("or", false) => ("or", None),
        ("maxsi", false) => ("smax", None),
        ("minsi", false) => ("smin", None),
        ("maxui", false) => ("umax", None),
        ("minui", false) => ("umin", None),
        _ => {
            return Err(op_error(
                cx.m,
                op,
                format!("no {kind} reduction of this type"),
            ))
        }
    };
    let suffix = overload_suffix(cx.m.value_type(v)).map_err(|e| op_error(cx.m, op, e))?;
    let f = format!("llvm.vector.reduce.{name}.{suffix}");
    let x = cx.val(v)?;
    match start {
        Some(s) => {
            cx.mcx
                .declare(&f, &format!("declare {et} @{f}({et}, {vt})"));
            cx.define(r, format!("call reassoc {et} @{f}({et} {s}, {vt} {x})"));
        }
        None => {
            cx.mcx.declare(&f, &format!("declare {et} @{f}({vt})"));
            cx.define(r, format!("call {et} @{f}({vt} {x})"));
        }
    }
    Ok(())
}

/// Lanes `0..n` on: `<0, 1, ...> < splat(n)`.
fn create_mask(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let r = cx.result(op, 0)?;
    let n = lanes(cx, op, r)?;
    let bound = cx.val(cx.operand(op, 0)?)?;
    let one = cx.assign(format!(
        "insertelement <1 x i64> poison, i64 {bound}, i64 0"
    ));
    let all = cx.assign(format!(
        "shufflevector <1 x i64> {one}, <1 x i64> poison, <{n} x i32> zeroinitializer"
    ));
    let iota: Vec<String> = (0..n).map(|i| format!("i64 {i}")).collect();
    cx.define(
        r,
        format!("icmp slt <{n} x i64> <{}>, {all}", iota.join(", ")),
    );
    Ok(())
}

fn extract(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let v = cx.operand(op, 0)?;
    let r = cx.result(op, 0)?;
    let p = position(cx.m, op).ok_or_else(|| op_error(cx.m, op, "bad position"))?;
    let vt = cx.vty(op, v)?;
    let x = cx.val(v)?;
    cx.define(r, format!("extractelement {vt} {x}, i64 {p}"));
    Ok(())
}

fn insert(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let (s, v) = (cx.operand(op, 0)?, cx.operand(op, 1)?);
    let r = cx.result(op, 0)?;
    let p = position(cx.m, op).ok_or_else(|| op_error(cx.m, op, "bad position"))?;
    let (vt, et) = (cx.vty(op, v)?, cx.vty(op, s)?);
    let (x, y) = (cx.val(v)?, cx.val(s)?);
    cx.define(r, format!("insertelement {vt} {x}, {et} {y}, i64 {p}"));
    Ok(())
}

fn shuffle(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let (a, b) = (cx.operand(op, 0)?, cx.operand(op, 1)?);
    let r = cx.result(op, 0)?;
    let mask =
        cx.m.attr(op, "mask")
            .and_then(ir::Attribute::as_i64_list)
            .ok_or_else(|| op_error(cx.m, op, "bad mask"))?;
    let (at, bt) = (cx.vty(op, a)?, cx.vty(op, b)?);
    if at != bt {
        // LLVM shuffles two vectors of one type.
        return Err(op_error(
            cx.m,
            op,
            "shuffle operands must have one type in codegen",
        ));
    }
    let (x, y) = (cx.val(a)?, cx.val(b)?);
    let items: Vec<String> = mask.iter().map(|i| format!("i32 {i}")).collect();
    cx.define(
        r,
        format!(
            "shufflevector {at} {x}, {bt} {y}, <{} x i32> <{}>",
            mask.len(),
            items.join(", ")
        ),
    );
    Ok(())
}

/// Lane pointers `base[idx] + offsets`, then `llvm.masked.gather`.
fn gather(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let n = cx.m.operands(op).len();
    let (offs, mask, pass) = (
        cx.operand(op, n - 3)?,
        cx.operand(op, n - 2)?,
        cx.operand(op, n - 1)?,
    );
    let p = pointer(cx, op, 0, n - 3)?;
    let r = cx.result(op, 0)?;
    let lanes = lanes(cx, op, r)?;
    let (vt, mt, it) = (cx.vty(op, r)?, cx.vty(op, mask)?, cx.vty(op, offs)?);
    let et = scalar(cx.m.value_type(r).element_type()).map_err(|e| op_error(cx.m, op, e))?;
    let o = cx.val(offs)?;
    let ptrs = cx.assign(format!("getelementptr {et}, ptr {p}, {it} {o}"));
    let suffix = overload_suffix(cx.m.value_type(r)).map_err(|e| op_error(cx.m, op, e))?;
    let f = format!("llvm.masked.gather.{suffix}.v{lanes}p0");
    let pt = format!("<{lanes} x ptr>");
    cx.mcx.declare(
        &f,
        &format!("declare {vt} @{f}({pt}, i32 immarg, {mt}, {vt})"),
    );
    let al = align(cx, op, r)?;
    let (m, x) = (cx.val(mask)?, cx.val(pass)?);
    cx.define(
        r,
        format!("call {vt} @{f}({pt} {ptrs}, i32 {al}, {mt} {m}, {vt} {x})"),
    );
    Ok(())
}
