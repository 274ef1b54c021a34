//! `memref.global` → an LLVM global holding the elements as a flat array
//! (the descriptor made by `memref.get_global` does the indexing).

use super::memref::HEAP_ALIGN;
use super::types::{elem_size, escape_bytes, float_literal, global_name, int_literal, scalar};
use ir::attr::Attribute;
use ir::dialects::op_error;
use ir::elements::{Elements, NumClass};
use ir::{Module, OpId, Result, Type};
use std::fmt::Write as _;

/// Up to this many elements, initializers are written as typed arrays.
const MAX_ARRAY_LITERAL: usize = 1024;

pub(crate) fn emit_global(m: &Module, op: OpId, out: &mut String) -> Result<()> {
    let err = |msg: String| op_error(m, op, msg);
    let name = m
        .attr(op, "sym_name")
        .and_then(Attribute::as_str)
        .ok_or_else(|| err("requires a 'sym_name'".into()))?;
    let mt = m
        .attr(op, "type")
        .and_then(Attribute::as_type)
        .and_then(Type::as_memref)
        .ok_or_else(|| err("requires a memref 'type'".into()))?;
    let n = mt
        .num_elements()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| err("type must have a static shape".into()))?;
    let elem = scalar(&mt.elem).map_err(err)?;
    elem_size(&mt.elem).map_err(err)?;
    let align = m
        .attr(op, "alignment")
        .and_then(Attribute::as_int)
        .unwrap_or(HEAP_ALIGN)
        .max(HEAP_ALIGN);
    let private = m.attr(op, "sym_visibility").and_then(Attribute::as_str) == Some("private");
    let kind = if m.attr(op, "constant").is_some() {
        "constant"
    } else {
        "global"
    };
    let g = global_name(name);
    let (ty, init) = match m.attr(op, "initial_value") {
        None if !private => {
            let _ = writeln!(out, "{g} = external global [{n} x {elem}], align {align}");
            return Ok(());
        }
        Some(Attribute::Elements(e)) => initializer(e, &mt.elem, n).map_err(err)?,
        // `uninitialized`: zeroed storage.
        _ => (format!("[{n} x {elem}]"), "zeroinitializer".into()),
    };
    let linkage = if private { "internal " } else { "" };
    let _ = writeln!(out, "{g} = {linkage}{kind} {ty} {init}, align {align}");
    Ok(())
}

/// The global's type and initializer for `e`.
fn initializer(e: &Elements, elem: &Type, n: usize) -> Result<(String, String), String> {
    let ety = scalar(elem)?;
    if e.len() != n {
        return Err(format!(
            "initial value has {} elements, the type {n}",
            e.len()
        ));
    }
    let array_ty = format!("[{n} x {ety}]");
    if e.iter().all(|v| v.u64() == 0) {
        return Ok((array_ty, "zeroinitializer".into()));
    }
    let bits = e.dtype().bits();
    let byte_exact = elem_size(elem).is_ok_and(|s| u64::from(bits) == s * 8);
    if n > MAX_ARRAY_LITERAL && byte_exact {
        let bytes = e.to_contiguous_bytes();
        return Ok((
            format!("[{} x i8]", bytes.len()),
            format!("c\"{}\"", escape_bytes(&bytes)),
        ));
    }
    let class = e.dtype().class();
    let mut items = Vec::with_capacity(n);
    for v in e.iter() {
        let lit = match (elem, class) {
            (Type::Float(k), _) => float_literal(v.f64(), *k)?,
            (_, NumClass::Signed) => int_literal(v.i64(), elem.bit_width().unwrap_or(64)),
            (_, NumClass::Unsigned) => int_literal(v.u64() as i64, elem.bit_width().unwrap_or(64)),
            (_, NumClass::Float) => return Err("float data for an integer global".into()),
        };
        items.push(format!("{ety} {lit}"));
    }
    Ok((array_ty, format!("[{}]", items.join(", "))))
}
