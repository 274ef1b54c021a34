//! Pretty forms of the `vector` ops, as MLIR prints them.

use super::{attr, shape, simple, Form};
use crate::attr::Attribute;
use crate::module::{OpId, ValueId};
use crate::ops::VectorOp;
use crate::text::parser::OperandRef;
use crate::text::parser::{PResult, Parser};
use crate::text::printer::Printer;
use crate::types::Type;
use std::sync::Arc;

pub(super) fn form(op: VectorOp) -> Option<Form> {
    use VectorOp as V;
    let (print, parse): (super::PrintFn, super::ParseFn) = match op {
        V::Load => (print_load, parse_load),
        V::Store => (print_store, parse_store),
        V::Maskedload => (print_masked_load, parse_masked_load),
        V::Maskedstore => (print_masked_store, parse_masked_store),
        V::Gather => (print_gather, parse_gather),
        V::Broadcast => (print_broadcast, parse_broadcast),
        V::Splat => (print_splat, parse_splat),
        V::Reduction => (print_reduction, parse_reduction),
        V::CreateMask => (print_create_mask, parse_create_mask),
        V::Extract => (print_extract, parse_extract),
        V::Insert => (print_insert, parse_insert),
        V::Shuffle => (print_shuffle, parse_shuffle),
        // The table's cast class and declarative formats.
        V::Bitcast | V::Fma => return None,
    };
    Some(Form { print, parse })
}

fn is_vector(t: &Type) -> bool {
    t.as_vector().is_some()
}

/// `%m[%i, %j]` with index operands.
fn print_base(p: &mut Printer<'_>, base: ValueId, idx: &[ValueId]) -> Option<()> {
    if idx.iter().any(|&v| !p.m.value_type(v).is_index()) {
        return None;
    }
    p.value(base);
    p.w("[");
    p.values(idx);
    p.w("]");
    Some(())
}

fn parse_base(p: &mut Parser<'_>) -> PResult<(OperandRef, Vec<OperandRef>)> {
    let base = p.operand()?;
    p.expect_punct(b'[')?;
    let idx = if p.is_punct(b']') {
        Vec::new()
    } else {
        p.operand_list()?
    };
    p.expect_punct(b']')?;
    Ok((base, idx))
}

fn resolve_base(
    p: &mut Parser<'_>,
    base: &OperandRef,
    idx: &[OperandRef],
    mem: &Type,
) -> PResult<Vec<ValueId>> {
    let mut out = vec![p.resolve(base, mem)?];
    out.extend(p.resolve_all(idx, &Type::Index)?);
    Ok(out)
}

/// ` : memref<..>, T1, ... into R`: the types of a masked load's or a
/// gather's base and `rest` operands, and of its result.
fn print_types_into(p: &mut Printer<'_>, op: OpId, base: ValueId, rest: &[ValueId]) {
    let m = p.m;
    p.w(" : ");
    p.ty(m.value_type(base));
    for &v in rest {
        p.w(", ");
        p.ty(m.value_type(v));
    }
    p.w(" into ");
    if let Some(&r) = m.results(op).first() {
        p.ty(m.value_type(r));
    }
}

/// The attributes and what `print_types_into` prints, then the op over
/// `base[idx]` and `rest`.
fn parse_types_into(
    p: &mut Parser<'_>,
    name: &str,
    (base, idx): (&OperandRef, &[OperandRef]),
    rest: &[OperandRef],
) -> PResult<OpId> {
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let mem = p.parse_type()?;
    let mut tys = Vec::with_capacity(rest.len());
    for _ in rest {
        p.expect_punct(b',')?;
        tys.push(p.parse_type()?);
    }
    p.expect_keyword("into")?;
    let rt = p.parse_type()?;
    let mut operands = resolve_base(p, base, idx, &mem)?;
    for (r, t) in rest.iter().zip(&tys) {
        operands.push(p.resolve(r, t)?);
    }
    simple(p, name, operands, vec![rt], attrs)
}

/// `vector.load %m[%i] : memref<?xf32>, vector<8xf32>`.
fn print_load(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, None, 1, 0)?;
    let (&base, idx) = m.operands(op).split_first()?;
    let r = m.value_type(m.results(op)[0]);
    p.w("vector.load ");
    print_base(p, base, idx)?;
    p.attr_dict(op, &[]);
    p.w(" : ");
    p.ty(m.value_type(base));
    p.w(", ");
    p.ty(r);
    Some(())
}

