//! Version normalization beyond moved attributes (normalize.rs): legacy
//! broadcasting with `broadcast`/`axis` (opset < 7), `Cast` to a type name
//! (opset < 6), `Concat` without an axis (opset < 4), `consumed_inputs`;
//! BatchNormalization with `is_test` (opset < 7), per-activation statistics
//! (`spatial = 0`, opset < 9) and training signalled by extra outputs
//! (opset < 14); Dropout with `is_test` and a mask typed like the data
//! (opset < 10). After this step each op has its newest form; export writes
//! the legacy attributes back (export/denormalize.rs).

use super::{node_diag, small_elements, Importer};
use crate::proto::NodeProto;
use ir::elements::DType;
use ir::{Attribute, Diagnostic, Location, Type, ValueId};

/// What import does with a node after its legacy attributes are handled.
pub(super) enum Legacy {
    /// Import as is.
    Keep,
    /// Import with these outputs instead of the node's own.
    Outputs(Vec<String>),
    /// Already imported (decomposed into other ops).
    Imported,
}

fn take_int(attrs: &mut Vec<(String, Attribute)>, name: &str) -> Option<i64> {
    let pos = attrs.iter().position(|(k, _)| k == name)?;
    attrs.remove(pos).1.as_int()
}

fn named(node: &NodeProto, i: usize) -> bool {
    node.output.get(i).is_some_and(|s| !s.is_empty())
}

/// Binary ops that before opset 7 broadcast only with `broadcast = 1`,
/// aligning the second operand at `axis` instead of at the end.
pub const LEGACY_BROADCAST: &[&str] = &[
    "Add", "And", "Div", "Equal", "Greater", "Less", "Mul", "Or", "Pow", "Sub", "Xor",
];

