//! Checks an op against its table row: operand and result counts, and
//! each attribute's type; required attributes present. The importer runs
//! it on every op it creates, the IR verifier on every op it visits.

use crate::schema::{AttrDefault, AttrType, OpSchema};
use crate::OpKind;
use ir::{Attribute, Module, OpId};

/// Whether `a` holds a value of type `ty`.
pub fn attr_has_type(a: &Attribute, ty: AttrType) -> bool {
    let all = |f: fn(&Attribute) -> bool| a.as_array().is_some_and(|l| l.iter().all(f));
    match ty {
        AttrType::Int => matches!(a, Attribute::Int(..) | Attribute::Bool(_)),
        AttrType::Float => matches!(a, Attribute::Float(..) | Attribute::Int(..)),
        AttrType::String => matches!(a, Attribute::String(_)),
        AttrType::Ints => {
            matches!(a, Attribute::DenseArray(..)) || all(|x| matches!(x, Attribute::Int(..)))
        }
        AttrType::Floats => all(|x| matches!(x, Attribute::Float(..) | Attribute::Int(..))),
        AttrType::Strings => all(|x| matches!(x, Attribute::String(_))),
        AttrType::Tensor => matches!(a, Attribute::Elements(_)),
        AttrType::Tensors => all(|x| matches!(x, Attribute::Elements(_))),
        AttrType::Type => matches!(a, Attribute::Type(_)),
        AttrType::Types => all(|x| matches!(x, Attribute::Type(_))),
        AttrType::Graph | AttrType::Graphs | AttrType::SparseTensor => false,
    }
}

/// Checks the attributes given as `(name, value)` against `schema`.
/// Names with the `onnx.` prefix are onnxc's own and not checked;
/// attributes the schema does not know are left to the caller.
pub fn check_attrs<'a>(
    schema: &OpSchema,
    attrs: impl Iterator<Item = (&'a str, &'a Attribute)> + Clone,
) -> Result<(), String> {
    for (name, value) in attrs.clone() {
        let Some(a) = schema.attr(name) else {
            continue;
        };
        if !attr_has_type(value, a.ty) {
            return Err(format!(
                "attribute '{name}' must be of type {}",
                a.ty.name()
            ));
        }
    }
    for a in schema.attrs {
        let region = matches!(a.ty, AttrType::Graph | AttrType::Graphs);
        if matches!(a.default, AttrDefault::Required)
            && !region
            && !attrs.clone().any(|(n, _)| n == a.name)
        {
            return Err(format!("attribute '{}' is required", a.name));
        }
    }
    Ok(())
}

/// Checks a count of operands (results) against the inputs (outputs).
pub fn check_count(what: &str, n: usize, params: &[crate::Param]) -> Result<(), String> {
    let (min, max) = OpSchema::arity_range(params);
    if n < min {
        return Err(format!("needs at least {min} {what}, has {n}"));
    }
    if n > max {
        return Err(format!("takes at most {max} {what}, has {n}"));
    }
    Ok(())
}

/// Checks `op` (of `kind`) as the IR holds it.
pub fn check_op(m: &Module, op: OpId, kind: OpKind) -> Result<(), String> {
    let s = kind.schema();
    check_count("operands", m.operands(op).len(), s.inputs)?;
    check_count("results", m.results(op).len(), s.outputs)?;
    let attrs = m.attrs(op).iter().map(|(k, v)| (k.as_str(), v));
    check_attrs(s, attrs)?;
    let regions = crate::dialect::region_attr_names(kind).len();
    if m.regions(op).len() != regions {
        return Err(format!("must have {regions} regions"));
    }
    Ok(())
}