fn parse_load(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let (base, idx) = parse_base(p)?;
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let mem = p.parse_type()?;
    p.expect_punct(b',')?;
    let vt = p.parse_type()?;
    let operands = resolve_base(p, &base, &idx, &mem)?;
    simple(p, name, operands, vec![vt], attrs)
}

/// `vector.store %v, %m[%i] : memref<?xf32>, vector<8xf32>`.
fn print_store(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, None, 0, 0)?;
    let ops = m.operands(op);
    let (v, base) = (*ops.first()?, *ops.get(1)?);
    p.w("vector.store ");
    p.value(v);
    p.w(", ");
    print_base(p, base, ops.get(2..)?)?;
    p.attr_dict(op, &[]);
    p.w(" : ");
    p.ty(m.value_type(base));
    p.w(", ");
    p.ty(m.value_type(v));
    Some(())
}

fn parse_store(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let v = p.operand()?;
    p.expect_punct(b',')?;
    let (base, idx) = parse_base(p)?;
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let mem = p.parse_type()?;
    p.expect_punct(b',')?;
    let vt = p.parse_type()?;
    let mut operands = vec![p.resolve(&v, &vt)?];
    operands.extend(resolve_base(p, &base, &idx, &mem)?);
    simple(p, name, operands, Vec::new(), attrs)
}

/// `vector.maskedload %m[%i], %mask, %pass : memref<?xf32>, vector<8xi1>,
/// vector<8xf32> into vector<8xf32>`.
fn print_masked_load(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, None, 1, 0)?;
    let ops = m.operands(op);
    let n = ops.len();
    let (base, mask, pass) = (*ops.first()?, *ops.get(n.checked_sub(2)?)?, ops[n - 1]);
    p.w("vector.maskedload ");
    print_base(p, base, ops.get(1..n - 2)?)?;
    p.w(", ");
    p.values(&[mask, pass]);
    p.attr_dict(op, &[]);
    print_types_into(p, op, base, &[mask, pass]);
    Some(())
}

fn parse_masked_load(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let (base, idx) = parse_base(p)?;
    p.expect_punct(b',')?;
    let mask = p.operand()?;
    p.expect_punct(b',')?;
    let pass = p.operand()?;
    parse_types_into(p, name, (&base, &idx), &[mask, pass])
}

/// `vector.maskedstore %m[%i], %mask, %v : memref<?xf32>, vector<8xi1>,
/// vector<8xf32>`.
fn print_masked_store(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, None, 0, 0)?;
    let ops = m.operands(op);
    let n = ops.len();
    let (base, mask, v) = (*ops.first()?, *ops.get(n.checked_sub(2)?)?, ops[n - 1]);
    p.w("vector.maskedstore ");
    print_base(p, base, ops.get(1..n - 2)?)?;
    p.w(", ");
    p.values(&[mask, v]);
    p.attr_dict(op, &[]);
    p.w(" : ");
    p.ty(m.value_type(base));
    p.w(", ");
    p.ty(m.value_type(mask));
    p.w(", ");
    p.ty(m.value_type(v));
    Some(())
}

fn parse_masked_store(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let (base, idx) = parse_base(p)?;
    p.expect_punct(b',')?;
    let mask = p.operand()?;
    p.expect_punct(b',')?;
    let v = p.operand()?;
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let mem = p.parse_type()?;
    p.expect_punct(b',')?;
    let mt = p.parse_type()?;
    p.expect_punct(b',')?;
    let vt = p.parse_type()?;
    let mut operands = resolve_base(p, &base, &idx, &mem)?;
    operands.push(p.resolve(&mask, &mt)?);
    operands.push(p.resolve(&v, &vt)?);
    simple(p, name, operands, Vec::new(), attrs)
}

/// `vector.broadcast %s : f32 to vector<8xf32>`.
fn print_broadcast(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, Some(1), 1, 0)?;
    let s = m.operands(op)[0];
    p.w("vector.broadcast ");
    p.value(s);
    p.attr_dict(op, &[]);
    p.w(" : ");
    p.ty(m.value_type(s));
    p.w(" to ");
    p.ty(m.value_type(m.results(op)[0]));
    Some(())
}