impl Importer<'_> {
    pub(super) fn legacy(
        &mut self,
        node: &NodeProto,
        version: i64,
        attrs: &mut Vec<(String, Attribute)>,
        operands: &mut [ValueId],
        loc: &Location,
    ) -> Result<Legacy, Diagnostic> {
        // A buffer-reuse hint of opsets < 6, without meaning for results.
        take_int(attrs, "consumed_inputs");
        let op_type = node.op_type.as_str();
        match op_type {
            "BatchNormalization" | "Dropout" => {}
            _ if version < 7 && LEGACY_BROADCAST.contains(&op_type) => {
                self.legacy_broadcast(node, attrs, operands, loc)?;
                return Ok(Legacy::Keep);
            }
            "Gemm" if version < 7 => {
                // C broadcasts in every version we accept.
                take_int(attrs, "broadcast");
                return Ok(Legacy::Keep);
            }
            "Cast" if version < 6 => {
                let pos = attrs.iter().position(|(k, _)| k == "to");
                if let Some((_, to)) = pos.and_then(|p| attrs.get_mut(p)) {
                    if let Some(name) = to.as_str() {
                        let code = (0..64)
                            .find(|&c| crate::import::tensor::onnx_type_name(c) == name)
                            .ok_or_else(|| {
                                node_diag(node, format!("Cast to unknown type '{name}'"))
                            })?;
                        *to = Attribute::i64(i64::from(code));
                    }
                }
                return Ok(Legacy::Keep);
            }
            "Concat" if version < 4 => {
                if !attrs.iter().any(|(k, _)| k == "axis") {
                    attrs.push(("axis".into(), Attribute::i64(1)));
                }
                return Ok(Legacy::Keep);
            }
            _ => return Ok(Legacy::Keep),
        }
        if version < 7 && take_int(attrs, "is_test").unwrap_or(0) == 0 {
            return Err(node_diag(
                node,
                format!(
                    "{op_type} in training mode (is_test = 0, opset {version}) is not supported; \
                     inference models set is_test = 1"
                ),
            ));
        }
        if op_type == "Dropout" {
            return self.legacy_dropout(node, version, attrs, operands, loc);
        }
        let spatial = if version < 9 {
            take_int(attrs, "spatial").unwrap_or(1)
        } else {
            1
        };
        if version >= 14 {
            return Ok(Legacy::Keep);
        }
        // Before opset 14, training mode meant asking for the statistics.
        let training = (1..node.output.len()).any(|i| named(node, i));
        if named(node, 3) || named(node, 4) {
            return Err(node_diag(
                node,
                "BatchNormalization outputs saved_mean/saved_var (training, opset < 14) \
                 are not supported"
                    .into(),
            ));
        }
        if spatial == 0 {
            if training {
                return Err(node_diag(
                    node,
                    "BatchNormalization in training mode with spatial = 0 is not supported".into(),
                ));
            }
            self.per_activation_batch_norm(node, attrs, operands, loc)?;
            return Ok(Legacy::Imported);
        }
        if training {
            attrs.push(("training_mode".into(), Attribute::i64(1)));
        }
        Ok(Legacy::Outputs(
            node.output.iter().take(3).cloned().collect(),
        ))
    }

    /// `broadcast = 1, axis = a`: the second operand's dims line up with
    /// the first's from `a` on; trailing unit dims make that NumPy's
    /// alignment from the end.
    fn legacy_broadcast(
        &mut self,
        node: &NodeProto,
        attrs: &mut Vec<(String, Attribute)>,
        operands: &mut [ValueId],
        loc: &Location,
    ) -> Result<(), Diagnostic> {
        let broadcast = take_int(attrs, "broadcast").unwrap_or(0);
        let axis = take_int(attrs, "axis");
        let (Some(axis), 1) = (axis, broadcast) else {
            return Ok(());
        };
        let rank = |imp: &Self, i: usize| {
            operands
                .get(i)
                .and_then(|&v| imp.m.value_type(v).shape().map(<[i64]>::len))
                .and_then(|r| i64::try_from(r).ok())
        };
        let (Some(ra), Some(rb)) = (rank(self, 0), rank(self, 1)) else {
            return Err(node_diag(
                node,
                "broadcast with 'axis' (opset < 7) needs operands of known rank".into(),
            ));
        };
        let start = if axis < 0 { axis + ra } else { axis };
        let trailing = ra - start - rb;
        if start < 0 || trailing < 0 {
            return Err(node_diag(
                node,
                format!("broadcast axis {axis} does not fit ranks {ra} and {rb}"),
            ));
        }
        if trailing == 0 {
            return Ok(());
        }
        let axes: Vec<f64> = (rb..rb + trailing).map(|a| a as f64).collect();
        let axes = small_elements(DType::I64, vec![trailing], &axes)?;
        let axes = self.constant_value(axes, suffixed(loc, "axes"))?;
        let b = operands
            .get_mut(1)
            .ok_or_else(|| node_diag(node, "needs two inputs".into()))?;
        let elem = self.m.value_type(*b).element_type().clone();
        let unsqueeze = self.create(
            "onnx.Unsqueeze",
            vec![*b, axes],
            vec![Type::unranked_tensor(elem)],
            Vec::new(),
            suffixed(loc, "aligned"),
        )?;
        self.infer(unsqueeze);
        *b = self
            .m
            .result(unsqueeze, 0)
            .ok_or_else(|| Diagnostic::error("internal: op without result"))?;
        Ok(())
    }

    /// Dropout before opset 10 typed its mask like the data; ours is bool,
    /// so a used mask goes through a Cast.
    fn legacy_dropout(
        &mut self,
        node: &NodeProto,
        version: i64,
        attrs: &[(String, Attribute)],
        operands: &[ValueId],
        loc: &Location,
    ) -> Result<Legacy, Diagnostic> {
        if version >= 10 || !named(node, 1) {
            return Ok(Legacy::Keep);
        }
        let x = *operands
            .first()
            .ok_or_else(|| node_diag(node, "Dropout needs an input".into()))?;
        let elem = self.m.value_type(x).element_type().clone();
        let to = DType::from_type(&elem)
            .map(crate::import::tensor::dtype_to_onnx)
            .ok_or_else(|| node_diag(node, "Dropout input has no numeric type".into()))?;
        let data = Type::unranked_tensor(elem.clone());
        let dropout = self.create(
            "onnx.Dropout",
            operands.to_vec(),
            vec![data, Type::unranked_tensor(Type::i1())],
            attrs.to_vec(),
            loc.clone(),
        )?;
        let mask = self.m.result(dropout, 1);
        let mask = mask.ok_or_else(|| Diagnostic::error("internal: Dropout without mask"))?;
        let cast = self.create(
            "onnx.Cast",
            vec![mask],
            vec![Type::unranked_tensor(elem)],
            vec![("to".into(), Attribute::i64(i64::from(to)))],
            suffixed(loc, "mask"),
        )?;
        let data_only = NodeProto {
            output: node.output.iter().take(1).cloned().collect(),
            ..node.clone()
        };
        self.finish_node(&data_only, dropout)?;
        let mask_only = NodeProto {
            output: node.output.iter().skip(1).take(1).cloned().collect(),
            doc_string: String::new(),
            ..node.clone()
        };
        self.finish_node(&mask_only, cast)?;
        Ok(Legacy::Imported)
    }

    /// `spatial = 0`: statistics per activation (shaped C × D1 × … × Dn),
    /// which is the batch-norm formula with NumPy broadcasting:
    /// `(x - mean) * (scale / sqrt(var + epsilon)) + bias`.
    fn per_activation_batch_norm(
        &mut self,
        node: &NodeProto,
        attrs: &[(String, Attribute)],
        operands: &[ValueId],
        loc: &Location,
    ) -> Result<(), Diagnostic> {
        let &[x, scale, bias, mean, var] = operands else {
            return Err(node_diag(node, "BatchNormalization needs 5 inputs".into()));
        };
        let elem = self.m.value_type(x).element_type().clone();
        let dtype = DType::from_type(&elem)
            .ok_or_else(|| node_diag(node, "BatchNormalization input is not numeric".into()))?;
        let eps = attrs
            .iter()
            .find(|(k, _)| k == "epsilon")
            .and_then(|(_, a)| a.as_float())
            .unwrap_or(1e-5);
        let eps = small_elements(dtype, vec![], &[eps])?;
        let eps = self.constant_value(eps, suffixed(loc, "epsilon"))?;
        let ty = Type::unranked_tensor(elem);
        // Each step is inferred as built; the last one by finish_node.
        let step = |imp: &mut Self, op: &str, args: Vec<ValueId>, tag: &str| {
            let op = imp.create(op, args, vec![ty.clone()], Vec::new(), suffixed(loc, tag))?;
            imp.infer(op);
            imp.m
                .result(op, 0)
                .ok_or_else(|| Diagnostic::error("internal: op without result"))
        };
        let var_eps = step(self, "onnx.Add", vec![var, eps], "var_eps")?;
        let std = step(self, "onnx.Sqrt", vec![var_eps], "std")?;
        let k = step(self, "onnx.Div", vec![scale, std], "k")?;
        let centered = step(self, "onnx.Sub", vec![x, mean], "centered")?;
        let scaled = step(self, "onnx.Mul", vec![centered, k], "scaled")?;
        let last = self.create(
            "onnx.Add",
            vec![scaled, bias],
            vec![ty],
            Vec::new(),
            suffixed(loc, "y"),
        )?;
        self.finish_node(node, last)
    }
}

fn suffixed(loc: &Location, tag: &str) -> Location {
    match loc {
        Location::Name(n) => Location::name(&format!("{n}.{tag}")),
        other => other.clone(),
    }
}
