//! Attention, MultiHeadAttention, QAttention and EmbedLayerNormalization
//! (the transformer optimizer's fusions): projections by MatMul, then the
//! ONNX Attention op on 3-D inputs with the heads as attributes; masks
//! become an additive float mask, as onnxruntime applies them
//! (`mask_filter_value` where a key is masked).

use super::{f32_attr, Decomp, Res};
use ir::elements::DType;
use ir::{Attribute, Type, ValueId};
use onnx::OpKind;

impl Decomp<'_, '_, '_> {
    pub(super) fn heads(&self) -> Res<i64> {
        match self.int("num_heads", 0) {
            h if h > 0 => Ok(h),
            _ => Err(self.err(format!("'{}' needs num_heads > 0", self.node.op_type))),
        }
    }

    /// Refuses inputs past `n` (past state, extra biases) and outputs past
    /// the first (present state), which these decompositions do not make.
    fn only_inputs(&self, n: usize, what: &str) -> Res<()> {
        if let Some(i) = (n..self.inputs.len()).find(|&i| self.opt(i).is_some()) {
            return Err(self.err(format!(
                "'{}' with input {i} ({what}) is not supported",
                self.node.op_type
            )));
        }
        Ok(())
    }

    /// The static length of `v`'s dim `d`.
    pub(super) fn static_dim(&self, v: ValueId, d: usize) -> Option<i64> {
        let s = self.imp.m.value_type(v).shape()?;
        s.get(d).copied().filter(|&n| n >= 0)
    }

    /// Splits `v` along its last axis into pieces of the given sizes.
    pub(super) fn split_last(&mut self, v: ValueId, sizes: &[i64]) -> Res<Vec<ValueId>> {
        let split = self.i64s(sizes)?;
        let elem = self.elem(v);
        let axis = ("axis".to_string(), Attribute::i64(-1));
        self.op_n(
            OpKind::Split,
            vec![v, split],
            vec![axis],
            vec![elem; sizes.len()],
        )
    }

    /// `x @ w + bias` (bias optional).
    fn project(&mut self, x: ValueId, w: ValueId, bias: Option<ValueId>) -> Res<ValueId> {
        let y = self.op(OpKind::MatMul, vec![x, w], vec![])?;
        match bias {
            Some(b) => self.op(OpKind::Add, vec![y, b], vec![]),
            None => Ok(y),
        }
    }

    /// Attention's `scale` from the node's, when set (0 means the default).
    pub(super) fn scale_attr(&self) -> Option<(String, Attribute)> {
        let s = self.float("scale", 0.0);
        (s != 0.0).then(|| ("scale".to_string(), f32_attr(s)))
    }

    /// The Attention op of ONNX over 3-D q, k, v with `heads` heads.
    /// With `past` (key and value caches [B, H, P, head]): the output and
    /// the caches extended by this call's keys and values.
    fn attend(
        &mut self,
        qkv: [ValueId; 3],
        heads: i64,
        mask: Option<ValueId>,
        past: Option<[ValueId; 2]>,
    ) -> Res<Vec<ValueId>> {
        let mut attrs = vec![
            ("q_num_heads".to_string(), Attribute::i64(heads)),
            ("kv_num_heads".to_string(), Attribute::i64(heads)),
            (
                "is_causal".to_string(),
                Attribute::i64(self.int("unidirectional", 0)),
            ),
        ];
        attrs.extend(self.scale_attr());
        let mut operands = qkv.to_vec();
        let Some(past) = past else {
            operands.extend(mask);
            return Ok(vec![self.op(OpKind::Attention, operands, attrs)?]);
        };
        operands.push(self.or_none(mask)?);
        operands.extend(past);
        let elem = self.elem(qkv[0]);
        self.op_n(OpKind::Attention, operands, attrs, vec![elem; 3])
    }

    /// `0, 1, …, n - 1` for a 0-d i64 `n`.
    pub(super) fn range_to(&mut self, n: ValueId) -> Res<ValueId> {
        let zero = self.constant(DType::I64, vec![], &[0.0])?;
        let one = self.constant(DType::I64, vec![], &[1.0])?;
        self.op(OpKind::Range, vec![zero, n, one], vec![])
    }

    /// Dim `axis` of `v`, a 0-d i64.
    pub(super) fn dim_of(&mut self, v: ValueId, axis: i64) -> Res<ValueId> {
        let shape = self.op_as(OpKind::Shape, vec![v], vec![], Type::i64())?;
        let at = self.constant(DType::I64, vec![], &[axis as f64])?;
        self.op(OpKind::Gather, vec![shape, at], vec![])
    }

    /// The first key and the key past the last that a 1-D mask keeps, as
    /// [B, 1] columns: lengths [B] (start 0), or ends then starts [2B]
    /// (left and right padding). Appending B zeros and taking entries
    /// B..2B gives the starts of either form, with no branch on its length.
    fn key_bounds(&mut self, mask: ValueId, keys: ValueId) -> Res<[ValueId; 2]> {
        let to = ("to".to_string(), Attribute::i64(7));
        let mask = self.op_as(OpKind::Cast, vec![mask], vec![to], Type::i64())?;
        let batch = self.dim_of(keys, 0)?;
        let axes = self.i64s(&[0])?;
        let b1 = self.op(OpKind::Unsqueeze, vec![batch, axes], vec![])?;
        let b2 = self.op(OpKind::Add, vec![b1, b1], vec![])?;
        let zero = self.i64s(&[0])?;
        let end = self.op(OpKind::Slice, vec![mask, zero, b1], vec![])?;
        let zeros = self.op(OpKind::Sub, vec![end, end], vec![])?;
        let axis = ("axis".to_string(), Attribute::i64(0));
        let padded = self.op(OpKind::Concat, vec![mask, zeros], vec![axis])?;
        let start = self.op(OpKind::Slice, vec![padded, b1, b2], vec![])?;
        let axes = self.i64s(&[1])?;
        let mut out = [start, end];
        for v in &mut out {
            *v = self.op(OpKind::Unsqueeze, vec![*v, axes], vec![])?;
        }
        Ok(out)
    }

    /// An additive mask broadcast to [B, H, S, T] from onnxruntime's mask
    /// forms: 1-D key lengths [B] or ends and starts [2B] (over the past
    /// keys and the new ones: `past` is the past state and the axis of
    /// its length), a raw 0/1
    /// mask [B, T] or [B, S, T]; `keys` is the new [B, L, ...] keys.
    fn additive_mask(
        &mut self,
        mask: ValueId,
        (keys, past): (ValueId, Option<(ValueId, i64)>),
        like: ValueId,
    ) -> Res<ValueId> {
        let filter = self.float("mask_filter_value", -10000.0);
        let rank = self.rank(mask);
        let (add, lead) = match rank {
            Some(1) => {
                let mut t = self.dim_of(keys, 1)?;
                if let Some((p, axis)) = past {
                    let p = self.dim_of(p, axis)?;
                    t = self.op(OpKind::Add, vec![t, p], vec![])?;
                }
                let j = self.range_to(t)?;
                let [start, end] = self.key_bounds(mask, keys)?;
                let early = self.op_as(OpKind::Less, vec![j, start], vec![], Type::i1())?;
                let inside = self.op_as(OpKind::Less, vec![j, end], vec![], Type::i1())?;
                let (zero, masked) = (self.scalar(0.0, like)?, self.scalar(filter, like)?);
                let add = self.op(OpKind::Where, vec![inside, zero, masked], vec![])?;
                let add = self.op(OpKind::Where, vec![early, masked, add], vec![])?;
                (add, vec![1, 2])
            }
            Some(2) | Some(3) => {
                let to = ("to".to_string(), Attribute::i64(1));
                let m = self.op_as(OpKind::Cast, vec![mask], vec![to], Type::f32())?;
                let one = self.scalar(1.0, m)?;
                let off = self.op(OpKind::Sub, vec![one, m], vec![])?;
                let f = self.scalar(filter, m)?;
                let lead = if rank == Some(2) { vec![1, 2] } else { vec![1] };
                (self.op(OpKind::Mul, vec![off, f], vec![])?, lead)
            }
            _ => {
                return Err(self.err(format!(
                    "'{}' with a mask of rank {} is not supported (1-D lengths, 2-D or 3-D 0/1 masks are)",
                    self.node.op_type,
                    rank.map_or("unknown".into(), |r| r.to_string())
                )))
            }
        };
        let axes = self.i64s(&lead)?;
        self.op(OpKind::Unsqueeze, vec![add, axes], vec![])
    }

    /// The sum of two optional additive masks.
    fn add_masks(&mut self, a: Option<ValueId>, b: Option<ValueId>) -> Res<Option<ValueId>> {
        Ok(match (a, b) {
            (Some(a), Some(b)) => Some(self.op(OpKind::Add, vec![a, b], vec![])?),
            (a, b) => a.or(b),
        })
    }

    /// Attention after the QKV projection `qkv` ([B, S, Dq + Dk + Dv]),
    /// with the mask at input `mask_at` and the attention bias at
    /// `bias_at` (an additive [B|1, H|1, S, T] tensor) if any.
    fn attention_from_qkv(
        &mut self,
        qkv: ValueId,
        width: Option<i64>,
        (mask, bias_at): (Option<ValueId>, Option<usize>),
        past: Option<ValueId>,
    ) -> Res<Vec<Option<ValueId>>> {
        let heads = self.heads()?;
        let sizes: Vec<i64> = match self.attr("qkv_hidden_sizes") {
            Some(a) if a.ints.len() == 3 => a.ints.clone(),
            _ => match width {
                Some(w) if w % 3 == 0 => vec![w / 3; 3],
                _ => return Err(self.err(
                    "'Attention' needs a weight of static width (3 × hidden) or qkv_hidden_sizes"
                        .into(),
                )),
            },
        };
        let parts = self.split_last(qkv, &sizes)?;
        let [q, k, v] = <[ValueId; 3]>::try_from(parts)
            .map_err(|_| self.err("internal: Split did not give 3 parts".into()))?;
        // The past state [2, B, H, P, head]: lengths count its keys too.
        let past_len = past.map(|p| (p, 3));
        let padding = match mask {
            Some(m) => Some(self.additive_mask(m, (k, past_len), q)?),
            None => None,
        };
        let mask = self.add_masks(padding, bias_at.and_then(|i| self.opt(i)))?;
        let past = match past {
            Some(p) => Some(self.split_past(p)?),
            None => None,
        };
        let ys = self.attend([q, k, v], heads, mask, past)?;
        match ys.as_slice() {
            [y, pk, pv] => Ok(vec![Some(*y), Some(self.stack_present(*pk, *pv)?)]),
            _ => Ok(ys.into_iter().map(Some).collect()),
        }
    }

    /// [B, H, L, head] as [B, L, H × head].
    fn merge_heads(&mut self, t: ValueId) -> Res<ValueId> {
        let t = self.transpose(t, &[0, 2, 1, 3])?;
        let shape = self.i64s(&[0, 0, -1])?;
        self.op(OpKind::Reshape, vec![t, shape], vec![])
    }

    /// onnxruntime's past state [2, B, H, P, head] as key and value caches.
    fn split_past(&mut self, past: ValueId) -> Res<[ValueId; 2]> {
        let mut kv = [past; 2];
        for (i, slot) in kv.iter_mut().enumerate() {
            let index = self.constant(DType::I64, vec![], &[i as f64])?;
            let axis = ("axis".to_string(), Attribute::i64(0));
            *slot = self.op(OpKind::Gather, vec![past, index], vec![axis])?;
        }
        Ok(kv)
    }

    /// The present state [2, B, H, P + S, head] from the extended caches.
    fn stack_present(&mut self, key: ValueId, value: ValueId) -> Res<ValueId> {
        let mut parts = Vec::with_capacity(2);
        for v in [key, value] {
            let axes = self.i64s(&[0])?;
            parts.push(self.op(OpKind::Unsqueeze, vec![v, axes], vec![])?);
        }
        let axis = ("axis".to_string(), Attribute::i64(0));
        self.op(OpKind::Concat, parts, vec![axis])
    }

    /// com.microsoft Attention: input [B, S, In] times weights
    /// [In, Dq+Dk+Dv] plus bias, split, attended; mask_index as
    /// onnxruntime reads it; attention_bias (input 5) added.
    pub(super) fn attention(&mut self) -> Res<Vec<Option<ValueId>>> {
        self.refuse_attr("do_rotary", "rotary embeddings")?;
        let (x, w) = (self.input(0)?, self.input(1)?);
        let qkv = self.project(x, w, self.opt(2))?;
        let width = self.static_dim(w, 1);
        let shared = self.int("past_present_share_buffer", 0) != 0;
        let (past, mask) = (self.opt(4), self.opt(3));
        match (shared, past, self.opt(6)) {
            (true, Some(buffer), Some(len)) => {
                let past = self.buffer_prefix(buffer, len)?;
                let mask = match mask {
                    Some(m) => Some(self.mask_prefix(m, qkv, past)?),
                    None => None,
                };
                let mut ys = self.attention_from_qkv(qkv, width, (mask, Some(5)), Some(past))?;
                if let Some(Some(present)) = ys.get(1).copied() {
                    ys[1] = Some(self.write_into_buffer(present, buffer)?);
                }
                Ok(ys)
            }
            (false, _, None) => self.attention_from_qkv(qkv, width, (mask, Some(5)), past),
            _ => Err(self.err(
                "'Attention' takes past_sequence_length (input 6) with past_present_share_buffer = 1 and a past buffer, and only then"
                    .into(),
            )),
        }
    }

    /// The first `len` (past_sequence_length, a one-element int32)
    /// positions of a shared past buffer [2, B, H, M, head].
    fn buffer_prefix(&mut self, buffer: ValueId, len: ValueId) -> Res<ValueId> {
        let to = ("to".to_string(), Attribute::i64(7));
        let len = self.op_as(OpKind::Cast, vec![len], vec![to], Type::i64())?;
        let zero = self.i64s(&[0])?;
        self.slice_axis(buffer, (zero, len), 3)
    }

    /// `v[start..end]` along `axis`; the bounds are one-element or 0-d.
    pub(super) fn slice_axis(
        &mut self,
        v: ValueId,
        (start, end): (ValueId, ValueId),
        axis: i64,
    ) -> Res<ValueId> {
        let one = self.i64s(&[1])?;
        let start = self.op(OpKind::Reshape, vec![start, one], vec![])?;
        let end = self.op(OpKind::Reshape, vec![end, one], vec![])?;
        let axis = self.i64s(&[axis])?;
        self.op(OpKind::Slice, vec![v, start, end, axis], vec![])
    }

    /// A 2-D or 3-D mask over the shared buffer's M positions cut to the
    /// P + S keys attended (a mask over those alone is left whole).
    fn mask_prefix(&mut self, mask: ValueId, qkv: ValueId, past: ValueId) -> Res<ValueId> {
        let rank = self.rank(mask);
        if !matches!(rank, Some(2) | Some(3)) {
            return Ok(mask);
        }
        let (s, p) = (self.dim_of(qkv, 1)?, self.dim_of(past, 3)?);
        let total = self.op(OpKind::Add, vec![s, p], vec![])?;
        let zero = self.i64s(&[0])?;
        self.slice_axis(mask, (zero, total), rank.map_or(1, |r| r as i64 - 1))
    }

    /// The present state [2, B, H, P + S, head] written over the start of
    /// the shared buffer: onnxruntime's present is the buffer, its
    /// positions past P + S as the past held them.
    fn write_into_buffer(&mut self, present: ValueId, buffer: ValueId) -> Res<ValueId> {
        let filled = self.dim_of(present, 3)?;
        let end = self.i64s(&[i64::MAX])?;
        let rest = self.slice_axis(buffer, (filled, end), 3)?;
        let axis = ("axis".to_string(), Attribute::i64(3));
        self.op(OpKind::Concat, vec![present, rest], vec![axis])
    }

    /// MultiHeadAttention with separate query [B, S, D], key [B, L, D]
    /// and value [B, L, Dv]; bias [D + D + Dv] added to each;
    /// key_padding_mask (input 4) and attention_bias (input 5).
    pub(super) fn multi_head_attention(&mut self) -> Res<Vec<Option<ValueId>>> {
        self.only_inputs(8, "cache indirection")?;
        let [mut q, mut k, mut v] = self.mha_inputs()?;
        // Key and value given per head ([B, H, L, head], cross attention
        // over a cache) join the 3-D form; onnxruntime adds no bias there.
        let per_head = [k, v].map(|t| self.rank(t) == Some(4));
        if per_head == [true, true] && self.opt(3).is_none() {
            k = self.merge_heads(k)?;
            v = self.merge_heads(v)?;
        }
        if [q, k, v].iter().any(|&t| self.rank(t) != Some(3)) {
            return Err(self.err(
                "'MultiHeadAttention' takes 3-D [batch, sequence, hidden] query, key and value, 4-D [batch, heads, sequence, head] key and value without a bias, or packed [batch, sequence, heads, 3, head] query or [batch, sequence, heads, 2, head] key; these ranks are not one of them".into(),
            ));
        }
        let heads = self.heads()?;
        if let Some(bias) = self.opt(3) {
            let (d, dv) = (self.static_dim(q, 2), self.static_dim(v, 2));
            let (Some(d), Some(dv)) = (d, dv) else {
                return Err(
                    self.err("'MultiHeadAttention' with a bias needs static hidden sizes".into())
                );
            };
            let parts = self.split_last(bias, &[d, d, dv])?;
            q = self.op(OpKind::Add, vec![q, parts[0]], vec![])?;
            k = self.op(OpKind::Add, vec![k, parts[1]], vec![])?;
            v = self.op(OpKind::Add, vec![v, parts[2]], vec![])?;
        }
        // past_key [B, H, P, head]: lengths count its keys too.
        let past_len = self.opt(6).map(|p| (p, 2));
        let padding = match self.opt(4) {
            Some(m) => Some(self.additive_mask(m, (k, past_len), q)?),
            None => None,
        };
        let mask = self.add_masks(padding, self.opt(5))?;
        let past = match (self.opt(6), self.opt(7)) {
            (Some(pk), Some(pv)) => Some([pk, pv]),
            (None, None) => None,
            _ => {
                return Err(self.err(
                    "'MultiHeadAttention' needs both past_key and past_value, or neither".into(),
                ))
            }
        };
        let ys = self.attend([q, k, v], heads, mask, past)?;
        Ok(ys.into_iter().map(Some).collect())
    }

    /// Query, key and value; packed forms (the GPU providers'): query
    /// `[B, S, N, 3, H]` alone, or key `[B, L, N, 2, H]` without value,
    /// cut along axis 3 and merged to `[B, S, N·H]`.
    fn mha_inputs(&mut self) -> Res<[ValueId; 3]> {
        let q = self.input(0)?;
        match (self.opt(1), self.opt(2)) {
            (None, None) if self.rank(q) == Some(5) => {
                let [q, k, v] = self.unpack(q, 3)?[..] else {
                    return Err(self.err("internal: packed QKV without three parts".into()));
                };
                Ok([q, k, v])
            }
            (Some(kv), None) if self.rank(kv) == Some(5) => {
                let [k, v] = self.unpack(kv, 2)?[..] else {
                    return Err(self.err("internal: packed KV without two parts".into()));
                };
                Ok([q, k, v])
            }
            _ => Ok([q, self.input(1)?, self.input(2)?]),
        }
    }

    /// `[B, S, N, n, H]` as `n` tensors `[B, S, N·H]`.
    fn unpack(&mut self, packed: ValueId, n: i64) -> Res<Vec<ValueId>> {
        let shape = self.i64s(&[0, 0, -1])?;
        let parts = self.split_equal(packed, 3, n)?;
        parts
            .into_iter()
            .map(|p| self.op(OpKind::Reshape, vec![p, shape], vec![]))
            .collect()
    }

    /// QAttention: the QKV projection in integers (MatMulInteger of the
    /// quantized input and weight, scaled by their scales), then as
    /// Attention.
    pub(super) fn q_attention(&mut self) -> Res<Vec<Option<ValueId>>> {
        if self.opt(8).is_some() {
            return Err(self.err("'QAttention' with past state is not supported".into()));
        }
        let (x, w, bias) = (self.input(0)?, self.input(1)?, self.input(2)?);
        let (xs, ws) = (self.input(3)?, self.input(4)?);
        let (xz, wz) = (self.opt(6), self.opt(7));
        let acc = self.integer_sums(x, w, xz, wz)?;
        let acc = self.as_f32(acc)?;
        let scale = self.op(OpKind::Mul, vec![xs, ws], vec![])?;
        let qkv = self.op(OpKind::Mul, vec![acc, scale], vec![])?;
        let qkv = self.op(OpKind::Add, vec![qkv, bias], vec![])?;
        let width = self.static_dim(w, 1);
        self.attention_from_qkv(qkv, width, (self.opt(5), None), None)
    }

    /// EmbedLayerNormalization: word + position + segment embeddings,
    /// layer-normalized; the mask's per-batch sum as mask_index (int32);
    /// the embedding sum.
    pub(super) fn embed_layer_norm(&mut self) -> Res<Vec<Option<ValueId>>> {
        let ids = self.input(0)?;
        let (words, positions) = (self.input(2)?, self.input(3)?);
        let (gamma, beta) = (self.input(5)?, self.input(6)?);
        let axis0 = ("axis".to_string(), Attribute::i64(0));
        let mut sum = self.op(OpKind::Gather, vec![words, ids], vec![axis0.clone()])?;
        let position_ids = match self.opt(8) {
            Some(p) => p,
            None => {
                let s = self.dim_of(ids, 1)?;
                self.range_to(s)?
            }
        };
        let pos = self.op(
            OpKind::Gather,
            vec![positions, position_ids],
            vec![axis0.clone()],
        )?;
        sum = self.op(OpKind::Add, vec![sum, pos], vec![])?;
        if let (Some(seg_ids), Some(segs)) = (self.opt(1), self.opt(4)) {
            let seg = self.op(OpKind::Gather, vec![segs, seg_ids], vec![axis0])?;
            sum = self.op(OpKind::Add, vec![sum, seg], vec![])?;
        }
        let eps = (
            "epsilon".to_string(),
            f32_attr(self.float("epsilon", 1e-12)),
        );
        let axis = ("axis".to_string(), Attribute::i64(-1));
        let elem = self.elem(sum);
        let y = self.op_n(
            OpKind::LayerNormalization,
            vec![sum, gamma, beta],
            vec![axis, eps],
            vec![elem],
        )?;
        let mask_index = self.mask_index(ids)?;
        Ok(vec![y.first().copied(), Some(mask_index), Some(sum)])
    }

    /// The int32 count of each batch row of the mask (input 7), zeros
    /// without one.
    fn mask_index(&mut self, ids: ValueId) -> Res<ValueId> {
        let to_i32 = ("to".to_string(), Attribute::i64(6));
        let rows = match self.opt(7) {
            Some(m) => m,
            None => {
                let zero = self.scalar(0.0, ids)?;
                self.op(OpKind::Mul, vec![ids, zero], vec![])?
            }
        };
        let axes = self.i64s(&[1])?;
        let keep = ("keepdims".to_string(), Attribute::i64(0));
        let sum = self.op(OpKind::ReduceSum, vec![rows, axes], vec![keep])?;
        self.op_as(OpKind::Cast, vec![sum], vec![to_i32], Type::i(32))
    }
}