fn parse_broadcast(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let s = p.operand()?;
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let st = p.parse_type()?;
    p.expect_keyword("to")?;
    let vt = p.parse_type()?;
    let v = p.resolve(&s, &st)?;
    simple(p, name, vec![v], vec![vt], attrs)
}

/// `vector.splat %s : vector<8xf32>`.
fn print_splat(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, Some(1), 1, 0)?;
    let r = m.value_type(m.results(op)[0]);
    if !is_vector(r) || m.value_type(m.operands(op)[0]) != r.element_type() {
        return None;
    }
    p.w("vector.splat ");
    p.value(m.operands(op)[0]);
    p.attr_dict(op, &[]);
    p.w(" : ");
    p.ty(m.value_type(m.results(op)[0]));
    Some(())
}

fn parse_splat(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let s = p.operand()?;
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let vt = p.parse_type()?;
    let elem = vt.element_type().clone();
    let v = p.resolve(&s, &elem)?;
    simple(p, name, vec![v], vec![vt], attrs)
}

/// `vector.reduction <add>, %v : vector<8xf32> into f32`.
fn print_reduction(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, Some(1), 1, 0)?;
    let kind = crate::dialects::vector::reduction_kind(m, op)?;
    let v = m.operands(op)[0];
    p.wf(format_args!("vector.reduction <{kind}>, "));
    p.value(v);
    p.attr_dict(op, &["kind"]);
    p.w(" : ");
    p.ty(m.value_type(v));
    p.w(" into ");
    p.ty(m.value_type(m.results(op)[0]));
    Some(())
}

fn parse_reduction(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    p.expect_punct(b'<')?;
    let kind = p.text().to_string();
    p.bump();
    p.expect_punct(b'>')?;
    p.expect_punct(b',')?;
    let v = p.operand()?;
    let mut attrs = vec![attr("kind", crate::dialects::vector::kind_attr(&kind))];
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let vt = p.parse_type()?;
    p.expect_keyword("into")?;
    let rt = p.parse_type()?;
    let v = p.resolve(&v, &vt)?;
    simple(p, name, vec![v], vec![rt], attrs)
}

/// `vector.create_mask %n : vector<8xi1>`.
fn print_create_mask(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, Some(1), 1, 0)?;
    if !m.value_type(m.operands(op)[0]).is_index() {
        return None;
    }
    p.w("vector.create_mask ");
    p.value(m.operands(op)[0]);
    p.attr_dict(op, &[]);
    p.w(" : ");
    p.ty(m.value_type(m.results(op)[0]));
    Some(())
}

fn parse_create_mask(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let n = p.operand()?;
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let vt = p.parse_type()?;
    let n = p.resolve(&n, &Type::Index)?;
    simple(p, name, vec![n], vec![vt], attrs)
}

fn position(p: &mut Parser<'_>) -> PResult<Attribute> {
    p.expect_punct(b'[')?;
    let i = p.int()?;
    p.expect_punct(b']')?;
    Ok(Attribute::i64_array(&[i]))
}

/// `vector.extract %v[3] : f32 from vector<8xf32>`.
fn print_extract(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, Some(1), 1, 0)?;
    let pos = crate::dialects::vector::position(m, op)?;
    let v = m.operands(op)[0];
    p.w("vector.extract ");
    p.value(v);
    p.wf(format_args!("[{pos}]"));
    p.attr_dict(op, &["static_position"]);
    p.w(" : ");
    p.ty(m.value_type(m.results(op)[0]));
    p.w(" from ");
    p.ty(m.value_type(v));
    Some(())
}

fn parse_extract(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let v = p.operand()?;
    let mut attrs = vec![attr("static_position", position(p)?)];
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let rt = p.parse_type()?;
    p.expect_keyword("from")?;
    let vt = p.parse_type()?;
    let v = p.resolve(&v, &vt)?;
    simple(p, name, vec![v], vec![rt], attrs)
}

