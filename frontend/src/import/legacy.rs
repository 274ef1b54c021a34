//! Version normalization beyond moved attributes (normalize.rs), for the
//! older forms [`crate::forms::Legacy`] names: legacy broadcasting with
//! `broadcast`/`axis` (opset < 7), `Cast` to a type name (opset < 6),
//! `Concat` without an axis (opset < 4), `consumed_inputs`, a float `p` of
//! LpPool (opset < 2); BatchNormalization with `is_test` (opset < 7),
//! per-activation statistics (`spatial = 0`, opset < 9) and training
//! signalled by extra outputs (opset < 14); Dropout with `is_test` and a
//! mask typed like the data (opset < 10); Softmax, LogSoftmax and Hardmax
//! on the input coerced to 2-D (opset < 13). After this step each op has
//! its newest form; export writes the legacy attributes back
//! (export/denormalize.rs).

use super::{node_diag, small_elements, Importer};
use crate::forms::Legacy;
use crate::proto::NodeProto;
use ir::elements::DType;
use ir::{Attribute, Diagnostic, Location, Type, ValueId};
use onnx::OpKind;

/// How import creates a node's op once its legacy attributes are handled.
pub(super) enum Plan {
    /// As is.
    Keep,
    /// With these outputs instead of the node's own.
    Outputs(Vec<String>),
    /// BatchNormalization with per-activation statistics: decomposed.
    PerActivationBatchNorm,
    /// Dropout whose mask is used: the mask through a Cast to the data type.
    CastMask,
    /// Softmax-like op over the rows of the input flattened at `axis`.
    Rows { axis: i64 },
}

fn take_int(attrs: &mut Vec<(String, Attribute)>, name: &str) -> Option<i64> {
    let pos = attrs.iter().position(|(k, _)| k == name)?;
    attrs.remove(pos).1.as_int()
}

fn named(node: &NodeProto, i: usize) -> bool {
    node.output.get(i).is_some_and(|s| !s.is_empty())
}

