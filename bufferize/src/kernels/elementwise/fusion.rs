//! Element-wise chains in one loop: an element-wise op whose only use is
//! an element-wise op of the same shape in the same block is not lowered
//! where it stands (`deferrable`); its consumer's loop computes it per
//! element from its own inputs (`Src::Fused`), so the chain reads memory
//! once and writes only its last result. Deferring moves the op's program
//! position to its consumer's, so no op between them takes the buffers of
//! its inputs in place.

use crate::convert::{is_strided_view, Lowering};
use crate::kernels::elementwise::{
    known_scalar, load_input, same_sized_dims, scalar_constants, Body,
};
use crate::kernels::{support::epilogue, support::scalar};
use ir::{Builder, Module, OpId, Result, Type, ValueId, DYN};
use onnx::OpKind;

/// Longest chain of deferred ops one loop computes: bounds the loop body
/// and the recursion that builds it (exported chains of thousands of
/// element-wise ops exist).
pub const MAX_CHAIN: u32 = 16;

/// The consumer that computes `op`, when `op` may be deferred into it, and
/// the length of the deferred chain that `op` then ends.
pub fn deferrable(cx: &Lowering, m: &Module, op: OpId) -> Option<(OpId, u32)> {
    (cx.ew_body)(OpKind::of(m, op)?)?;
    let below = m
        .operands(op)
        .iter()
        .filter_map(|&v| m.defining_op(v))
        .map(|d| cx.chain(d))
        .max()
        .unwrap_or(0);
    if below >= MAX_CHAIN {
        return None;
    }
    let r = m.result(op, 0)?;
    let [u] = m.uses(r) else {
        return None;
    };
    let user = u.op;
    let same_block = m.op_block(user) == m.op_block(op);
    if m.results(op).len() != 1 || !same_block || (cx.ew_body)(OpKind::of(m, user)?).is_none() {
        return None;
    }
    // A Conv adds that Add as a residual in its epilogue: it reads the
    // other operand's buffer.
    if epilogue::absorbs_residual(m, user) {
        return None;
    }
    let ty = m.value_type(r);
    let shape = ty.shape()?;
    let elem = ty.element_type();
    let plain = elem.is_int()
        || matches!(
            elem.float_kind(),
            Some(ir::types::FloatKind::F32 | ir::types::FloatKind::F64)
        );
    let user_shape = m.value_type(m.result(user, 0)?).shape()?;
    let rank = shape.len();
    // Proven the same size where dynamic (no runtime broadcast).
    let proven = |o: OpId, i: usize| {
        same_sized_dims(cx, m, o, i, rank)
            .iter()
            .zip(shape)
            .all(|(&same, &d)| same || d != DYN)
    };
    if !plain || user_shape != shape || !proven(user, u.index as usize) {
        return None;
    }
    let mut buffers = 0;
    for i in 0..m.operands(op).len() {
        if !cx.has_input(m, op, i) || known_scalar(m, op, i).is_some() {
            continue;
        }
        let v = m.operand(op, i)?;
        if m.value_type(v).shape()? != shape || !proven(op, i) {
            return None;
        }
        buffers += 1;
    }
    (buffers > 0).then_some((user, below + 1))
}

/// Where an element-wise loop reads one operand.
pub(super) enum Src {
    Buf(ValueId),
    Fused(Fused),
}

/// A deferred op computed in its consumer's loop: its body over its own
/// operands (single-element constants as numbers).
pub(super) struct Fused {
    op: OpId,
    body: Body,
    elem: Type,
    srcs: Vec<Src>,
    known: Vec<Option<ValueId>>,
}

impl Src {
    /// Operand `i` of `op`: its buffer, or its deferred producer.
    pub fn of(cx: &Lowering, b: &mut Builder<'_>, op: OpId, i: usize) -> Result<Src> {
        let deferred =
            b.m.operand(op, i)
                .and_then(|v| b.m.defining_op(v))
                .filter(|&d| cx.is_deferred(d));
        let Some(d) = deferred else {
            return Ok(Src::Buf(cx.input(b.m, op, i)?));
        };
        let body = OpKind::of(b.m, d).and_then(cx.ew_body).ok_or_else(|| {
            ir::dialects::op_error(b.m, d, "deferred op has no element-wise body")
        })?;
        let ids: Vec<usize> = (0..b.m.operands(d).len())
            .filter(|&j| cx.has_input(b.m, d, j))
            .collect();
        let srcs: Vec<Src> = ids
            .iter()
            .map(|&j| Src::of(cx, b, d, j))
            .collect::<Result<_>>()?;
        let leaves: Option<Vec<ValueId>> = srcs.iter().map(Src::leaf).collect();
        let leaves = leaves.ok_or_else(|| ir::dialects::op_error(b.m, d, "no buffer operand"))?;
        let known = scalar_constants(b, d, &ids, &leaves);
        let elem = crate::kernels::support::result_memref_type(b.m, d, 0)?
            .element_type()
            .clone();
        Ok(Src::Fused(Fused {
            op: d,
            body,
            elem,
            srcs,
            known,
        }))
    }

    /// A buffer of this operand's shape (its dims are the operand's).
    pub fn leaf(&self) -> Option<ValueId> {
        match self {
            Src::Buf(v) => Some(*v),
            Src::Fused(f) => f
                .srcs
                .iter()
                .zip(&f.known)
                .find(|(_, k)| k.is_none())
                .and_then(|(s, _)| s.leaf()),
        }
    }

    /// No buffer read is a strided view (flat indexing holds).
    pub fn contiguous(&self, m: &Module) -> bool {
        match self {
            Src::Buf(v) => !is_strided_view(m, *v),
            Src::Fused(f) => f
                .srcs
                .iter()
                .zip(&f.known)
                .all(|(s, k)| k.is_some() || s.contiguous(m)),
        }
    }

    /// The same reads through flat views of `total` elements.
    pub fn flat(self, b: &mut Builder<'_>, total: ValueId) -> Src {
        match self {
            Src::Buf(v) => Src::Buf(crate::kernels::linalg::gemm::flat(b, v, total)),
            Src::Fused(f) => {
                let srcs = f
                    .srcs
                    .into_iter()
                    .zip(&f.known)
                    .map(|(s, k)| if k.is_some() { s } else { s.flat(b, total) })
                    .collect();
                Src::Fused(Fused { srcs, ..f })
            }
        }
    }

    /// The operand's element at the output's `ivs` (`at`: the buffer's
    /// shape and runtime-one dims, shared by a fused op's inputs).
    pub fn eval(
        &self,
        b: &mut Builder<'_>,
        at: (&[i64], &[Option<ValueId>]),
        (ivs, out_shape, zero): (&[ValueId], &[i64], ValueId),
        err: &mut Option<ir::Diagnostic>,
    ) -> ValueId {
        match self {
            Src::Buf(v) => load_input(b, (*v, at.0, at.1), ivs, out_shape, zero),
            Src::Fused(f) => {
                let vals: Vec<ValueId> = f
                    .srcs
                    .iter()
                    .zip(&f.known)
                    .map(|(s, k)| k.unwrap_or_else(|| s.eval(b, at, (ivs, out_shape, zero), err)))
                    .collect();
                match (f.body)(b, f.op, &vals, &f.elem) {
                    Ok(r) if f.elem.is_float() => scalar::fcast(b, r, &f.elem),
                    Ok(r) => r,
                    Err(e) => {
                        *err = Some(e);
                        b.zero(&f.elem)
                    }
                }
            }
        }
    }
}
