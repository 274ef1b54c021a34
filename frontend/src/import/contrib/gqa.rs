//! GroupQueryAttention, the attention of onnxruntime's model builder, as
//! ONNX ops. Each batch row `b` has a past length `p_b`
//! (`seqlens_k[b] + 1 - S`, or 0 on the first prompt, when `S` equals
//! `total_sequence_length`):
//! - q and k are rotated (do_rotary) at positions `p_b + s`, or at
//!   position_ids (whose first element is the offset on a first prompt);
//! - the new keys and values are written into the cache at rows
//!   `p_b .. p_b + S` (TensorScatter); the present cache is as long as the past
//!   one or `total_sequence_length`, whichever is longer;
//! - ONNX Attention reads the first `total_sequence_length` cache rows,
//!   admitting keys up to `p_b + s` (causal, and within local_window_size)
//!   or below `p_b + S` (causal = 0), plus attention_bias: its own causal
//!   frontier and window with `nonpad_kv_seqlen = p_b + S`; with head_sink
//!   or smooth_softmax, one more key, of zeros, and a mask holding its
//!   logit.
//!
//! Cache rows past a batch row's new keys keep what the past held, as with
//! onnxruntime's shared buffer (with separate buffers it zeroes them); no
//! output depends on them.

use super::{f32_attr, Decomp, Res};
use ir::elements::DType;
use ir::{Attribute, Type, ValueId};
use onnx::OpKind;

/// Where this call's rows go: each batch row's past length `[B]`, the
/// new length and the total (0-d), all i64; whether this is a first
/// prompt (0-d bool).
struct CacheAt {
    past: ValueId,
    seq: ValueId,
    total: ValueId,
    first: ValueId,
}

const INPUT_POSITION_IDS: usize = 9;
const INPUT_BIAS: usize = 10;
const INPUT_SINK: usize = 11;