impl Importer<'_> {
    /// Rewrites the attributes (and operands) of an older form of the op
    /// into its newest form.
    pub(super) fn legacy(
        &mut self,
        node: &NodeProto,
        legacy: Legacy,
        version: i64,
        attrs: &mut Vec<(String, Attribute)>,
        operands: &mut [ValueId],
        loc: &Location,
    ) -> Result<Plan, Diagnostic> {
        // A buffer-reuse hint of opsets < 6, without meaning for results.
        take_int(attrs, "consumed_inputs");
        if version >= legacy.newest_from() {
            return Ok(Plan::Keep);
        }
        match legacy {
            // Refused before (node.rs); nothing to rewrite otherwise.
            Legacy::None | Legacy::Resize | Legacy::Scan => {}
            Legacy::Broadcast => self.legacy_broadcast(node, attrs, operands, loc)?,
            Legacy::Gemm => {
                // C broadcasts in every version we accept.
                take_int(attrs, "broadcast");
            }
            Legacy::Cast => cast_to_code(node, attrs)?,
            Legacy::Concat => {
                if !attrs.iter().any(|(k, _)| k == "axis") {
                    attrs.push(("axis".into(), Attribute::i64(1)));
                }
            }
            Legacy::FloatP => float_p(node, attrs)?,
            Legacy::BatchNorm => return legacy_batch_norm(node, version, attrs),
            Legacy::Dropout => return legacy_dropout(node, version, attrs),
            Legacy::Rows2d => return Ok(self.rows_2d(attrs, operands)),
        }
        Ok(Plan::Keep)
    }

    /// Softmax-like ops before opset 13 work on the input coerced to 2-D at
    /// `axis` (default 1). When that axis is the last one, that is the
    /// newest form's meaning already; else the op goes on the rows of the
    /// flattened input.
    fn rows_2d(&self, attrs: &mut Vec<(String, Attribute)>, operands: &[ValueId]) -> Plan {
        let pos = attrs.iter().position(|(k, _)| k == "axis");
        let given = pos.and_then(|p| attrs.get(p)).map(|(_, a)| a.as_int());
        let axis = match given {
            Some(Some(a)) => a,
            None => 1,
            // Not an int: the check against the table reports it.
            Some(None) => return Plan::Keep,
        };
        let rank = operands
            .first()
            .and_then(|&x| self.m.value_type(x).shape())
            .map(<[i64]>::len);
        if let Some(r) = rank.filter(|&r| r > 0) {
            if onnx::axis::normalize(axis, r) == Some(r - 1) {
                return Plan::Keep;
            }
        }
        if let Some(p) = pos {
            attrs.remove(p);
        }
        Plan::Rows { axis }
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
        let ty = Type::unranked_tensor(elem);
        let aligned = suffixed(loc, "aligned");
        *b = self.step(OpKind::Unsqueeze, vec![*b, axes], &ty, Vec::new(), aligned)?;
        Ok(())
    }

    /// Dropout before opset 10 typed its mask like the data; ours is bool,
    /// so the mask goes through a Cast ([`Plan::CastMask`]).
    pub(super) fn import_cast_mask(
        &mut self,
        node: &NodeProto,
        attrs: Vec<(String, Attribute)>,
        operands: Vec<ValueId>,
        loc: &Location,
    ) -> Result<(), Diagnostic> {
        let x = *operands
            .first()
            .ok_or_else(|| node_diag(node, "Dropout needs an input".into()))?;
        let elem = self.m.value_type(x).element_type().clone();
        let to = DType::from_type(&elem)
            .map(crate::import::tensor::dtype_to_onnx)
            .ok_or_else(|| node_diag(node, "Dropout input has no numeric type".into()))?;
        let data = Type::unranked_tensor(elem.clone());
        let dropout = self.create(
            OpKind::Dropout,
            operands,
            vec![data, Type::unranked_tensor(Type::i1())],
            attrs,
            loc.clone(),
        )?;
        let mask = self.m.result(dropout, 1);
        let mask = mask.ok_or_else(|| Diagnostic::error("internal: Dropout without mask"))?;
        let cast = self.create(
            OpKind::Cast,
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
        self.finish_node(&mask_only, cast)
    }

    /// [`Plan::Rows`]: `Reshape(op(Flatten(x, axis), axis = 1), Shape(x))`,
    /// the node's outputs bound to the Reshape.
    pub(super) fn import_rows(
        &mut self,
        node: &NodeProto,
        kind: OpKind,
        axis: i64,
        mut attrs: Vec<(String, Attribute)>,
        operands: &[ValueId],
        loc: &Location,
    ) -> Result<(), Diagnostic> {
        let &[x] = operands else {
            return Err(node_diag(node, format!("{} needs one input", kind.name())));
        };
        let elem = self.m.value_type(x).element_type().clone();
        let ty = Type::unranked_tensor(elem);
        let flat = vec![("axis".into(), Attribute::i64(axis))];
        let flat = self.step(OpKind::Flatten, vec![x], &ty, flat, suffixed(loc, "flat"))?;
        attrs.push(("axis".into(), Attribute::i64(1)));
        let rows = self.step(kind, vec![flat], &ty, attrs, suffixed(loc, "rows"))?;
        let shape_ty = Type::unranked_tensor(Type::i64());
        let shape = self.step(
            OpKind::Shape,
            vec![x],
            &shape_ty,
            Vec::new(),
            suffixed(loc, "shape"),
        )?;
        let result_types = self.result_types(node);
        let reshape = self.create(
            OpKind::Reshape,
            vec![rows, shape],
            result_types,
            Vec::new(),
            loc.clone(),
        )?;
        self.finish_node(node, reshape)
    }

    /// One op of a decomposition, inferred as built; its result.
    fn step(
        &mut self,
        kind: OpKind,
        operands: Vec<ValueId>,
        ty: &Type,
        attrs: Vec<(String, Attribute)>,
        loc: Location,
    ) -> Result<ValueId, Diagnostic> {
        let op = self.create(kind, operands, vec![ty.clone()], attrs, loc)?;
        self.infer(op);
        self.m
            .result(op, 0)
            .ok_or_else(|| Diagnostic::error("internal: op without result"))
    }

    /// `spatial = 0`: statistics per activation (shaped C × D1 × … × Dn),
    /// which is the batch-norm formula with NumPy broadcasting:
    /// `(x - mean) * (scale / sqrt(var + epsilon)) + bias`.
    pub(super) fn per_activation_batch_norm(
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
        let eps = match attrs.iter().find(|(k, _)| k == "epsilon") {
            Some((_, a)) => a.as_float(),
            None => float_default(OpKind::BatchNormalization, "epsilon"),
        };
        let eps = small_elements(dtype, vec![], &[eps.unwrap_or(0.0)])?;
        let eps = self.constant_value(eps, suffixed(loc, "epsilon"))?;
        let ty = Type::unranked_tensor(elem);
        // Each step is inferred as built; the last one by finish_node.
        let step = |imp: &mut Self, kind: OpKind, args: Vec<ValueId>, tag: &str| {
            imp.step(kind, args, &ty, Vec::new(), suffixed(loc, tag))
        };
        let var_eps = step(self, OpKind::Add, vec![var, eps], "var_eps")?;
        let std = step(self, OpKind::Sqrt, vec![var_eps], "std")?;
        let k = step(self, OpKind::Div, vec![scale, std], "k")?;
        let centered = step(self, OpKind::Sub, vec![x, mean], "centered")?;
        let scaled = step(self, OpKind::Mul, vec![centered, k], "scaled")?;
        let last = self.create(
            OpKind::Add,
            vec![scaled, bias],
            vec![ty],
            Vec::new(),
            suffixed(loc, "y"),
        )?;
        self.finish_node(node, last)
    }
}

