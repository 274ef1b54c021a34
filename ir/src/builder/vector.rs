//! Typed builders for `vector` ops.

use super::Builder;
use crate::attr::Attribute;
use crate::dialects::vector::kind_attr;
use crate::module::ValueId;
use crate::ops::{VectorOp, X86VectorOp};
use crate::types::Type;
use std::sync::Arc;

/// The combining function of [`Builder::reduction`].
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Reduce {
    Add,
    Mul,
    MinUi,
    MinSi,
    MinimumF,
    MaxUi,
    MaxSi,
    MaximumF,
    And,
    Or,
}

impl Reduce {
    pub fn name(self) -> &'static str {
        crate::dialects::vector::REDUCTION_KINDS[self as usize]
    }
}

impl Builder<'_> {
    /// `vector.load m[idx] : vector<n x elem>`.
    pub fn vload(&mut self, m: ValueId, idx: &[ValueId], n: i64) -> ValueId {
        let elem = self.m.value_type(m).element_type().clone();
        let mut operands = Vec::with_capacity(idx.len() + 1);
        operands.push(m);
        operands.extend_from_slice(idx);
        self.op1(VectorOp::Load, &operands, Type::vector(n, elem), &[])
    }
    /// `vector.store v, m[idx]`.
    pub fn vstore(&mut self, v: ValueId, m: ValueId, idx: &[ValueId]) {
        let mut operands = Vec::with_capacity(idx.len() + 2);
        operands.extend([v, m]);
        operands.extend_from_slice(idx);
        self.op(VectorOp::Store, &operands, &[], &[]);
    }
    /// `vector.maskedload m[idx], mask, pass_thru`: lanes off in `mask`
    /// are not read and take `pass_thru`'s value.
    pub fn masked_load(
        &mut self,
        m: ValueId,
        idx: &[ValueId],
        mask: ValueId,
        pass_thru: ValueId,
    ) -> ValueId {
        let ty = self.m.value_type(pass_thru).clone();
        let mut operands = Vec::with_capacity(idx.len() + 3);
        operands.push(m);
        operands.extend_from_slice(idx);
        operands.extend([mask, pass_thru]);
        self.op1(VectorOp::Maskedload, &operands, ty, &[])
    }
    /// `vector.maskedstore m[idx], mask, v`: only lanes on in `mask`.
    pub fn masked_store(&mut self, v: ValueId, m: ValueId, idx: &[ValueId], mask: ValueId) {
        let mut operands = Vec::with_capacity(idx.len() + 3);
        operands.push(m);
        operands.extend_from_slice(idx);
        operands.extend([mask, v]);
        self.op(VectorOp::Maskedstore, &operands, &[], &[]);
    }
    /// `vector.gather m[idx] [offsets], mask, pass_thru`: lane `i` reads
    /// `m[idx + offsets[i]]` where `mask` is on.
    pub fn gather(
        &mut self,
        m: ValueId,
        idx: &[ValueId],
        offsets: ValueId,
        mask: ValueId,
        pass_thru: ValueId,
    ) -> ValueId {
        let ty = self.m.value_type(pass_thru).clone();
        let mut operands = Vec::with_capacity(idx.len() + 4);
        operands.push(m);
        operands.extend_from_slice(idx);
        operands.extend([offsets, mask, pass_thru]);
        self.op1(VectorOp::Gather, &operands, ty, &[])
    }
    /// A mask with lanes `0..n` on, of `lanes` lanes.
    pub fn create_mask(&mut self, n: ValueId, lanes: i64) -> ValueId {
        self.op1(
            VectorOp::CreateMask,
            &[n],
            Type::vector(lanes, Type::i1()),
            &[],
        )
    }
    /// `[first, first + step, ...]` in `n` lanes of `i64` (offsets for
    /// gathers, lane numbers for masks).
    pub fn i64_lanes(&mut self, first: i64, step: i64, n: i64) -> ValueId {
        let zero = self.const_int(0, Type::i64());
        let mut v = self.broadcast(zero, n);
        for l in 0..n {
            let x = self.const_int(first + l * step, Type::i64());
            v = self.insert(x, v, l);
        }
        v
    }
    /// `x` in every lane of a vector of `n`.
    pub fn broadcast(&mut self, x: ValueId, n: i64) -> ValueId {
        let elem = self.m.value_type(x).clone();
        self.op1(VectorOp::Broadcast, &[x], Type::vector(n, elem), &[])
    }
    /// `a * b + c` lane-wise, fused.
    pub fn vfma(&mut self, a: ValueId, b: ValueId, c: ValueId) -> ValueId {
        self.same(VectorOp::Fma, &[a, b, c])
    }
    /// The lanes of `v` combined into one scalar.
    pub fn reduction(&mut self, kind: Reduce, v: ValueId) -> ValueId {
        let elem = self.m.value_type(v).element_type().clone();
        let attrs = [("kind", kind_attr(kind.name()))];
        self.op1(VectorOp::Reduction, &[v], elem, &attrs)
    }
    /// Lane `pos` of `v`.
    pub fn extract(&mut self, v: ValueId, pos: i64) -> ValueId {
        let elem = self.m.value_type(v).element_type().clone();
        let attrs = [("static_position", Attribute::i64_array(&[pos]))];
        self.op1(VectorOp::Extract, &[v], elem, &attrs)
    }
    /// `v` with lane `pos` replaced by `x`.
    pub fn insert(&mut self, x: ValueId, v: ValueId, pos: i64) -> ValueId {
        let ty = self.m.value_type(v).clone();
        let attrs = [("static_position", Attribute::i64_array(&[pos]))];
        self.op1(VectorOp::Insert, &[x, v], ty, &attrs)
    }
    /// Lanes of `a` then `b` picked by `mask`.
    pub fn shuffle(&mut self, a: ValueId, b: ValueId, mask: &[i64]) -> ValueId {
        let elem = self.m.value_type(a).element_type().clone();
        let list: Vec<Attribute> = mask.iter().map(|&i| Attribute::i64(i)).collect();
        let attrs = [("mask", Attribute::Array(Arc::from(list)))];
        let n = i64::try_from(mask.len()).unwrap_or(i64::MAX);
        self.op1(VectorOp::Shuffle, &[a, b], Type::vector(n, elem), &attrs)
    }
    /// The bits of `v` as a vector of `n` lanes of `elem`.
    pub fn vbitcast(&mut self, v: ValueId, n: i64, elem: Type) -> ValueId {
        self.op1(VectorOp::Bitcast, &[v], Type::vector(n, elem), &[])
    }
    /// `x86vector.vpdpbusd acc, u, s`: `acc` plus, per i32 lane, the four
    /// products of `u`'s unsigned bytes by `s`'s signed bytes.
    pub fn vpdpbusd(&mut self, acc: ValueId, u: ValueId, s: ValueId) -> ValueId {
        self.same(X86VectorOp::Vpdpbusd, &[acc, u, s])
    }
    /// `x86vector.pmaddwd x, y`: per i32 lane, the sum of the products of
    /// its two i16 lanes of `x` and `y` (vectors of `2n` i16 → `n` i32).
    pub fn pmaddwd(&mut self, x: ValueId, y: ValueId) -> ValueId {
        let n = self.m.value_type(x).as_vector().map_or(2, |v| v.len()) / 2;
        self.op1(
            X86VectorOp::Pmaddwd,
            &[x, y],
            Type::vector(n, Type::i(32)),
            &[],
        )
    }
}