impl Decomp<'_, '_, '_> {
    pub(super) fn group_query_attention(&mut self) -> Res<Vec<Option<ValueId>>> {
        self.refuse_gqa_forms()?;
        let q_heads = self.heads()?;
        let kv_heads = match self.int("kv_num_heads", 0) {
            h if h > 0 && q_heads % h == 0 => h,
            h => return Err(self.err(format!(
                "'GroupQueryAttention' needs kv_num_heads > 0 dividing num_heads ({q_heads}), not {h}"
            ))),
        };
        let [q, k, v] = self.gqa_inputs(q_heads, kv_heads)?;
        let at = self.cache_at(q)?;
        let (q, k) = match self.int("do_rotary", 0) {
            0 => (q, k),
            _ => (
                self.gqa_rotary(q, q_heads, &at)?,
                self.gqa_rotary(k, kv_heads, &at)?,
            ),
        };
        let q4 = self.heads_first(q, q_heads)?;
        let k4 = self.heads_first(k, kv_heads)?;
        let v4 = self.heads_first(v, kv_heads)?;
        let present_k = self.write_cache(k4, self.opt(3), &at)?;
        let present_v = self.write_cache(v4, self.opt(4), &at)?;
        let zero = self.constant(DType::I64, vec![], &[0.0])?;
        let keys = self.slice_axis(present_k, (zero, at.total), 2)?;
        let values = self.slice_axis(present_v, (zero, at.total), 2)?;
        let y = self.gqa_attend(q4, [keys, values], &at)?;
        let y = self.transpose(y, &[0, 2, 1, 3])?;
        let shape = self.op_as(OpKind::Shape, vec![q], vec![], Type::i64())?;
        let y = self.op(OpKind::Reshape, vec![y, shape], vec![])?;
        Ok(vec![Some(y), Some(present_k), Some(present_v), None])
    }

    /// Refuses the quantized caches, the windowed cache, q/k norms and
    /// output_qk, which this import does not compute.
    fn refuse_gqa_forms(&self) -> Res<()> {
        let refused = [
            (12, "k_scale (a quantized KV cache)"),
            (13, "v_scale (a quantized KV cache)"),
            (14, "q_norm_weight"),
            (15, "k_norm_weight"),
        ];
        if let Some((i, what)) = refused.iter().find(|(i, _)| self.opt(*i).is_some()) {
            return Err(self.err(format!(
                "'GroupQueryAttention' with input {i}, {what}, is not supported"
            )));
        }
        self.refuse_attr("kv_cache_bit_width", "a quantized KV cache")?;
        self.refuse_attr("sliding_window_cache", "a window-sized cache")?;
        self.refuse_attr("qk_output", "the QK output")?;
        for name in ["k_quant_type", "v_quant_type"] {
            if self.string(name).is_some_and(|s| s != "NONE") {
                return Err(self.err(format!(
                    "'GroupQueryAttention' with a quantized KV cache ('{name}') is not supported"
                )));
            }
        }
        if self.int("causal", 1) == 0 && self.int("local_window_size", -1) > 0 {
            return Err(
                self.err("'GroupQueryAttention' with local_window_size needs causal = 1".into())
            );
        }
        Ok(())
    }

    /// q, k and v as `[B, S, heads · size]`, split from a packed query
    /// when key and value are absent.
    fn gqa_inputs(&mut self, q_heads: i64, kv_heads: i64) -> Res<[ValueId; 3]> {
        let q = self.input(0)?;
        if let (Some(k), Some(v)) = (self.opt(1), self.opt(2)) {
            return Ok([q, k, v]);
        }
        if self.opt(1).is_some() || self.opt(2).is_some() {
            return Err(self.err(
                "'GroupQueryAttention' needs both key and value, or neither (packed QKV)".into(),
            ));
        }
        let width = match self.static_dim(q, 2) {
            Some(w) if w % (q_heads + 2 * kv_heads) == 0 => w,
            _ => return Err(self.err(
                "'GroupQueryAttention' with packed QKV needs a query width known and divisible by num_heads + 2·kv_num_heads".into(),
            )),
        };
        let size = width / (q_heads + 2 * kv_heads);
        let parts = self.split_last(q, &[q_heads * size, kv_heads * size, kv_heads * size])?;
        match parts[..] {
            [q, k, v] => Ok([q, k, v]),
            _ => Err(self.err("internal: packed QKV split".into())),
        }
    }

    /// Past lengths, new and total lengths and the first-prompt flag.
    fn cache_at(&mut self, q: ValueId) -> Res<CacheAt> {
        let to_i64 = vec![("to".to_string(), Attribute::i64(7))];
        let seqlens = self.input(5)?;
        let seqlens = self.op_as(OpKind::Cast, vec![seqlens], to_i64.clone(), Type::i64())?;
        let total = self.input(6)?;
        let scalar_shape = self.i64s(&[])?;
        let total = self.op(OpKind::Reshape, vec![total, scalar_shape], vec![])?;
        let total = self.op_as(OpKind::Cast, vec![total], to_i64, Type::i64())?;
        let seq = self.dim_of(q, 1)?;
        let first = self.op_as(OpKind::Equal, vec![seq, total], vec![], Type::i1())?;
        let one = self.constant(DType::I64, vec![], &[1.0])?;
        let zero = self.constant(DType::I64, vec![], &[0.0])?;
        let lengths = self.op(OpKind::Add, vec![seqlens, one], vec![])?;
        let past = self.op(OpKind::Sub, vec![lengths, seq], vec![])?;
        let past = self.op_as(OpKind::Where, vec![first, zero, past], vec![], Type::i64())?;
        Ok(CacheAt {
            past,
            seq,
            total,
            first,
        })
    }

    /// `x [B, S, heads · size]` rotated by cos_cache/sin_cache (their
    /// width is half the rotated part of a head).
    fn gqa_rotary(&mut self, x: ValueId, heads: i64, at: &CacheAt) -> Res<ValueId> {
        let (cos, sin) = (self.input(7)?, self.input(8)?);
        let Some(half) = self.static_dim(cos, 1) else {
            return Err(self.err(
                "'GroupQueryAttention' with do_rotary needs a cos_cache of known width".into(),
            ));
        };
        let positions = self.rotary_positions(at)?;
        let attrs = vec![
            ("num_heads".to_string(), Attribute::i64(heads)),
            (
                "interleaved".to_string(),
                Attribute::i64(self.int("rotary_interleaved", 0)),
            ),
            ("rotary_embedding_dim".to_string(), Attribute::i64(2 * half)),
        ];
        self.op(OpKind::RotaryEmbedding, vec![x, cos, sin, positions], attrs)
    }

    /// `[B, S]` positions: `p_b + s`; or position_ids, whose first element
    /// is the offset of every row on a first prompt.
    fn rotary_positions(&mut self, at: &CacheAt) -> Res<ValueId> {
        let steps = self.range_to(at.seq)?;
        let Some(ids) = self.opt(INPUT_POSITION_IDS) else {
            let axes = self.i64s(&[1])?;
            let past = self.op(OpKind::Unsqueeze, vec![at.past, axes], vec![])?;
            return self.op(OpKind::Add, vec![past, steps], vec![]);
        };
        // ids[:1, :1] (empty for an empty batch) + s.
        let (zero, one) = (self.i64s(&[0, 0])?, self.i64s(&[1, 1])?);
        let corner = self.op(OpKind::Slice, vec![ids, zero, one], vec![])?;
        let offset = self.op(OpKind::Add, vec![corner, steps], vec![])?;
        self.op_as(
            OpKind::Where,
            vec![at.first, offset, ids],
            vec![],
            Type::i64(),
        )
    }

    /// `[B, S, heads · size]` as `[B, heads, S, size]` (no `-1` in the
    /// shape, so that empty tensors reshape too).
    fn heads_first(&mut self, x: ValueId, heads: i64) -> Res<ValueId> {
        let shape = self.op_as(OpKind::Shape, vec![x], vec![], Type::i64())?;
        let (from, to) = (self.i64s(&[0])?, self.i64s(&[2])?);
        let lead = self.op(OpKind::Slice, vec![shape, from, to], vec![])?;
        let end = self.i64s(&[3])?;
        let width = self.op(OpKind::Slice, vec![shape, to, end], vec![])?;
        let h = self.i64s(&[heads])?;
        let size = self.op(OpKind::Div, vec![width, h], vec![])?;
        let axis = ("axis".to_string(), Attribute::i64(0));
        let split = self.op(OpKind::Concat, vec![lead, h, size], vec![axis])?;
        let x = self.op(OpKind::Reshape, vec![x, split], vec![])?;
        self.transpose(x, &[0, 2, 1, 3])
    }
}