/// The table's default of a float attribute.
fn float_default(kind: OpKind, name: &str) -> Option<f64> {
    match kind.schema().attr(name)?.default {
        onnx::AttrDefault::Float(f) => Some(f64::from(f)),
        _ => None,
    }
}

/// Cast before opset 6 names its target type (`to = "FLOAT"`).
fn cast_to_code(node: &NodeProto, attrs: &mut [(String, Attribute)]) -> Result<(), Diagnostic> {
    let Some((_, to)) = attrs.iter_mut().find(|(k, _)| k == "to") else {
        return Ok(());
    };
    if let Some(name) = to.as_str() {
        let code = (0..64)
            .find(|&c| crate::import::tensor::onnx_type_name(c) == name)
            .ok_or_else(|| node_diag(node, format!("Cast to unknown type '{name}'")))?;
        *to = Attribute::i64(i64::from(code));
    }
    Ok(())
}

/// LpPool and GlobalLpPool before opset 2 take `p` as a float.
fn float_p(node: &NodeProto, attrs: &mut [(String, Attribute)]) -> Result<(), Diagnostic> {
    let Some((_, p)) = attrs.iter_mut().find(|(k, _)| k == "p") else {
        return Ok(());
    };
    if let (Attribute::Float(..), Some(v)) = (&*p, p.as_float()) {
        if v.fract() != 0.0 || !(1.0..=i64::MAX as f64).contains(&v) {
            return Err(node_diag(
                node,
                format!("unsupported non-integer or non-positive p = {v} (opset 1)"),
            ));
        }
        *p = Attribute::i64(v as i64);
    }
    Ok(())
}

/// BatchNormalization before opset 14 (`version` is older than that).
fn legacy_batch_norm(
    node: &NodeProto,
    version: i64,
    attrs: &mut Vec<(String, Attribute)>,
) -> Result<Plan, Diagnostic> {
    if version < 7 && take_int(attrs, "is_test").unwrap_or(0) == 0 {
        return Err(training_refused(node, version));
    }
    let spatial = if version < 9 {
        take_int(attrs, "spatial").unwrap_or(1)
    } else {
        1
    };
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
        return Ok(Plan::PerActivationBatchNorm);
    }
    if training {
        attrs.push(("training_mode".into(), Attribute::i64(1)));
    }
    Ok(Plan::Outputs(node.output.iter().take(3).cloned().collect()))
}

/// Dropout before opset 10 (`version` is older than that).
fn legacy_dropout(
    node: &NodeProto,
    version: i64,
    attrs: &mut Vec<(String, Attribute)>,
) -> Result<Plan, Diagnostic> {
    if version < 7 && take_int(attrs, "is_test").unwrap_or(0) == 0 {
        return Err(training_refused(node, version));
    }
    Ok(if named(node, 1) {
        Plan::CastMask
    } else {
        Plan::Keep
    })
}

fn training_refused(node: &NodeProto, version: i64) -> Diagnostic {
    node_diag(
        node,
        format!(
            "{} in training mode (is_test = 0, opset {version}) is not supported; \
             inference models set is_test = 1",
            node.op_type
        ),
    )
}

pub(super) fn suffixed(loc: &Location, tag: &str) -> Location {
    match loc {
        Location::Name(n) => Location::name(&format!("{n}.{tag}")),
        other => other.clone(),
    }
}
