//! What the kernels share: result buffers, constant operands, shapes,
//! per-level calls and vector helpers, the checks a kernel emits, scalar
//! builders and the epilogues fused into GEMMs. Kernels sit on this; it
//! calls no kernel.

pub mod checks;
pub mod epilogue;
pub mod index;
pub mod scalar;
pub mod scan_rows;
pub mod views;

use crate::convert::{memref_type, Lowering};
use ir::dialects::op_error;
use ir::{Attribute, Builder, Module, OpId, Result, Type, ValueId, DYN};
use onnx::{ops, OpKind as K};

/// The memref type of result `i`.
pub fn result_memref_type(m: &Module, op: OpId, i: usize) -> Result<Type> {
    let r = m
        .result(op, i)
        .ok_or_else(|| op_error(m, op, format!("missing result #{i}")))?;
    memref_type(m, op, m.value_type(r))
}

/// The static shape (`DYN` for dynamic dims) of result `i`, which must be
/// ranked: when it is not, `what` (an operand's length, say) decides the
/// rank at run time, which a memref cannot express.
pub fn ranked_result(m: &Module, op: OpId, i: usize, what: &str) -> Result<Vec<i64>> {
    let r = m
        .result(op, i)
        .ok_or_else(|| op_error(m, op, format!("missing result #{i}")))?;
    match m.value_type(r).shape() {
        Some(s) => Ok(s.to_vec()),
        None => Err(op_error(
            m,
            op,
            format!("{what} determines the result rank and must be known at compile time"),
        )),
    }
}

/// Allocates the buffer of result `i` given every dim's size.
pub fn alloc_result(b: &mut Builder<'_>, op: OpId, i: usize, dims: &[ValueId]) -> Result<ValueId> {
    let ty = result_memref_type(b.m, op, i)?;
    let shape = ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    if shape.len() != dims.len() {
        return Err(op_error(
            b.m,
            op,
            "result rank differs from the computed shape",
        ));
    }
    Ok(crate::convert::alloc_dims(b, &ty, dims))
}

/// A fresh buffer of `elem` with dims `sizes`: the ones that are constants
/// are static in its type.
pub fn alloc_sized(b: &mut Builder<'_>, elem: &Type, sizes: &[ValueId]) -> ValueId {
    let shape: Vec<i64> = sizes
        .iter()
        .map(|&v| b.index_value(v).filter(|&d| d >= 0).unwrap_or(DYN))
        .collect();
    crate::convert::alloc_dims(b, &Type::memref(shape, elem.clone()), sizes)
}

/// Static shape of a memref value (`DYN` for dynamic dims).
pub fn shape_of(m: &Module, v: ValueId) -> Vec<i64> {
    m.value_type(v)
        .shape()
        .map(<[i64]>::to_vec)
        .unwrap_or_default()
}

pub fn elem_of(m: &Module, v: ValueId) -> Type {
    m.value_type(v).element_type().clone()
}

/// Axis `a` of a rank-`rank` value, an error when out of range.
pub fn axis(m: &Module, op: OpId, a: i64, rank: usize) -> Result<usize> {
    onnx::axis::normalize(a, rank)
        .ok_or_else(|| op_error(m, op, format!("axis {a} out of range for rank {rank}")))
}

/// The elements of operand `i` when it comes from `onnx.Constant`.
pub fn constant_elements(m: &Module, op: OpId, i: usize) -> Option<ir::elements::Elements> {
    let def = onnx::defined_by(m, m.operand(op, i)?, K::Constant)?;
    ops::Constant::of(m, def).value().cloned()
}

/// Constant `weights` in the layout a kernel reads, as a new 1-D global
/// of `len` elements of their dtype. `pack` appends them, given the
/// weights' bytes, when the global is written out: the packed copy is not
/// held while the module is compiled.
pub fn packed_global(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    (weights, len): (ir::elements::Elements, usize),
    pack: impl Fn(&[u8], &mut Vec<u8>) + Send + Sync + 'static,
) -> Option<(ValueId, i64)> {
    let len = i64::try_from(len).ok()?;
    let dtype = weights.dtype();
    let fill: ir::elements::FillFn =
        std::sync::Arc::new(move |out| pack(&weights.to_contiguous_bytes(), out));
    let e = ir::elements::Elements::generated(dtype, vec![len], fill).ok()?;
    Some((cx.global(b, &e), len))
}