impl Decomp<'_, '_, '_> {
    /// The present cache: `past` (or nothing) lengthened with zeros to
    /// max(past length, total), with `new [B, H, S, D]` written at rows
    /// `p_b + s`.
    fn write_cache(&mut self, new: ValueId, past: Option<ValueId>, at: &CacheAt) -> Res<ValueId> {
        let past_len = match past {
            Some(p) => self.dim_of(p, 2)?,
            None => self.constant(DType::I64, vec![], &[0.0])?,
        };
        let len = self.op(OpKind::Max, vec![past_len, at.total], vec![])?;
        let added = self.op(OpKind::Sub, vec![len, past_len], vec![])?;
        let shape = self.op_as(OpKind::Shape, vec![new], vec![], Type::i64())?;
        let zeros = self.zeros_rows(new, shape, added)?;
        let base = match past {
            Some(p) => {
                let axis = ("axis".to_string(), Attribute::i64(2));
                self.op(OpKind::Concat, vec![p, zeros], vec![axis])?
            }
            None => zeros,
        };
        let axis = ("axis".to_string(), Attribute::i64(2));
        self.op(OpKind::TensorScatter, vec![base, new, at.past], vec![axis])
    }

    /// Zeros shaped like `like` (`shape`, 4-D) but with `rows` (0-d) on
    /// axis 2.
    fn zeros_rows(&mut self, like: ValueId, shape: ValueId, rows: ValueId) -> Res<ValueId> {
        let (from, to, end) = (self.i64s(&[0])?, self.i64s(&[2])?, self.i64s(&[4])?);
        let lead = self.op(OpKind::Slice, vec![shape, from, to], vec![])?;
        let three = self.i64s(&[3])?;
        let last = self.op(OpKind::Slice, vec![shape, three, end], vec![])?;
        let axes = self.i64s(&[0])?;
        let rows = self.op(OpKind::Unsqueeze, vec![rows, axes], vec![])?;
        let axis = ("axis".to_string(), Attribute::i64(0));
        let shape = self.op(OpKind::Concat, vec![lead, rows, last], vec![axis])?;
        let zero = self.scalar(0.0, like)?;
        self.op(OpKind::Expand, vec![zero, shape], vec![])
    }
}

