//! Typed attribute and operand readers behind the generated accessors.
//! Attributes are
//! checked against the table when an op is imported or verified, so a
//! reader meets only the type the table declares; a hand-written module
//! that was not verified gets the type's zero instead of a panic.

use ir::elements::Elements;
use ir::{Attribute, Module, OpId, Type, ValueId};

/// An optional operand, unless it is omitted (a `none` value).
pub fn present(m: &Module, v: Option<ValueId>) -> Option<ValueId> {
    v.filter(|&v| *m.value_type(v) != Type::None)
}

fn get<'m>(m: &'m Module, op: OpId, name: &str) -> Option<&'m Attribute> {
    m.attr(op, name)
}

pub fn int_opt(m: &Module, op: OpId, name: &str) -> Option<i64> {
    get(m, op, name).and_then(Attribute::as_int)
}
pub fn float_opt(m: &Module, op: OpId, name: &str) -> Option<f64> {
    get(m, op, name).and_then(Attribute::as_float)
}
pub fn string_opt<'m>(m: &'m Module, op: OpId, name: &str) -> Option<&'m str> {
    get(m, op, name).and_then(Attribute::as_str)
}
pub fn ints_opt(m: &Module, op: OpId, name: &str) -> Option<Vec<i64>> {
    get(m, op, name).and_then(Attribute::as_i64_list)
}
pub fn floats_opt(m: &Module, op: OpId, name: &str) -> Option<Vec<f64>> {
    get(m, op, name)?
        .as_array()?
        .iter()
        .map(Attribute::as_float)
        .collect()
}
pub fn strings_opt<'m>(m: &'m Module, op: OpId, name: &str) -> Option<Vec<&'m str>> {
    get(m, op, name)?
        .as_array()?
        .iter()
        .map(Attribute::as_str)
        .collect()
}
pub fn tensor_opt<'m>(m: &'m Module, op: OpId, name: &str) -> Option<&'m Elements> {
    get(m, op, name).and_then(Attribute::as_elements)
}
pub fn type_opt<'m>(m: &'m Module, op: OpId, name: &str) -> Option<&'m Type> {
    get(m, op, name).and_then(Attribute::as_type)
}

pub fn int_or_zero(m: &Module, op: OpId, name: &str) -> i64 {
    int_opt(m, op, name).unwrap_or(0)
}
pub fn float_or_zero(m: &Module, op: OpId, name: &str) -> f64 {
    float_opt(m, op, name).unwrap_or(0.0)
}
pub fn string_or_zero<'m>(m: &'m Module, op: OpId, name: &str) -> &'m str {
    string_opt(m, op, name).unwrap_or("")
}
pub fn ints_or_zero(m: &Module, op: OpId, name: &str) -> Vec<i64> {
    ints_opt(m, op, name).unwrap_or_default()
}
pub fn floats_or_zero(m: &Module, op: OpId, name: &str) -> Vec<f64> {
    floats_opt(m, op, name).unwrap_or_default()
}
pub fn strings_or_zero<'m>(m: &'m Module, op: OpId, name: &str) -> Vec<&'m str> {
    strings_opt(m, op, name).unwrap_or_default()
}

/// An ONNX op to insert: kind, operands (an omitted optional operand is
/// `None`) and attributes. The typed builders fill it
/// (`ops::Gemm::build(a, b, Some(c)).alpha(0.5)`); `insert` places it.
#[derive(Clone, Debug)]
pub struct NewOp {
    pub kind: crate::OpKind,
    pub operands: Vec<Option<ValueId>>,
    pub attrs: Vec<(ir::Sym, Attribute)>,
}

impl NewOp {
    pub fn new(kind: crate::OpKind, operands: Vec<Option<ValueId>>) -> NewOp {
        NewOp {
            kind,
            operands,
            attrs: Vec::new(),
        }
    }

    /// Sets attribute `name`, replacing an earlier value.
    pub fn set(&mut self, name: &'static str, value: Attribute) {
        let key = ir::Sym::new(name);
        self.attrs.retain(|(k, _)| *k != key);
        self.attrs.push((key, value));
    }

    /// Inserts the op at `at` with results of `result_types`. Trailing
    /// omitted operands are left off; an omitted one before a present one
    /// becomes a `none` value, as the importer writes it.
    pub fn insert(
        mut self,
        m: &mut Module,
        at: ir::InsertPoint,
        result_types: Vec<Type>,
        loc: ir::Location,
    ) -> OpId {
        while self.operands.last().is_some_and(Option::is_none) {
            self.operands.pop();
        }
        let mut operands = Vec::with_capacity(self.operands.len());
        for v in self.operands {
            let v = v.unwrap_or_else(|| none_value(m, at, loc.clone()));
            operands.push(v);
        }
        let spec = ir::OpSpec {
            operands,
            result_types,
            attrs: self.attrs,
            loc,
            ..ir::OpSpec::default()
        };
        let op = m.create_op(ir::Sym::new(self.kind.ir_name()), spec);
        m.insert(op, at);
        op
    }
}

/// A `none` value (a `NoValue` op: an omitted optional operand) inserted
/// at `at`.
pub fn none_value(m: &mut Module, at: ir::InsertPoint, loc: ir::Location) -> ValueId {
    let spec = ir::OpSpec {
        result_types: vec![Type::None],
        loc,
        ..ir::OpSpec::default()
    };
    let op = m.create_op(ir::Sym::new(crate::OpKind::NoValue.ir_name()), spec);
    m.insert(op, at);
    m.results(op)[0]
}

pub fn int_attr(v: i64) -> Attribute {
    Attribute::i64(v)
}
pub fn float_attr(v: f64) -> Attribute {
    Attribute::Float(v, Type::f32())
}
pub fn string_attr(v: &str) -> Attribute {
    Attribute::string(v)
}
pub fn ints_attr(v: &[i64]) -> Attribute {
    Attribute::Array(v.iter().map(|&v| Attribute::i64(v)).collect())
}
pub fn floats_attr(v: &[f64]) -> Attribute {
    Attribute::Array(v.iter().map(|&v| float_attr(v)).collect())
}
pub fn strings_attr(v: &[&str]) -> Attribute {
    Attribute::Array(v.iter().map(|v| Attribute::string(v)).collect())
}
pub fn tensor_attr(v: Elements) -> Attribute {
    Attribute::Elements(v)
}