/// `vector.insert %s, %v [2] : f32 into vector<8xf32>`.
fn print_insert(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, Some(2), 1, 0)?;
    let pos = crate::dialects::vector::position(m, op)?;
    let (s, v) = (m.operands(op)[0], m.operands(op)[1]);
    if m.value_type(m.results(op)[0]) != m.value_type(v) {
        return None;
    }
    p.w("vector.insert ");
    p.values(&[s, v]);
    p.wf(format_args!(" [{pos}]"));
    p.attr_dict(op, &["static_position"]);
    p.w(" : ");
    p.ty(m.value_type(s));
    p.w(" into ");
    p.ty(m.value_type(v));
    Some(())
}

fn parse_insert(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let s = p.operand()?;
    p.expect_punct(b',')?;
    let v = p.operand()?;
    let mut attrs = vec![attr("static_position", position(p)?)];
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let st = p.parse_type()?;
    p.expect_keyword("into")?;
    let vt = p.parse_type()?;
    let operands = vec![p.resolve(&s, &st)?, p.resolve(&v, &vt)?];
    simple(p, name, operands, vec![vt], attrs)
}

/// `vector.shuffle %a, %b [0, 8, 1, 9] : vector<4xf32>, vector<4xf32>`.
fn print_shuffle(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, Some(2), 1, 0)?;
    let mask = m.attr(op, "mask")?.as_i64_list()?;
    let (a, b) = (m.operands(op)[0], m.operands(op)[1]);
    let av = m.value_type(a).as_vector()?;
    let len = i64::try_from(mask.len()).ok()?;
    if *m.value_type(m.results(op)[0]) != Type::vector(len, av.elem.clone()) {
        return None;
    }
    p.w("vector.shuffle ");
    p.values(&[a, b]);
    let items: Vec<String> = mask.iter().map(i64::to_string).collect();
    p.wf(format_args!(" [{}]", items.join(", ")));
    p.attr_dict(op, &["mask"]);
    p.w(" : ");
    p.ty(m.value_type(a));
    p.w(", ");
    p.ty(m.value_type(b));
    Some(())
}

fn parse_shuffle(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let a = p.operand()?;
    p.expect_punct(b',')?;
    let b = p.operand()?;
    p.expect_punct(b'[')?;
    let mut mask = Vec::new();
    while !p.is_punct(b']') {
        mask.push(p.int()?);
        if !p.eat_punct(b',') {
            break;
        }
    }
    p.expect_punct(b']')?;
    // MLIR 19 keeps the mask as an array of i64 integers.
    let list: Vec<Attribute> = mask.iter().map(|&i| Attribute::i64(i)).collect();
    let mut attrs = vec![attr("mask", Attribute::Array(Arc::from(list)))];
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let at = p.parse_type()?;
    p.expect_punct(b',')?;
    let bt = p.parse_type()?;
    let len = i64::try_from(mask.len()).unwrap_or(i64::MAX);
    let rt = match at.as_vector() {
        Some(v) => Type::vector(len, v.elem.clone()),
        None => return Err(p.err("vector.shuffle operands must be vectors")),
    };
    let operands = vec![p.resolve(&a, &at)?, p.resolve(&b, &bt)?];
    simple(p, name, operands, vec![rt], attrs)
}

/// `vector.gather %m[%i] [%idx], %mask, %pass : memref<?xf32>,
/// vector<16xi64>, vector<16xi1>, vector<16xf32> into vector<16xf32>`.
fn print_gather(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, None, 1, 0)?;
    let ops = m.operands(op);
    let n = ops.len();
    let base = *ops.first()?;
    let (iv, mask, pass) = (*ops.get(n.checked_sub(3)?)?, ops[n - 2], ops[n - 1]);
    p.w("vector.gather ");
    print_base(p, base, ops.get(1..n - 3)?)?;
    p.w(" [");
    p.value(iv);
    p.w("], ");
    p.values(&[mask, pass]);
    p.attr_dict(op, &[]);
    print_types_into(p, op, base, &[iv, mask, pass]);
    Some(())
}

fn parse_gather(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let (base, idx) = parse_base(p)?;
    p.expect_punct(b'[')?;
    let iv = p.operand()?;
    p.expect_punct(b']')?;
    p.expect_punct(b',')?;
    let mask = p.operand()?;
    p.expect_punct(b',')?;
    let pass = p.operand()?;
    parse_types_into(p, name, (&base, &idx), &[iv, mask, pass])
}
