//! Registration of the `onnx` and `onnx_ml` dialects with the IR, and the
//! attribute names onnxc adds to imported ops and functions.

use crate::{OpKind, SCHEMAS};
use ir::dialects::op_error;
use ir::registry::{OpDef, Syntax, Traits};
use ir::{Attribute, Module, OpId};
use std::sync::{Once, OnceLock};

/// Terminator of `If`/`Loop`/`Scan` regions: its operands are the
/// subgraph's outputs, in order.
pub const YIELD: &str = "onnx.Yield";

/// Op attribute: the ONNX names of the op's results (an array of strings,
/// `""` for an omitted optional output). Absent when the only result is
/// named like the op's location.
pub const NAMES_ATTR: &str = "onnx.names";
/// Op attribute of `If`/`Loop`/`Scan`: per region, a dictionary with the
/// subgraph's `name` and the ONNX names of its `inputs` (the block
/// arguments) and `outputs` (the yielded values).
pub const GRAPHS_ATTR: &str = "onnx.graphs";
/// Main-function attributes: per graph input (output), the `dim_param`
/// names of its dims (`""` where a dim has none; an empty list for a value
/// without any). Absent when no input (output) has a symbolic dim.
pub const DIM_PARAMS_IN: &str = "onnx.input_dim_params";
pub const DIM_PARAMS_OUT: &str = "onnx.output_dim_params";
/// Op, function or module attribute: the ONNX `doc_string`.
pub const DOC_ATTR: &str = "onnx.doc_string";
/// Op attribute: the node's attributes whose names are not in the
/// vocabulary (see [`attr_sym`]), kept for export as `[name, value]`
/// pairs. Their names live with the module, never in the global symbol
/// table, so a model cannot grow it.
pub const EXTRA_ATTRS: &str = "onnx.extra_attrs";

/// onnxc's own attribute names on imported ops and functions.
pub const OWN_ATTRS: &[&str] = &[
    NAMES_ATTR,
    GRAPHS_ATTR,
    DIM_PARAMS_IN,
    DIM_PARAMS_OUT,
    DOC_ATTR,
    EXTRA_ATTRS,
];

/// The symbol of an attribute name of the fixed vocabulary: a name of the
/// op table (any op's) or one of onnxc's own; `None` for any other name.
pub fn attr_sym(name: &str) -> Option<ir::Sym> {
    static VOCAB: OnceLock<std::collections::HashMap<&'static str, ir::Sym>> = OnceLock::new();
    VOCAB
        .get_or_init(|| {
            let table = SCHEMAS.iter().flat_map(|s| s.attrs.iter().map(|a| a.name));
            table
                .chain(OWN_ATTRS.iter().copied())
                .map(|n| (n, ir::Sym::new(n)))
                .collect()
        })
        .get(name)
        .copied()
}

/// The `(name, value)` pairs kept under [`EXTRA_ATTRS`].
pub fn extra_attrs(m: &Module, op: OpId) -> impl Iterator<Item = (&str, &Attribute)> {
    let pairs = m.attr(op, EXTRA_ATTRS).and_then(Attribute::as_array);
    pairs
        .into_iter()
        .flatten()
        .filter_map(|p| match p.as_array()? {
            [name, value] => Some((name.as_str()?, value)),
            _ => None,
        })
}

/// Splits a node's attributes into vocabulary ones and the rest, which
/// become one [`EXTRA_ATTRS`] attribute.
pub fn intern_attrs(attrs: Vec<(String, Attribute)>) -> Vec<(ir::Sym, Attribute)> {
    let mut out = Vec::with_capacity(attrs.len());
    let mut extra = Vec::new();
    for (k, v) in attrs {
        match attr_sym(&k) {
            Some(sym) => out.push((sym, v)),
            None => extra.push(Attribute::Array(vec![Attribute::string(&k), v].into())),
        }
    }
    if !extra.is_empty() {
        out.push((ir::Sym::new(EXTRA_ATTRS), Attribute::Array(extra.into())));
    }
    out
}

/// The graph attributes of an op, one per region, in region order.
pub fn region_attr_names(kind: OpKind) -> &'static [&'static str] {
    match kind {
        OpKind::If => &["then_branch", "else_branch"],
        OpKind::Loop | OpKind::Scan => &["body"],
        _ => &[],
    }
}

fn table() -> &'static [OpDef] {
    static TABLE: OnceLock<Vec<OpDef>> = OnceLock::new();
    TABLE.get_or_init(|| {
        SCHEMAS
            .iter()
            .map(|s| {
                let traits = if s.terminator {
                    Traits::TERMINATOR.union(Traits::RETURN_LIKE)
                } else if s.pure {
                    Traits::PURE
                } else {
                    Traits::NONE
                };
                OpDef::new(s.ir_name, traits, Syntax::Generic).verified(verify)
            })
            .collect()
    })
}

/// Registers the ONNX dialects with the IR registry (idempotent).
pub fn register() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| ir::registry::register(table()));
}

fn verify(m: &Module, op: OpId) -> ir::Result<()> {
    let Some(kind) = OpKind::of(m, op) else {
        return Ok(());
    };
    crate::verify::check_op(m, op, kind).map_err(|e| op_error(m, op, e))?;
    if kind == OpKind::Constant {
        verify_constant(m, op)?;
    }
    Ok(())
}

/// `onnx.Constant`: a `value` elements attribute whose type is the result's.
fn verify_constant(m: &Module, op: OpId) -> ir::Result<()> {
    let Some(Attribute::Elements(e)) = m.attr(op, "value") else {
        return Err(op_error(m, op, "requires a 'value' elements attribute"));
    };
    let [r] = m.results(op) else {
        return Err(op_error(m, op, "must have exactly one result"));
    };
    let ty = m.value_type(*r);
    if *ty != e.tensor_type() {
        return Err(op_error(
            m,
            op,
            format!(
                "result type {ty} differs from the value's type {}",
                e.tensor_type()
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::AttrType;

    #[test]
    fn region_names_are_the_graph_attributes_of_the_table() {
        for s in SCHEMAS.iter() {
            let mut graphs: Vec<&str> = s
                .attrs
                .iter()
                .filter(|a| a.ty == AttrType::Graph)
                .map(|a| a.name)
                .collect();
            let mut regions = region_attr_names(s.kind).to_vec();
            graphs.sort_unstable();
            regions.sort_unstable();
            assert_eq!(graphs, regions, "{}", s.name);
        }
    }

    #[test]
    fn every_ir_name_maps_back_to_its_kind() {
        for s in SCHEMAS.iter() {
            assert_eq!(OpKind::from_sym(ir::Sym::new(s.ir_name)), Some(s.kind));
        }
        assert_eq!(OpKind::from_sym(ir::Sym::new("arith.addf")), None);
        assert_eq!(OpKind::from_model("", "Conv"), Some(OpKind::Conv));
        assert_eq!(
            OpKind::from_model("ai.onnx.ml", "Scaler"),
            Some(OpKind::Scaler)
        );
        assert_eq!(OpKind::from_model("", "NoValue"), None);
    }
}
