//! The fusions onnxruntime's transformer optimizer writes for its GPU
//! providers (diffusion U-Nets): BiasAdd, BiasSplitGelu and NhwcConv.
//! onnxruntime's CPU provider has no kernel for them; here they are the
//! ops they compute, so a model optimized for a GPU compiles as it is.

use super::{Decomp, Res};
use ir::{Attribute, ValueId};
use onnx::OpKind;

impl Decomp<'_, '_, '_> {
    /// `X + bias + skip`.
    pub(super) fn bias_add(&mut self) -> Res<ValueId> {
        let x = self.biased(0, 1)?;
        let skip = self.input(2)?;
        self.op(OpKind::Add, vec![x, skip], vec![])
    }

    /// `X + bias` cut in halves along the last axis: left · Gelu(right).
    pub(super) fn bias_split_gelu(&mut self) -> Res<ValueId> {
        let x = self.biased(0, 1)?;
        let [left, right] = self.split_equal(x, -1, 2)?[..] else {
            return Err(self.err("internal: Split without two halves".into()));
        };
        let g = self.gelu(right, "none")?;
        self.op(OpKind::Mul, vec![left, g], vec![])
    }

    /// `v` split into `n` equal parts along `axis` (negative from the end).
    pub(super) fn split_equal(&mut self, v: ValueId, axis: i64, n: i64) -> Res<Vec<ValueId>> {
        let elem = self.elem(v);
        let attrs = vec![
            ("axis".to_string(), Attribute::i64(axis)),
            ("num_outputs".to_string(), Attribute::i64(n)),
        ];
        self.op_n(OpKind::Split, vec![v], attrs, vec![elem; n as usize])
    }

    /// A Conv over channels-last X and W (`[M, k…, C/group]`, the
    /// optimizer's transposed weights), its result channels-last: the
    /// Transposes around it cancel against the ones the optimizer put
    /// around the node.
    pub(super) fn nhwc_conv(&mut self) -> Res<ValueId> {
        let (x, w) = (self.input(0)?, self.input(1)?);
        let rank = self.rank(x).filter(|&r| r >= 3 && self.rank(w) == Some(r));
        let Some(r) = rank.map(|r| r as i64) else {
            return Err(self.err("'NhwcConv' needs X and W of one known rank, at least 3".into()));
        };
        // Channels from the last axis to axis 1, and back.
        let to_first: Vec<i64> = [0, r - 1].into_iter().chain(1..r - 1).collect();
        let to_last: Vec<i64> = [0].into_iter().chain(2..r).chain([1]).collect();
        let x = self.transpose(x, &to_first)?;
        let w = self.transpose(w, &to_first)?;
        let mut operands = vec![x, w];
        operands.extend(self.opt(2));
        let attrs = self.attrs_except(&|_| false)?;
        let y = self.op(OpKind::Conv, operands, attrs)?;
        self.transpose(y, &to_last)
    }
}
