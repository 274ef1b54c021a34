//! memref allocation, access and simple ops. Views, reshapes and globals
//! are in `memref_view`; `memref.cast` uses the Cast class form.

use super::{shape, simple, Form};
use crate::attr::Attribute;
use crate::module::OpId;
use crate::ops::MemrefOp;
use crate::text::parser::{PResult, Parser};
use crate::text::printer::Printer;
use crate::types::Type;

pub(super) fn form(op: MemrefOp) -> Option<Form> {
    use super::memref_view as view;
    use MemrefOp as M;
    let (print, parse): (super::PrintFn, super::ParseFn) = match op {
        M::Alloc | M::Alloca => (print_alloc, parse_alloc),
        M::Realloc => (print_realloc, parse_realloc),
        M::Load => (print_load, parse_load),
        M::Store => (print_store, parse_store),
        M::Dim => (print_dim, parse_dim),
        M::Subview => (view::print_subview, view::parse_subview),
        M::ReinterpretCast => (view::print_reinterpret, view::parse_reinterpret),
        M::CollapseShape | M::ExpandShape => (view::print_reshape, view::parse_reshape),
        M::Global => (view::print_global, view::parse_global),
        // The table's cast class and declarative formats.
        M::Cast | M::Dealloc | M::Copy | M::GetGlobal | M::ExtractAlignedPointerAsIndex => {
            return None
        }
    };
    Some(Form { print, parse })
}

/// `memref.alloc(%d0) attr-dict : memref<?xf32>`: one index operand per
/// dynamic dimension (no symbol operands).
fn print_alloc(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, None, 1, 0)?;
    let ty = m.value_type(m.results(op)[0]);
    let mt = ty.as_memref()?;
    let dyn_dims = mt.shape.iter().filter(|&&d| d == crate::types::DYN).count();
    if m.operands(op).len() != dyn_dims
        || m.operands(op).iter().any(|&v| !m.value_type(v).is_index())
    {
        return None;
    }
    p.w(m.name(op).as_str());
    p.w("(");
    p.values(m.operands(op));
    p.w(")");
    p.attr_dict(op, &["operandSegmentSizes"]);
    p.w(" : ");
    p.ty(ty);
    Some(())
}

fn parse_alloc(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    p.expect_punct(b'(')?;
    let refs = p.operand_list()?;
    p.expect_punct(b')')?;
    if p.is_punct(b'[') {
        return Err(p.err("symbol operands of memref layouts are not supported"));
    }
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let ty = p.parse_type()?;
    let operands = p.resolve_all(&refs, &Type::Index)?;
    simple(p, name, operands, vec![ty], attrs)
}

/// `memref.realloc %src(%n) attr-dict : T to U`.
fn print_realloc(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, None, 1, 0)?;
    let ops = m.operands(op);
    let (&src, size) = ops.split_first()?;
    if size.len() > 1 || size.iter().any(|&v| !m.value_type(v).is_index()) {
        return None;
    }
    p.w("memref.realloc ");
    p.value(src);
    if let Some(&n) = size.first() {
        p.w("(");
        p.value(n);
        p.w(")");
    }
    p.attr_dict(op, &[]);
    p.w(" : ");
    p.ty(m.value_type(src));
    p.w(" to ");
    p.ty(m.value_type(m.results(op)[0]));
    Some(())
}

fn parse_realloc(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let src = p.operand()?;
    let size = if p.eat_punct(b'(') {
        let r = p.operand()?;
        p.expect_punct(b')')?;
        Some(r)
    } else {
        None
    };
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let from = p.parse_type()?;
    p.expect_keyword("to")?;
    let to = p.parse_type()?;
    let mut operands = vec![p.resolve(&src, &from)?];
    if let Some(r) = size {
        operands.push(p.resolve(&r, &Type::Index)?);
    }
    simple(p, name, operands, vec![to], attrs)
}

/// `%m[%i, %j] attr-dict : T` after the op name (and the stored value).
fn print_access(p: &mut Printer<'_>, op: OpId, memref_at: usize) -> Option<()> {
    let m = p.m;
    let ops = m.operands(op);
    let mem = *ops.get(memref_at)?;
    let indices = ops.get(memref_at + 1..)?;
    if indices.iter().any(|&v| !m.value_type(v).is_index()) {
        return None;
    }
    p.value(mem);
    p.w("[");
    p.values(indices);
    p.w("]");
    p.attr_dict(op, &[]);
    p.w(" : ");
    p.ty(m.value_type(mem));
    Some(())
}

/// Parses `%m[%i, %j] attr-dict : T`; returns memref type and operands.
fn parse_access(
    p: &mut Parser<'_>,
    attrs: &mut Vec<(crate::sym::Sym, Attribute)>,
) -> PResult<(Type, Vec<crate::module::ValueId>)> {
    let mem = p.operand()?;
    p.expect_punct(b'[')?;
    let idx = p.operand_list()?;
    p.expect_punct(b']')?;
    p.opt_attr_dict(attrs)?;
    p.expect_punct(b':')?;
    let pos = p.tok.start;
    let ty = p.parse_type()?;
    if ty.as_memref().is_none() {
        return Err(p.err_at(pos, "expected a memref type"));
    }
    let mut operands = vec![p.resolve(&mem, &ty)?];
    operands.extend(p.resolve_all(&idx, &Type::Index)?);
    Ok((ty, operands))
}

fn print_load(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, None, 1, 0)?;
    let mt = m.value_type(*m.operands(op).first()?).as_memref()?;
    if mt.elem != *m.value_type(m.results(op)[0]) {
        return None;
    }
    p.w("memref.load ");
    print_access(p, op, 0)
}

fn parse_load(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let mut attrs = Vec::new();
    let (ty, operands) = parse_access(p, &mut attrs)?;
    let elem = ty.element_type().clone();
    simple(p, name, operands, vec![elem], attrs)
}

fn print_store(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, None, 0, 0)?;
    let ops = m.operands(op);
    let (v, mem) = (*ops.first()?, *ops.get(1)?);
    if m.value_type(mem).as_memref()?.elem != *m.value_type(v) {
        return None;
    }
    p.w("memref.store ");
    p.value(v);
    p.w(", ");
    print_access(p, op, 1)
}

fn parse_store(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let v = p.operand()?;
    p.expect_punct(b',')?;
    let mut attrs = Vec::new();
    let (ty, mut operands) = parse_access(p, &mut attrs)?;
    let value = p.resolve(&v, ty.element_type())?;
    operands.insert(0, value);
    simple(p, name, operands, Vec::new(), attrs)
}

/// `memref.dim attr-dict %a, %i : T` (MLIR puts the attr-dict first).
fn print_dim(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, Some(2), 1, 0)?;
    let (a, i) = (m.operands(op)[0], m.operands(op)[1]);
    if !m.value_type(i).is_index() || !m.value_type(m.results(op)[0]).is_index() {
        return None;
    }
    p.w("memref.dim ");
    p.attr_dict_prefix(op, &[]);
    p.values(&[a, i]);
    p.w(" : ");
    p.ty(m.value_type(a));
    Some(())
}

fn parse_dim(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    let a = p.operand()?;
    p.expect_punct(b',')?;
    let i = p.operand()?;
    p.expect_punct(b':')?;
    let ty = p.parse_type()?;
    let operands = vec![p.resolve(&a, &ty)?, p.resolve(&i, &Type::Index)?];
    simple(p, name, operands, vec![Type::Index], attrs)
}
