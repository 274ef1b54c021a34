//! onnxruntime's `com.microsoft` operators, as its transformer optimizer
//! and quantizer write them, imported as default-domain ops: each node
//! becomes the ops that compute it (Gelu, LayerNormalization, Attention,
//! MatMulInteger, QuantizeLinear, ...), so inference, folding and the
//! kernels are theirs. Semantics follow onnxruntime's contrib-op
//! documentation (docs/ContribOperators.md); a form this does not cover
//! is a diagnostic naming the node and the form. The GPU providers'
//! fusions (BiasAdd, BiasSplitGelu, NhwcConv, packed MultiHeadAttention
//! inputs), which onnxruntime's CPU provider does not run, are covered
//! too (`gpu_forms.rs`). `onnxc fold` keeps these
//! nodes as they are (foreign ops), for onnxruntime to run.

mod attention;
mod gpu_forms;
mod gqa;
mod llm;
mod quant;

use super::legacy::suffixed;
use super::{node_diag, small_elements, Importer};
use crate::proto::{AttributeProto, NodeProto};
use ir::elements::DType;
use ir::{Attribute, Diagnostic, Location, Type, ValueId};
use onnx::OpKind;

pub(super) const DOMAIN: &str = "com.microsoft";

/// onnxruntime's own operators that its model builder writes in the
/// default domain (where onnxruntime registers them).
pub(super) const DEFAULT_DOMAIN_OPS: &[&str] = &["SimplifiedLayerNormalization"];

type Res<T> = Result<T, Diagnostic>;

/// The node being decomposed: its inputs, attributes and the importer.
pub(super) struct Decomp<'i, 'a, 'n> {
    imp: &'i mut Importer<'a>,
    node: &'n NodeProto,
    attrs: &'n [AttributeProto],
    inputs: Vec<Option<ValueId>>,
    loc: Location,
    steps: usize,
}

impl<'a> Importer<'a> {
    /// Imports a `com.microsoft` node as the default-domain ops it means.
    pub(super) fn import_contrib(&mut self, node: &NodeProto, attrs: &[AttributeProto]) -> Res<()> {
        let mut inputs = Vec::with_capacity(node.input.len());
        for name in &node.input {
            inputs.push(match name.as_str() {
                "" => None,
                n => Some(self.lookup(n).ok_or_else(|| {
                    node_diag(node, format!("input '{n}' is not defined in the graph"))
                })?),
            });
        }
        let loc = self.node_loc(node);
        let mut d = Decomp {
            imp: self,
            node,
            attrs,
            inputs,
            loc,
            steps: 0,
        };
        let outputs = d.expand()?;
        d.bind(&outputs)
    }
}

