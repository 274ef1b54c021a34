//! onnxruntime's operators of its language-model builder that are ops
//! onnxc has under other names or computes from its own ops:
//! SimplifiedLayerNormalization (RMS normalization, written in the
//! default domain), RotaryEmbedding (ONNX's, with onnxruntime's input
//! order and its position offset) and GatherBlockQuantized (rows of a
//! block-quantized embedding, dequantized after the gather: only the rows
//! taken are ever dequantized).

use super::{f32_attr, Decomp, Res};
use ir::elements::DType;
use ir::types::FloatKind;
use ir::{Attribute, Type, ValueId};
use onnx::OpKind;

impl Decomp<'_, '_, '_> {
    /// `RMSNormalization(x, scale)`; the inverse deviation output is not
    /// computed.
    pub(super) fn simplified_layer_norm(&mut self) -> Res<Vec<Option<ValueId>>> {
        let (x, scale) = (self.input(0)?, self.input(1)?);
        let attrs = vec![
            ("axis".to_string(), Attribute::i64(self.int("axis", -1))),
            ("epsilon".to_string(), f32_attr(self.float("epsilon", 1e-5))),
        ];
        let y = self.op(OpKind::RMSNormalization, vec![x, scale], attrs)?;
        Ok(vec![Some(y), None])
    }

    /// ONNX's RotaryEmbedding: inputs (x, position_ids, cos, sin) become
    /// (x, cos, sin, positions); a 1-D position_ids `[offset]` means
    /// positions `offset + s` for every batch row.
    pub(super) fn rotary_embedding(&mut self) -> Res<ValueId> {
        self.refuse_attr("is_packed_batching", "packed batching")?;
        if self.float("scale", 1.0) != 1.0 {
            return Err(
                self.err("'RotaryEmbedding' with a scale other than 1 is not supported".into())
            );
        }
        let x = self.input(0)?;
        let (cos, sin) = (self.input(2)?, self.input(3)?);
        let mut pos = self.input(1)?;
        if self.rank(pos) == Some(1) {
            pos = self.offset_positions(x, pos)?;
        }
        let mut attrs = vec![
            (
                "interleaved".to_string(),
                Attribute::i64(self.int("interleaved", 0)),
            ),
            (
                "rotary_embedding_dim".to_string(),
                Attribute::i64(self.int("rotary_embedding_dim", 0)),
            ),
        ];
        if let Some(h) = self.attr("num_heads").map(|a| a.i).filter(|&h| h > 0) {
            attrs.push(("num_heads".to_string(), Attribute::i64(h)));
        }
        self.op(OpKind::RotaryEmbedding, vec![x, cos, sin, pos], attrs)
    }

    /// `[batch, seq]` positions `offset + s` for input `x` (`[B, S, ·]` or
    /// `[B, H, S, D]`).
    fn offset_positions(&mut self, x: ValueId, offset: ValueId) -> Res<ValueId> {
        let seq_axis = match self.rank(x) {
            Some(3) => 1,
            Some(4) => 2,
            _ => return Err(self.err("'RotaryEmbedding' needs a 3-D or 4-D input".into())),
        };
        let (batch, seq) = (self.dim_of(x, 0)?, self.dim_of(x, seq_axis)?);
        let steps = self.range_to(seq)?;
        let at = self.op_as(OpKind::Add, vec![steps, offset], vec![], Type::i64())?;
        let axes = self.i64s(&[0])?;
        let batch = self.op(OpKind::Unsqueeze, vec![batch, axes], vec![])?;
        let seq = self.op(OpKind::Unsqueeze, vec![seq, axes], vec![])?;
        let shape = self.concat_i64(batch, seq)?;
        self.op_as(OpKind::Expand, vec![at, shape], vec![], Type::i64())
    }

    /// Rows `indices` of a block-quantized matrix (uint8 `data [rows,
    /// D·bits/8]`, codes low bits first, quantized in blocks along D):
    /// gathered, unpacked, then `(q - zp) · scale` per block.
    pub(super) fn gather_block_quantized(&mut self) -> Res<ValueId> {
        let (data, indices, scales) = (self.input(0)?, self.input(1)?, self.input(2)?);
        let bits = self.int("bits", 4);
        let block = self.int("block_size", 128);
        if self.int("gather_axis", 0) != 0 || !matches!(self.int("quantize_axis", 1), 1 | -1) {
            return Err(self.err("'GatherBlockQuantized' gathers rows (axis 0) of data quantized along its last axis only".into()));
        }
        if !matches!(bits, 4 | 8) || self.elem(data) != Type::ui(8) {
            return Err(
                self.err("'GatherBlockQuantized' needs uint8 data of 4- or 8-bit codes".into())
            );
        }
        let dims = self.imp.m.value_type(data).shape().map(<[i64]>::to_vec);
        let Some(&[_, packed]) = dims.as_deref() else {
            return Err(self.err("'GatherBlockQuantized' needs 2-D data of known width".into()));
        };
        let width = packed * 8 / bits;
        if packed <= 0 || block <= 0 || width % block != 0 {
            return Err(self.err(format!(
                "'GatherBlockQuantized': the row width {width} is not a multiple of block_size {block}"
            )));
        }
        let axis0 = vec![("axis".to_string(), Attribute::i64(0))];
        let rows = self.op(OpKind::Gather, vec![data, indices], axis0.clone())?;
        let codes = self.unpacked(rows, bits, packed)?;
        let blocks = width / block;
        let lead = self.op_as(OpKind::Shape, vec![indices], vec![], Type::i64())?;
        let grouped_shape = self.i64s(&[blocks, block])?;
        let grouped_shape = self.concat_i64(lead, grouped_shape)?;
        let codes = self.op(OpKind::Reshape, vec![codes, grouped_shape], vec![])?;
        let elem = self.elem(scales);
        let to = self.cast_to(&elem)?;
        let q = self.op_as(OpKind::Cast, vec![codes], vec![to.clone()], elem.clone())?;
        let zp = match self.opt(3) {
            None => self.scalar(f64::from(1u32 << (bits - 1)), scales)?,
            Some(z) => {
                let z_packed = self.last_dim(z)?;
                let z = self.op(OpKind::Gather, vec![z, indices], axis0.clone())?;
                let z = self.unpacked(z, bits, z_packed)?;
                let z = self.first_columns(z, blocks)?;
                let z = self.op_as(OpKind::Cast, vec![z], vec![to], elem.clone())?;
                self.last_axis_unsqueezed(z)?
            }
        };
        let s = self.op(OpKind::Gather, vec![scales, indices], axis0)?;
        let s = self.last_axis_unsqueezed(s)?;
        let centered = self.op(OpKind::Sub, vec![q, zp], vec![])?;
        let y = self.op(OpKind::Mul, vec![centered, s], vec![])?;
        let out_shape = self.i64s(&[width])?;
        let out_shape = self.concat_i64(lead, out_shape)?;
        self.op(OpKind::Reshape, vec![y, out_shape], vec![])
    }

    /// uint8 `v [..., n]` as its codes `[..., n · 8 / bits]` (low bits
    /// first); `n` is static (a 0-size gather leaves nothing to infer a
    /// `-1` from).
    fn unpacked(&mut self, v: ValueId, bits: i64, n: i64) -> Res<ValueId> {
        if bits == 8 {
            return Ok(v);
        }
        let mask = self.constant(DType::U8, vec![], &[15.0])?;
        let four = self.constant(DType::U8, vec![], &[4.0])?;
        let lo = self.op(OpKind::BitwiseAnd, vec![v, mask], vec![])?;
        let right = vec![("direction".to_string(), Attribute::string("RIGHT"))];
        let hi = self.op(OpKind::BitShift, vec![v, four], right)?;
        let lo = self.last_axis_unsqueezed(lo)?;
        let hi = self.last_axis_unsqueezed(hi)?;
        let last = vec![("axis".to_string(), Attribute::i64(-1))];
        let pairs = self.op(OpKind::Concat, vec![lo, hi], last)?;
        // [..., n, 2] → [..., 2n]: keep all dims but the last two.
        let shape = self.op_as(OpKind::Shape, vec![v], vec![], Type::i64())?;
        let (starts, ends) = (self.i64s(&[0])?, self.i64s(&[-1])?);
        let lead = self.op_as(
            OpKind::Slice,
            vec![shape, starts, ends],
            vec![],
            Type::i64(),
        )?;
        let width = self.i64s(&[n * 8 / bits])?;
        let flat = self.concat_i64(lead, width)?;
        self.op(OpKind::Reshape, vec![pairs, flat], vec![])
    }

    /// The static size of `v`'s last axis.
    fn last_dim(&self, v: ValueId) -> Res<i64> {
        let dims = self.imp.m.value_type(v).shape().map(<[i64]>::to_vec);
        match dims.as_deref().and_then(<[i64]>::last) {
            Some(&d) if d >= 0 => Ok(d),
            _ => Err(self.err("'GatherBlockQuantized' needs zero points of known shape".into())),
        }
    }

    /// The first `n` entries of `v`'s last axis.
    fn first_columns(&mut self, v: ValueId, n: i64) -> Res<ValueId> {
        let (starts, ends, axes) = (self.i64s(&[0])?, self.i64s(&[n])?, self.i64s(&[-1])?);
        self.op(OpKind::Slice, vec![v, starts, ends, axes], vec![])
    }

    fn last_axis_unsqueezed(&mut self, v: ValueId) -> Res<ValueId> {
        let axes = self.i64s(&[-1])?;
        self.op(OpKind::Unsqueeze, vec![v, axes], vec![])
    }

    fn concat_i64(&mut self, a: ValueId, b: ValueId) -> Res<ValueId> {
        let axis = vec![("axis".to_string(), Attribute::i64(0))];
        self.op_as(OpKind::Concat, vec![a, b], axis, Type::i64())
    }
}

impl Decomp<'_, '_, '_> {
    /// Cast's `to` for the float type `elem` (the scales' type).
    fn cast_to(&self, elem: &Type) -> Res<(String, Attribute)> {
        let code = match elem.float_kind() {
            Some(FloatKind::F32) => 1,
            Some(FloatKind::F16) => 10,
            Some(FloatKind::BF16) => 16,
            _ => return Err(self.err(format!("'GatherBlockQuantized' with scales of type {elem}"))),
        };
        Ok(("to".to_string(), Attribute::i64(code)))
    }
}
