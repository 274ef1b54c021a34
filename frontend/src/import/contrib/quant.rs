//! onnxruntime's quantizer ops: integer matmuls (DynamicQuantizeMatMul,
//! MatMulIntegerToFloat, QGemm) accumulate exactly in int32 with
//! MatMulInteger and scale once, as onnxruntime does; the QLinear ops on
//! activations (Add, Mul, Sigmoid, LeakyRelu, Softmax, Concat, the average
//! pools) dequantize, compute in float and quantize, which is what
//! onnxruntime's kernels compute up to a rounding of the last step.

use super::{f32_attr, Decomp, Res};
use ir::{Attribute, Type, ValueId};
use onnx::OpKind;

impl Decomp<'_, '_, '_> {
    /// An absent optional operand in the middle of an op's inputs.
    pub(super) fn or_none(&mut self, v: Option<ValueId>) -> Res<ValueId> {
        match v {
            Some(v) => Ok(v),
            None => self.imp.no_value(),
        }
    }

    /// `MatMulInteger(a, b, a_zero, b_zero)`: exact int32 sums.
    pub(super) fn integer_sums(
        &mut self,
        a: ValueId,
        b: ValueId,
        a_zero: Option<ValueId>,
        b_zero: Option<ValueId>,
    ) -> Res<ValueId> {
        let mut operands = vec![a, b];
        if a_zero.is_some() || b_zero.is_some() {
            operands.push(self.or_none(a_zero)?);
            operands.extend(b_zero);
        }
        self.op_as(OpKind::MatMulInteger, operands, vec![], Type::i(32))
    }

    /// `v` cast to f32.
    pub(super) fn as_f32(&mut self, v: ValueId) -> Res<ValueId> {
        let to = ("to".to_string(), Attribute::i64(1));
        self.op_as(OpKind::Cast, vec![v], vec![to], Type::f32())
    }

    /// DynamicQuantizeLinear of `x`: uint8 values, scale, zero point.
    fn dynamic_quantize(&mut self, x: ValueId) -> Res<[ValueId; 3]> {
        let q = self.op_n(
            OpKind::DynamicQuantizeLinear,
            vec![x],
            vec![],
            vec![Type::ui(8), Type::f32(), Type::ui(8)],
        )?;
        <[ValueId; 3]>::try_from(q)
            .map_err(|_| self.err("internal: DynamicQuantizeLinear results".into()))
    }

    /// `acc * (a_scale * b_scale) + bias`.
    fn rescale(
        &mut self,
        acc: ValueId,
        a_scale: ValueId,
        b_scale: ValueId,
        bias: Option<ValueId>,
    ) -> Res<ValueId> {
        let scale = self.op(OpKind::Mul, vec![a_scale, b_scale], vec![])?;
        let y = self.op(OpKind::Mul, vec![acc, scale], vec![])?;
        match bias {
            Some(b) => self.op(OpKind::Add, vec![y, b], vec![]),
            None => Ok(y),
        }
    }

    /// A: float, quantized per call to uint8 (DynamicQuantizeLinear); B:
    /// int8/uint8 with its scale and zero point; bias.
    pub(super) fn dynamic_quantize_matmul(&mut self) -> Res<ValueId> {
        let (a, b, b_scale) = (self.input(0)?, self.input(1)?, self.input(2)?);
        let [aq, a_scale, a_zero] = self.dynamic_quantize(a)?;
        let acc = self.integer_sums(aq, b, Some(a_zero), self.opt(3))?;
        let acc = self.as_f32(acc)?;
        self.rescale(acc, a_scale, b_scale, self.opt(4))
    }

    pub(super) fn matmul_integer_to_float(&mut self) -> Res<ValueId> {
        let (a, b) = (self.input(0)?, self.input(1)?);
        let (a_scale, b_scale) = (self.input(2)?, self.input(3)?);
        let acc = self.integer_sums(a, b, self.opt(4), self.opt(5))?;
        let acc = self.as_f32(acc)?;
        self.rescale(acc, a_scale, b_scale, self.opt(6))
    }

    /// `alpha * (op(A) op(B) + C) * a_scale * b_scale` (C is int32 at
    /// the product's scale; alpha scales it too, as onnxruntime computes
    /// it), the sum exact in int32; quantized to y_scale / y_zero_point
    /// when given, by one multiplier `alpha * a_scale * b_scale / y_scale`
    /// as onnxruntime requantizes, else float.
    pub(super) fn qgemm(&mut self) -> Res<ValueId> {
        let (mut a, a_scale, a_zero) = (self.input(0)?, self.input(1)?, self.opt(2));
        let (mut b, b_scale, b_zero) = (self.input(3)?, self.input(4)?, self.opt(5));
        if self.int("transA", 0) != 0 {
            a = self.swap_last_two(a)?;
        }
        if self.int("transB", 0) != 0 {
            b = self.swap_last_two(b)?;
        }
        let mut acc = self.integer_sums(a, b, a_zero, b_zero)?;
        if let Some(c) = self.opt(6) {
            acc = self.op(OpKind::Add, vec![acc, c], vec![])?;
        }
        let acc = self.as_f32(acc)?;
        let alpha = self.scalar(self.float("alpha", 1.0), a_scale)?;
        let scale = self.op(OpKind::Mul, vec![alpha, a_scale], vec![])?;
        let scale = self.op(OpKind::Mul, vec![scale, b_scale], vec![])?;
        let Some(y_scale) = self.opt(7) else {
            return self.op(OpKind::Mul, vec![acc, scale], vec![]);
        };
        let multiplier = self.op(OpKind::Div, vec![scale, y_scale], vec![])?;
        let y = self.op(OpKind::Mul, vec![acc, multiplier], vec![])?;
        let one = self.scalar(1.0, y_scale)?;
        self.quantize(y, one, self.opt(8))
    }

    /// DynamicQuantizeLSTM: int8 weights laid out [dirs, in, 4 hidden]
    /// with per-direction (or per-direction-and-column) scales and zero
    /// points, dequantized and transposed to ONNX's layout, then LSTM. The
    /// input is quantized as onnxruntime does, once over the whole
    /// sequence (DynamicQuantizeLinear), and enters in its dequantized
    /// values; the products are then onnxruntime's up to float rounding.
    pub(super) fn dynamic_quantize_lstm(&mut self) -> Res<Vec<Option<ValueId>>> {
        let w = self.lstm_weight(1, 8)?;
        let r = self.lstm_weight(2, 10)?;
        let x = self.input(0)?;
        let [xq, x_scale, x_zero] = self.dynamic_quantize(x)?;
        let x = self.dequantize(xq, x_scale, Some(x_zero))?;
        let mut operands = vec![x, w, r];
        let last = (3..8).rev().find(|&i| self.opt(i).is_some());
        for i in 3..=last.unwrap_or(2) {
            let v = self.opt(i);
            operands.push(self.or_none(v)?);
        }
        let attrs = self.imp.convert_attrs(self.node, self.attrs)?;
        let ys = self.op_n(OpKind::LSTM, operands, attrs, vec![Type::f32(); 3])?;
        Ok(ys.into_iter().map(Some).collect())
    }

    /// Weight input `at` (int8 [dirs, k, 4 hidden]) with its scale and zero
    /// point at `scale_at`, `scale_at + 1`, as float [dirs, 4 hidden, k].
    fn lstm_weight(&mut self, at: usize, scale_at: usize) -> Res<ValueId> {
        let (w, scale) = (self.input(at)?, self.input(scale_at)?);
        // A per-direction scale [dirs] or per column [dirs, 4 hidden],
        // broadcast over [dirs, k, 4 hidden].
        let lead: &[i64] = match self.rank(scale) {
            Some(1) => &[1, 2],
            Some(2) => &[1],
            _ => return Err(self.err(
                "'DynamicQuantizeLSTM' needs weight scales of shape [dirs] or [dirs, 4 × hidden]"
                    .into(),
            )),
        };
        let axes = self.i64s(lead)?;
        let scale = self.op(OpKind::Unsqueeze, vec![scale, axes], vec![])?;
        let mut wf = self.as_f32(w)?;
        if let Some(z) = self.opt(scale_at + 1) {
            let axes = self.i64s(lead)?;
            let z = self.op(OpKind::Unsqueeze, vec![z, axes], vec![])?;
            let z = self.as_f32(z)?;
            wf = self.op(OpKind::Sub, vec![wf, z], vec![])?;
        }
        let wf = self.op(OpKind::Mul, vec![wf, scale], vec![])?;
        self.transpose(wf, &[0, 2, 1])
    }

    fn dequantize(&mut self, x: ValueId, scale: ValueId, zero: Option<ValueId>) -> Res<ValueId> {
        let mut operands = vec![x, scale];
        operands.extend(zero);
        self.op_as(OpKind::DequantizeLinear, operands, vec![], Type::f32())
    }

    /// QuantizeLinear to the zero point's type (uint8 without one).
    fn quantize(&mut self, y: ValueId, scale: ValueId, zero: Option<ValueId>) -> Res<ValueId> {
        let elem = zero.map_or(Type::ui(8), |z| self.elem(z));
        let mut operands = vec![y, scale];
        operands.extend(zero);
        self.op_as(OpKind::QuantizeLinear, operands, vec![], elem)
    }

    /// The quantized input at `at` (tensor, scale, zero point) in float.
    fn dequantized(&mut self, at: usize) -> Res<ValueId> {
        let (x, scale) = (self.input(at)?, self.input(at + 1)?);
        self.dequantize(x, scale, self.opt(at + 2))
    }

    /// QLinearAdd / QLinearMul: (A, A_scale, A_zero, B, B_scale, B_zero,
    /// C_scale, C_zero).
    pub(super) fn qlinear_binary(&mut self, kind: OpKind) -> Res<ValueId> {
        let (a, b) = (self.dequantized(0)?, self.dequantized(3)?);
        let y = self.op(kind, vec![a, b], vec![])?;
        self.quantize(y, self.input(6)?, self.opt(7))
    }

    /// QLinearSigmoid / QLinearLeakyRelu: (X, X_scale, X_zero, Y_scale,
    /// Y_zero).
    pub(super) fn qlinear_unary(&mut self, kind: OpKind) -> Res<ValueId> {
        let x = self.dequantized(0)?;
        let attrs = match kind {
            OpKind::LeakyRelu => vec![("alpha".to_string(), f32_attr(self.float("alpha", 0.01)))],
            _ => vec![],
        };
        let y = self.op(kind, vec![x], attrs)?;
        self.quantize(y, self.input(3)?, self.opt(4))
    }

    /// QLinearSoftmax; `opset` < 13 is Softmax over the input coerced to
    /// 2-D at `axis` (rows of the flattened input).
    pub(super) fn qlinear_softmax(&mut self) -> Res<ValueId> {
        let x = self.dequantized(0)?;
        let axis = self.int("axis", -1);
        let last = self
            .rank(x)
            .is_some_and(|r| onnx::axis::normalize(axis, r) == Some(r - 1));
        let y = if self.int("opset", 13) >= 13 || last {
            self.op(
                OpKind::Softmax,
                vec![x],
                vec![("axis".into(), Attribute::i64(axis))],
            )?
        } else {
            let flat = self.op(
                OpKind::Flatten,
                vec![x],
                vec![("axis".into(), Attribute::i64(axis))],
            )?;
            let rows = self.op(
                OpKind::Softmax,
                vec![flat],
                vec![("axis".into(), Attribute::i64(1))],
            )?;
            let shape = self.op_as(OpKind::Shape, vec![x], vec![], Type::i64())?;
            self.op(OpKind::Reshape, vec![rows, shape], vec![])?
        };
        self.quantize(y, self.input(3)?, self.opt(4))
    }

    /// QLinearConcat: (Y_scale, Y_zero, then (X, X_scale, X_zero) per
    /// input).
    pub(super) fn qlinear_concat(&mut self) -> Res<ValueId> {
        let n = self.inputs.len().saturating_sub(2) / 3;
        if n == 0 || !(self.inputs.len() - 2).is_multiple_of(3) {
            return Err(
                self.err("'QLinearConcat' needs (tensor, scale, zero point) triples".into())
            );
        }
        let mut parts = Vec::with_capacity(n);
        for k in 0..n {
            parts.push(self.dequantized(2 + 3 * k)?);
        }
        let axis = ("axis".to_string(), Attribute::i64(self.int("axis", 0)));
        let y = self.op(OpKind::Concat, parts, vec![axis])?;
        self.quantize(y, self.input(0)?, self.opt(1))
    }

    /// QLinearGlobalAveragePool / QLinearAveragePool: (X, X_scale, X_zero,
    /// Y_scale, Y_zero); channels_last moves channels to dim 1 and back.
    pub(super) fn qlinear_pool(&mut self, kind: OpKind) -> Res<ValueId> {
        let mut x = self.dequantized(0)?;
        let channels_last = self.int("channels_last", 0) != 0;
        let rank = self.rank(x);
        let (to_first, to_last) = match (channels_last, rank) {
            (false, _) => (None, None),
            (true, Some(r)) if r >= 3 => {
                let r = r as i64;
                let first: Vec<i64> = [0, r - 1].into_iter().chain(1..r - 1).collect();
                let last: Vec<i64> = [0].into_iter().chain(2..r).chain([1]).collect();
                (Some(first), Some(last))
            }
            (true, _) => {
                return Err(self.err(format!(
                    "'{}' with channels_last needs an input of known rank ≥ 3",
                    self.node.op_type
                )))
            }
        };
        if let Some(p) = to_first {
            x = self.transpose(x, &p)?;
        }
        let pool_attrs = self.attrs_except(&|name| name == "channels_last")?;
        let mut y = self.op(kind, vec![x], pool_attrs)?;
        if let Some(p) = to_last {
            y = self.transpose(y, &p)?;
        }
        self.quantize(y, self.input(3)?, self.opt(4))
    }
}
