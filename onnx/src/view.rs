//! Typed attribute readers behind the generated accessors. Attributes are
//! checked against the table when an op is imported or verified, so a
//! reader meets only the type the table declares; a hand-written module
//! that was not verified gets the type's zero instead of a panic.

use ir::elements::Elements;
use ir::{Attribute, Module, OpId, Type};

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