impl Decomp<'_, '_, '_> {
    /// ONNX Attention over 4-D q and the cache's first `total` rows. The
    /// kernel's own masks where they say it (its causal frontier offset by
    /// `nonpad_kv_seqlen - S`, so `nonpad_kv_seqlen = p_b + S`, which also
    /// bounds the keys; its left window); a sink takes an explicit mask.
    fn gqa_attend(&mut self, q: ValueId, kv: [ValueId; 2], at: &CacheAt) -> Res<ValueId> {
        let mut attrs: Vec<_> = self.scale_attr().into_iter().collect();
        if let Some(c) = Some(self.float("softcap", 0.0)).filter(|&c| c > 0.0) {
            attrs.push(("softcap".to_string(), f32_attr(c)));
        }
        let bias = self.opt(INPUT_BIAS);
        let Some(sink) = self.sink_logits()? else {
            let causal = self.int("causal", 1);
            attrs.push(("is_causal".to_string(), Attribute::i64(causal)));
            let window = self.int("local_window_size", -1);
            if causal != 0 && window > 0 {
                let left = ("left_window_size".to_string(), Attribute::i64(window - 1));
                attrs.push(left);
            }
            let nonpad = self.op(OpKind::Add, vec![at.past, at.seq], vec![])?;
            let (mask, none) = (self.or_none(bias)?, self.or_none(None)?);
            let operands = vec![q, kv[0], kv[1], mask, none, none, nonpad];
            return self.op(OpKind::Attention, operands, attrs);
        };
        let allowed = self.gqa_allowed(at)?;
        let bias = match bias {
            Some(b) => b,
            None => self.scalar(0.0, q)?,
        };
        let ninf = self.scalar(f64::NEG_INFINITY, q)?;
        let elem = self.elem(q);
        let mask = self.op_as(OpKind::Where, vec![allowed, bias, ninf], vec![], elem)?;
        let (kv, mask) = self.with_sink_key(q, kv, mask, sink)?;
        self.op(OpKind::Attention, vec![q, kv[0], kv[1], mask], attrs)
    }

    /// `[B, 1, S, T]` bool: key `t` is visible from query `s` of row `b`.
    fn gqa_allowed(&mut self, at: &CacheAt) -> Res<ValueId> {
        let keys = self.range_to(at.total)?;
        let axes = self.i64s(&[1, 2, 3])?;
        let past = self.op(OpKind::Unsqueeze, vec![at.past, axes], vec![])?;
        let bool_ = Type::i1();
        if self.int("causal", 1) == 0 {
            // Every key of the row: below p_b + S.
            let end = self.op(OpKind::Add, vec![past, at.seq], vec![])?;
            return self.op_as(OpKind::Less, vec![keys, end], vec![], bool_);
        }
        let steps = self.range_to(at.seq)?;
        let axes = self.i64s(&[1])?;
        let steps = self.op(OpKind::Unsqueeze, vec![steps, axes], vec![])?;
        let frontier = self.op(OpKind::Add, vec![past, steps], vec![])?;
        let ok = self.op_as(
            OpKind::LessOrEqual,
            vec![keys, frontier],
            vec![],
            bool_.clone(),
        )?;
        let window = self.int("local_window_size", -1);
        if window <= 0 {
            return Ok(ok);
        }
        let width = self.constant(DType::I64, vec![], &[window as f64])?;
        let start = self.op(OpKind::Sub, vec![frontier, width], vec![])?;
        let inside = self.op_as(OpKind::Greater, vec![keys, start], vec![], bool_.clone())?;
        self.op_as(OpKind::And, vec![ok, inside], vec![], bool_)
    }

    /// The extra logit of each head (head_sink `[H]`, or 0 with
    /// smooth_softmax) as `[1, H or 1, 1, 1]`.
    fn sink_logits(&mut self) -> Res<Option<ValueId>> {
        if let Some(sink) = self.opt(INPUT_SINK) {
            let shape = self.i64s(&[1, -1, 1, 1])?;
            return Ok(Some(self.op(OpKind::Reshape, vec![sink, shape], vec![])?));
        }
        if self.int("smooth_softmax", 0) != 1 {
            return Ok(None);
        }
        let q = self.input(0)?;
        let dtype = DType::from_type(&self.elem(q))
            .ok_or_else(|| self.err("'GroupQueryAttention' needs float inputs".into()))?;
        Ok(Some(self.constant(dtype, vec![1, 1, 1, 1], &[0.0])?))
    }

    /// Keys and values with one more row of zeros (its score is 0), and
    /// the mask with that key's column holding `sink`.
    fn with_sink_key(
        &mut self,
        q: ValueId,
        kv: [ValueId; 2],
        mask: ValueId,
        sink: ValueId,
    ) -> Res<([ValueId; 2], ValueId)> {
        let one = self.constant(DType::I64, vec![], &[1.0])?;
        let axis2 = ("axis".to_string(), Attribute::i64(2));
        let mut out = kv;
        for t in &mut out {
            let shape = self.op_as(OpKind::Shape, vec![*t], vec![], Type::i64())?;
            let zeros = self.zeros_rows(*t, shape, one)?;
            *t = self.op(OpKind::Concat, vec![*t, zeros], vec![axis2.clone()])?;
        }
        // [B, Hq, S, T]: the mask broadcast over q's heads and rows.
        let q_shape = self.op_as(OpKind::Shape, vec![q], vec![], Type::i64())?;
        let (from, to) = (self.i64s(&[0])?, self.i64s(&[3])?);
        let bhs = self.op(OpKind::Slice, vec![q_shape, from, to], vec![])?;
        let keys = self.dim_of(kv[0], 2)?;
        let axes = self.i64s(&[0])?;
        let keys = self.op(OpKind::Unsqueeze, vec![keys, axes], vec![])?;
        let axis0 = ("axis".to_string(), Attribute::i64(0));
        let full = self.op(OpKind::Concat, vec![bhs, keys], vec![axis0.clone()])?;
        let mask = self.op(OpKind::Expand, vec![mask, full], vec![])?;
        let one_key = self.i64s(&[1])?;
        let column = self.op(OpKind::Concat, vec![bhs, one_key], vec![axis0])?;
        let sink = self.op(OpKind::Expand, vec![sink, column], vec![])?;
        let axis3 = ("axis".to_string(), Attribute::i64(3));
        let mask = self.op(OpKind::Concat, vec![mask, sink], vec![axis3])?;
        Ok((out, mask))
    }
}