/// Constant integer values of operand `i` when it comes from `onnx.Constant`.
pub fn constant_ints(m: &Module, op: OpId, i: usize) -> Option<Vec<i64>> {
    let e = constant_elements(m, op, i)?;
    Some(e.iter().map(|w| w.i64()).collect())
}

/// Constant float values of operand `i` when it comes from `onnx.Constant`.
pub fn constant_floats(m: &Module, op: OpId, i: usize) -> Option<Vec<f64>> {
    let e = constant_elements(m, op, i)?;
    Some(e.iter().map(|w| w.f64()).collect())
}

/// A private function `name(inputs)` without results at the end of the
/// module (shared kernels such as the GEMM): a builder at its entry block
/// and its arguments.
pub fn private_func<'a>(
    m: &'a mut Module,
    name: &str,
    inputs: Vec<Type>,
) -> (Builder<'a>, Vec<ValueId>) {
    let body = m.body();
    let mut fb = Builder::new(m, ir::InsertPoint::End(body));
    let (f, entry) = fb.func(name, inputs, vec![]);
    fb.m.set_attr(f, "sym_visibility", Attribute::string("private"));
    let args = fb.m.block_args(entry).to_vec();
    (Builder::at_end(fb.m, entry), args)
}

/// Calls a kernel built once per level of `levels` (widest first; the
/// last is taken whatever the level): on first use `NAME_vL` for each,
/// its body written by `body(builder, params, level)` for that level's
/// vector width and built for its CPU (`func::TARGET_CPU`, so that
/// `multiversion` leaves it alone), then the call of the one the running
/// CPU has.
pub fn call_per_level(
    b: &mut Builder<'_>,
    (name, args): (&str, &[ValueId]),
    levels: &[ir::dialects::func::X86Level],
    body: &dyn Fn(&mut Builder<'_>, Vec<ValueId>, &ir::dialects::func::X86Level),
) {
    use ir::dialects::func;
    let types: Vec<Type> = args.iter().map(|&a| b.m.value_type(a).clone()).collect();
    let mut variants = Vec::new();
    // The baseline first, so the module reads from the plain code up.
    for l in levels.iter().rev() {
        let variant = func::level_variant(name, l.level);
        if b.m.lookup_symbol(&variant).is_none() {
            let (mut fb, params) = private_func(b.m, &variant, types.clone());
            if let Some(f) = fb.m.lookup_symbol(&variant) {
                fb.m.set_attr(f, func::TARGET_CPU, Attribute::string(l.cpu));
            }
            body(&mut fb, params, l);
            fb.ret(&[]);
        }
        variants.insert(0, (l.level, variant));
    }
    b.call_for_cpu_level(&variants, args);
}

/// The type of a view like `t` at any offset and outer strides (the last
/// stays 1; `t` itself when not a memref).
pub fn any_layout_type(t: &Type) -> Type {
    let Some(mt) = t.as_memref() else {
        return t.clone();
    };
    let rank = mt.shape.len();
    let strides: Vec<i64> = (0..rank)
        .map(|d| if d + 1 == rank { 1 } else { ir::DYN })
        .collect();
    Type::memref_strided(mt.shape.clone(), mt.elem.clone(), ir::DYN, strides)
}

/// `v` as a view of any offset and outer strides: the output a kernel
/// function takes (the GEMM's flat C, a window kernel's image), so that
/// the deallocation stage may pass a slot of a larger buffer (a Concat's
/// input written in place).
pub fn any_layout(b: &mut Builder<'_>, v: ValueId) -> ValueId {
    let ty = any_layout_type(b.m.value_type(v));
    if ty == *b.m.value_type(v) {
        return v;
    }
    b.memref_cast(v, ty)
}

/// `__onnxc_PREFIX_HASH`: a kernel's symbol from what its body depends
/// on (`key`) and its arguments' types.
pub fn kernel_symbol(b: &Builder<'_>, prefix: &str, key: &str, args: &[ValueId]) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    for &a in args {
        b.m.value_type(a).to_string().hash(&mut h);
    }
    format!("__onnxc_{prefix}_{:016x}", h.finish())
}

/// A symbol-name fragment: the type with every non-alphanumeric character
/// as `_`.
pub fn type_tag(t: &Type) -> String {
    t.to_string()
        .replace(|c: char| !c.is_ascii_alphanumeric(), "_")
}