impl Decomp<'_, '_, '_> {
    /// The values of the node's outputs (`None`: not computed, must not
    /// be asked for).
    fn expand(&mut self) -> Res<Vec<Option<ValueId>>> {
        let one = |v: ValueId| Ok(vec![Some(v)]);
        match self.node.op_type.as_str() {
            "Gelu" => one(self.gelu(self.input(0)?, "none")?),
            "FastGelu" => {
                let x = self.biased(0, 1)?;
                one(self.gelu(x, "tanh")?)
            }
            "BiasGelu" => {
                let x = self.biased(0, 1)?;
                one(self.gelu(x, "none")?)
            }
            "QuickGelu" => self.quick_gelu().map(|v| vec![Some(v)]),
            "BiasAdd" => one(self.bias_add()?),
            "BiasSplitGelu" => one(self.bias_split_gelu()?),
            "NhwcConv" => one(self.nhwc_conv()?),
            "SkipLayerNormalization" => self.skip_layer_norm(false),
            "SkipSimplifiedLayerNormalization" => self.skip_layer_norm(true),
            "FusedMatMul" => self.fused_matmul().map(|v| vec![Some(v)]),
            "FusedConv" => self.fused_conv().map(|v| vec![Some(v)]),
            "MatMulNBits" => one(self.as_is(OpKind::MatMulNBits)?),
            "SimplifiedLayerNormalization" => self.simplified_layer_norm(),
            "RotaryEmbedding" => one(self.rotary_embedding()?),
            "GatherBlockQuantized" => one(self.gather_block_quantized()?),
            "GroupQueryAttention" => self.group_query_attention(),
            "Attention" => self.attention(),
            "MultiHeadAttention" => self.multi_head_attention(),
            "EmbedLayerNormalization" => self.embed_layer_norm(),
            "QAttention" => self.q_attention(),
            "DynamicQuantizeMatMul" => self.dynamic_quantize_matmul().map(|v| vec![Some(v)]),
            "MatMulIntegerToFloat" => self.matmul_integer_to_float().map(|v| vec![Some(v)]),
            "QGemm" => self.qgemm().map(|v| vec![Some(v)]),
            "DynamicQuantizeLSTM" => self.dynamic_quantize_lstm(),
            "QLinearAdd" => self.qlinear_binary(OpKind::Add).map(|v| vec![Some(v)]),
            "QLinearMul" => self.qlinear_binary(OpKind::Mul).map(|v| vec![Some(v)]),
            "QLinearSigmoid" => self.qlinear_unary(OpKind::Sigmoid).map(|v| vec![Some(v)]),
            "QLinearLeakyRelu" => self.qlinear_unary(OpKind::LeakyRelu).map(|v| vec![Some(v)]),
            "QLinearSoftmax" => self.qlinear_softmax().map(|v| vec![Some(v)]),
            "QLinearConcat" => self.qlinear_concat().map(|v| vec![Some(v)]),
            "QLinearGlobalAveragePool" => self
                .qlinear_pool(OpKind::GlobalAveragePool)
                .map(|v| vec![Some(v)]),
            "QLinearAveragePool" => self
                .qlinear_pool(OpKind::AveragePool)
                .map(|v| vec![Some(v)]),
            other => Err(self.err(format!(
                "unsupported operator '{other}' of domain '{DOMAIN}'"
            ))),
        }
    }

    /// Binds the node's output names to `values`; asking for an output
    /// that was not computed is an error.
    fn bind(&mut self, values: &[Option<ValueId>]) -> Res<()> {
        for (i, name) in self.node.output.iter().enumerate() {
            if name.is_empty() {
                continue;
            }
            let v = values.get(i).copied().flatten().ok_or_else(|| {
                self.err(format!(
                    "output {i} ('{name}') of '{}' is not supported",
                    self.node.op_type
                ))
            })?;
            // An output that is an input as is (no op of its own) gets one.
            let v = match self.imp.m.defining_op(v) {
                Some(_) if !self.inputs.contains(&Some(v)) => v,
                _ => self.op(OpKind::Identity, vec![v], vec![])?,
            };
            self.imp.define(name, v, Some(self.node))?;
            if let Some(op) = self.imp.m.defining_op(v) {
                let k = self.imp.m.results(op).iter().position(|&r| r == v);
                if k == Some(0) && self.imp.m.results(op).len() == 1 {
                    self.imp.set_names(op, std::slice::from_ref(name));
                }
            }
        }
        Ok(())
    }

    fn err(&self, msg: String) -> Diagnostic {
        node_diag(self.node, msg)
    }

    fn input(&self, i: usize) -> Res<ValueId> {
        self.opt(i)
            .ok_or_else(|| self.err(format!("'{}' needs input {i}", self.node.op_type)))
    }

    fn opt(&self, i: usize) -> Option<ValueId> {
        self.inputs.get(i).copied().flatten()
    }

    fn attr(&self, name: &str) -> Option<&AttributeProto> {
        self.attrs.iter().find(|a| a.name == name)
    }

    fn int(&self, name: &str, default: i64) -> i64 {
        self.attr(name).map_or(default, |a| a.i)
    }

    fn float(&self, name: &str, default: f64) -> f64 {
        self.attr(name).map_or(default, |a| f64::from(a.f))
    }

    fn string(&self, name: &str) -> Option<String> {
        self.attr(name)
            .map(|a| String::from_utf8_lossy(&a.s).into_owned())
    }

    fn floats(&self, name: &str) -> Vec<f64> {
        self.attr(name)
            .map(|a| a.floats.iter().map(|&f| f64::from(f)).collect())
            .unwrap_or_default()
    }

    /// Refuses a set attribute this import does not implement.
    fn refuse_attr(&self, name: &str, what: &str) -> Res<()> {
        match self.attr(name) {
            Some(a) if a.i != 0 || !a.s.is_empty() => Err(self.err(format!(
                "'{}' with {what} ('{name}') is not supported",
                self.node.op_type
            ))),
            _ => Ok(()),
        }
    }

    fn elem(&self, v: ValueId) -> Type {
        self.imp.m.value_type(v).element_type().clone()
    }

    fn rank(&self, v: ValueId) -> Option<usize> {
        self.imp.m.value_type(v).shape().map(<[i64]>::len)
    }

    /// One step typed like its first operand's elements.
    fn op(
        &mut self,
        kind: OpKind,
        operands: Vec<ValueId>,
        attrs: Vec<(String, Attribute)>,
    ) -> Res<ValueId> {
        let elem = operands.first().map_or(Type::f32(), |&v| self.elem(v));
        self.op_as(kind, operands, attrs, elem)
    }

    /// One step with elements of `elem`.
    fn op_as(
        &mut self,
        kind: OpKind,
        operands: Vec<ValueId>,
        attrs: Vec<(String, Attribute)>,
        elem: Type,
    ) -> Res<ValueId> {
        let ys = self.op_n(kind, operands, attrs, vec![elem])?;
        ys.first()
            .copied()
            .ok_or_else(|| self.err(format!("internal: {} without a result", kind.name())))
    }

    /// The location of the next step: the node's, tagged `tag` and the
    /// step's number (ops made from one node keep distinct names).
    fn next_loc(&mut self, tag: &str) -> Location {
        self.steps += 1;
        suffixed(&self.loc, &format!("{tag}{}", self.steps))
    }

    /// A step with several results (LayerNormalization's statistics,
    /// DynamicQuantizeLinear's scale and zero point).
    fn op_n(
        &mut self,
        kind: OpKind,
        operands: Vec<ValueId>,
        attrs: Vec<(String, Attribute)>,
        elems: Vec<Type>,
    ) -> Res<Vec<ValueId>> {
        let loc = self.next_loc(&kind.name().to_lowercase());
        let types = elems.into_iter().map(Type::unranked_tensor).collect();
        let op = self.imp.create(kind, operands, types, attrs, loc)?;
        self.imp.infer(op);
        Ok(self.imp.m.results(op).to_vec())
    }

    /// A 0-d constant of `like`'s element type.
    fn scalar(&mut self, v: f64, like: ValueId) -> Res<ValueId> {
        let dtype = DType::from_type(&self.elem(like))
            .ok_or_else(|| self.err("an input is not numeric".into()))?;
        self.constant(dtype, vec![], &[v])
    }

    fn constant(&mut self, dtype: DType, shape: Vec<i64>, values: &[f64]) -> Res<ValueId> {
        let e = small_elements(dtype, shape, values)?;
        let loc = self.next_loc("const");
        self.imp.constant_value(e, loc)
    }

    fn i64s(&mut self, values: &[i64]) -> Res<ValueId> {
        let f: Vec<f64> = values.iter().map(|&v| v as f64).collect();
        self.constant(DType::I64, vec![values.len() as i64], &f)
    }

    /// Input `x` plus input `bias` when given.
    fn biased(&mut self, x: usize, bias: usize) -> Res<ValueId> {
        let x = self.input(x)?;
        match self.opt(bias) {
            Some(b) => self.op(OpKind::Add, vec![x, b], vec![]),
            None => Ok(x),
        }
    }

    fn gelu(&mut self, x: ValueId, approximate: &str) -> Res<ValueId> {
        let attrs = vec![("approximate".into(), Attribute::string(approximate))];
        self.op(OpKind::Gelu, vec![x], attrs)
    }

    /// `x * Sigmoid(alpha * x)`.
    fn quick_gelu(&mut self) -> Res<ValueId> {
        let x = self.input(0)?;
        let alpha = self.scalar(self.float("alpha", 1.702), x)?;
        let ax = self.op(OpKind::Mul, vec![x, alpha], vec![])?;
        let s = self.op(OpKind::Sigmoid, vec![ax], vec![])?;
        self.op(OpKind::Mul, vec![x, s], vec![])
    }

    /// `LayerNormalization(input + skip + bias)` over the last axis (RMS
    /// normalization for the simplified form); outputs: the result, mean
    /// and inverse standard deviation (not for the simplified form), the
    /// sum.
    fn skip_layer_norm(&mut self, simplified: bool) -> Res<Vec<Option<ValueId>>> {
        let (x, skip, gamma) = (self.input(0)?, self.input(1)?, self.input(2)?);
        let (beta, bias) = match simplified {
            true => (None, self.opt(3)),
            false => (self.opt(3), self.opt(4)),
        };
        let mut sum = self.op(OpKind::Add, vec![x, skip], vec![])?;
        if let Some(b) = bias {
            sum = self.op(OpKind::Add, vec![sum, b], vec![])?;
        }
        let eps = (
            "epsilon".to_string(),
            f32_attr(self.float("epsilon", 1e-12)),
        );
        let axis = ("axis".to_string(), Attribute::i64(-1));
        if simplified {
            let y = self.op(OpKind::RMSNormalization, vec![sum, gamma], vec![axis, eps])?;
            return Ok(vec![Some(y), None, None, Some(sum)]);
        }
        let mut operands = vec![sum, gamma];
        operands.extend(beta);
        let elem = self.elem(x);
        let r = self.op_n(
            OpKind::LayerNormalization,
            operands,
            vec![axis, eps],
            vec![elem, Type::f32(), Type::f32()],
        )?;
        Ok(vec![
            r.first().copied(),
            r.get(1).copied(),
            r.get(2).copied(),
            Some(sum),
        ])
    }

    /// `v` with its last two dims swapped (its rank must be known).
    fn swap_last_two(&mut self, v: ValueId) -> Res<ValueId> {
        let r = self.rank(v).filter(|&r| r >= 2).ok_or_else(|| {
            self.err(format!(
                "'{}' transposes an operand of unknown rank (or rank < 2)",
                self.node.op_type
            ))
        })?;
        let mut perm: Vec<i64> = (0..r as i64).collect();
        perm.swap(r - 2, r - 1);
        self.transpose(v, &perm)
    }

    fn transpose(&mut self, v: ValueId, perm: &[i64]) -> Res<ValueId> {
        let perm = ("perm".to_string(), ints_attr(perm));
        self.op(OpKind::Transpose, vec![v], vec![perm])
    }

    /// The node's attributes as IR attributes, but those `skip` names
    /// (the ones the decomposition reads itself).
    fn attrs_except(&self, skip: &dyn Fn(&str) -> bool) -> Res<Vec<(String, Attribute)>> {
        let kept: Vec<AttributeProto> = self
            .attrs
            .iter()
            .filter(|a| !skip(&a.name))
            .cloned()
            .collect();
        self.imp.convert_attrs(self.node, &kept)
    }

    /// The node as the `com.microsoft` op onnxc computes as it is: its
    /// operands (omitted ones `NoValue`) and attributes unchanged.
    fn as_is(&mut self, kind: OpKind) -> Res<ValueId> {
        let attrs = self.attrs_except(&|_| false)?;
        let mut operands = Vec::with_capacity(self.inputs.len());
        for v in self.inputs.clone() {
            operands.push(match v {
                Some(v) => v,
                None => self.imp.no_value()?,
            });
        }
        self.op(kind, operands, attrs)
    }

    /// `alpha * op(A) @ op(B)`, op a transpose of the last two dims.
    fn fused_matmul(&mut self) -> Res<ValueId> {
        self.refuse_attr("transBatchA", "batch transposes")?;
        self.refuse_attr("transBatchB", "batch transposes")?;
        let (mut a, mut b) = (self.input(0)?, self.input(1)?);
        if self.int("transA", 0) != 0 {
            a = self.swap_last_two(a)?;
        }
        if self.int("transB", 0) != 0 {
            b = self.swap_last_two(b)?;
        }
        let y = self.op(OpKind::MatMul, vec![a, b], vec![])?;
        let alpha = self.float("alpha", 1.0);
        if alpha == 1.0 {
            return Ok(y);
        }
        let alpha = self.scalar(alpha, y)?;
        self.op(OpKind::Mul, vec![y, alpha], vec![])
    }

    /// `activation(Conv(X, W, B) + Z)`.
    fn fused_conv(&mut self) -> Res<ValueId> {
        let conv_attrs = self.attrs_except(&|name| name.starts_with("activation"))?;
        let mut operands = vec![self.input(0)?, self.input(1)?];
        operands.extend(self.opt(2));
        let mut y = self.op(OpKind::Conv, operands, conv_attrs)?;
        if let Some(z) = self.opt(3) {
            y = self.op(OpKind::Add, vec![y, z], vec![])?;
        }
        let params = self.floats("activation_params");
        let param = |i: usize, default: f64| params.get(i).copied().unwrap_or(default);
        let activation = self.string("activation").unwrap_or_default();
        match activation.as_str() {
            "" | "Identity" => Ok(y),
            "Relu" | "Tanh" | "Sigmoid" => {
                let kind = match activation.as_str() {
                    "Relu" => OpKind::Relu,
                    "Tanh" => OpKind::Tanh,
                    _ => OpKind::Sigmoid,
                };
                self.op(kind, vec![y], vec![])
            }
            "LeakyRelu" => {
                let alpha = ("alpha".to_string(), f32_attr(param(0, 0.01)));
                self.op(OpKind::LeakyRelu, vec![y], vec![alpha])
            }
            "HardSigmoid" => {
                let attrs = vec![
                    ("alpha".to_string(), f32_attr(param(0, 0.2))),
                    ("beta".to_string(), f32_attr(param(1, 0.5))),
                ];
                self.op(OpKind::HardSigmoid, vec![y], attrs)
            }
            "Clip" => {
                let lo = self.scalar(param(0, f64::from(f32::MIN)), y)?;
                let hi = self.scalar(param(1, f64::from(f32::MAX)), y)?;
                self.op(OpKind::Clip, vec![y, lo, hi], vec![])
            }
            other => Err(self.err(format!(
                "'FusedConv' with activation '{other}' is not supported"
            ))),
        }
    }
}

/// A float attribute as ONNX stores it (single precision).
fn f32_attr(v: f64) -> Attribute {
    Attribute::Float(f64::from(v as f32), Type::f32())
}

fn ints_attr(v: &[i64]) -> Attribute {
    Attribute::Array(v.iter().map(|&x| Attribute::i64(x)).collect())
}