/// `v` converted to `to` and stored at `dst[idx]`; a failed conversion is
/// kept in `err` (loop bodies are closures that cannot return one).
#[allow(clippy::too_many_arguments)]
pub fn store_converted(
    b: &mut Builder<'_>,
    op: OpId,
    v: ValueId,
    to: &Type,
    dst: ValueId,
    idx: &[ValueId],
    err: &mut Option<ir::Diagnostic>,
) {
    match scalar::convert(b, op, v, to) {
        Ok(r) => b.store(r, dst, idx),
        Err(e) => *err = Some(e),
    }
}

/// The results, or the first error a loop body recorded.
pub fn finish(err: Option<ir::Diagnostic>, out: Vec<ValueId>) -> Result<Vec<ValueId>> {
    match err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Lanes of `at + offsets[l]` (`lanes` of `i64`) inside `[0, len)`.
pub(crate) fn lanes_inside(
    b: &mut Builder<'_>,
    at: ValueId,
    offsets: ValueId,
    len: ValueId,
    lanes: i64,
) -> ValueId {
    let at = b.index_cast(at, Type::i64());
    let at = b.broadcast(at, lanes);
    let pos = b.addi(at, offsets);
    let len = b.index_cast(len, Type::i64());
    let len = b.broadcast(len, lanes);
    let zero = b.constant_like(pos, 0.0);
    let lo = b.cmp(ir::builder::Cmp::Ge, pos, zero);
    let hi = b.cmp(ir::builder::Cmp::Lt, pos, len);
    b.andi(lo, hi)
}

/// `x[start..start + n]` folded in vectors of `lanes`: each vector mapped
/// by `f`, combined into a vector accumulator by `step` from `init` (a
/// scalar; the masked tail's off lanes take it too), and the lanes then
/// combined by `lanes_kind`. A sum carried from element to element would
/// be one add per element in a dependency chain; a vector of partial
/// results is `lanes` independent ones.
pub(crate) fn vector_fold(
    b: &mut Builder<'_>,
    (x, start, n): (ValueId, ValueId, ValueId),
    (lanes, init): (i64, ValueId),
    f: &dyn Fn(&mut Builder<'_>, ValueId) -> ValueId,
    step: &dyn Fn(&mut Builder<'_>, ValueId, ValueId) -> ValueId,
    lanes_kind: ir::builder::Reduce,
) -> ValueId {
    let (zero, l) = (b.const_index(0), b.const_index(lanes));
    let whole = b.floordivsi(n, l);
    let whole = b.muli(whole, l);
    let vinit = b.broadcast(init, lanes);
    let lp = b.scf_for(zero, whole, l, &[vinit], |b, j, acc| {
        let at = b.addi(start, j);
        let v = b.vload(x, &[at], lanes);
        let y = f(b, v);
        vec![step(b, acc[0], y)]
    });
    let left = b.subi(n, whole);
    let mask = b.create_mask(left, lanes);
    let at = b.addi(start, whole);
    let v = b.masked_load(x, &[at], mask, vinit);
    let y = f(b, v);
    let y = b.select(mask, y, vinit);
    let acc = step(b, b.m.results(lp)[0], y);
    b.reduction(lanes_kind, acc)
}

/// Lanes of a vector of `elem` in `bits`, for the element types whose
/// vector max/add/div the target does natively.
pub(crate) fn vector_lanes(elem: &Type, bits: u32) -> i64 {
    match elem.bit_width() {
        Some(w @ (32 | 64)) if elem.is_float() => i64::from(bits / w),
        _ => 0,
    }
}

/// The element of a scalar (or one-element) parameter, or element `i` of
/// a per-channel one, converted to `to`.
pub(crate) fn scalar_at(
    b: &mut Builder<'_>,
    op: OpId,
    p: ValueId,
    i: Option<ValueId>,
    to: &Type,
) -> Result<ValueId> {
    let shape = shape_of(b.m, p);
    let idx: Vec<ValueId> = match (shape.as_slice(), i) {
        ([n], Some(i)) if *n != 1 => vec![i],
        _ => shape.iter().map(|_| b.const_index(0)).collect(),
    };
    let v = b.load(p, &idx);
    scalar::convert(b, op, v, to)
}
