//! `arith.constant`, `arith.cmpi`, `arith.cmpf`, `arith.select`. The other
//! arith and math ops use the SameType and Cast class forms.

use super::{attr, shape, simple, Form};
use crate::attr::Attribute;
use crate::dialects::arith::{CMPF_PREDICATES, CMPI_PREDICATES};
use crate::module::OpId;
use crate::ops::ArithOp;
use crate::text::parser::{PResult, Parser};
use crate::text::printer::Printer;
use crate::types::{TensorType, Type};
use std::sync::Arc;

pub(super) fn form(op: ArithOp) -> Option<Form> {
    use ArithOp as A;
    let (print, parse): (super::PrintFn, super::ParseFn) = match op {
        A::Constant => (print_constant, parse_constant),
        A::Cmpi | A::Cmpf => (print_cmp, parse_cmp),
        A::Select => (print_select, parse_select),
        // The table's same_type and cast classes.
        A::Addf | A::Subf | A::Mulf | A::Divf | A::Remf | A::Negf => return None,
        A::Maximumf | A::Minimumf | A::Maxnumf | A::Minnumf => return None,
        A::Addi | A::Subi | A::Muli | A::Divsi | A::Divui | A::Ceildivsi | A::Ceildivui => {
            return None
        }
        A::Floordivsi | A::Remsi | A::Remui | A::Andi | A::Ori | A::Xori => return None,
        A::Shli | A::Shrsi | A::Shrui | A::Maxsi | A::Minsi | A::Maxui | A::Minui => return None,
        A::Extf | A::Truncf | A::Sitofp | A::Uitofp | A::Fptosi | A::Fptoui => return None,
        A::Extsi | A::Extui | A::Trunci | A::IndexCast | A::IndexCastui | A::Bitcast => {
            return None
        }
    };
    Some(Form { print, parse })
}

/// The type an `arith.constant` with this value has.
fn value_type(v: &Attribute) -> Option<Type> {
    match v {
        Attribute::Int(_, t) | Attribute::Float(_, t) => Some(t.clone()),
        Attribute::Bool(_) => Some(Type::i1()),
        Attribute::Elements(e) => Some(e.tensor_type()),
        _ => None,
    }
}

fn print_constant(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, Some(0), 1, 0)?;
    let value = m.attr(op, "value")?;
    if value_type(value)? != *m.value_type(m.results(op)[0]) {
        return None;
    }
    p.w("arith.constant ");
    p.attr_dict_prefix(op, &["value"]);
    p.attr(value);
    Some(())
}

fn parse_constant(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    let pos = p.tok.start;
    let value = match p.parse_attribute()? {
        // `true` is an i1 integer, as the builder makes it.
        Attribute::Bool(b) => Attribute::Int(i64::from(b), Type::i1()),
        v => v,
    };
    let ty =
        value_type(&value).ok_or_else(|| p.err_at(pos, "expected a number or dense elements"))?;
    attrs.push(attr("value", value));
    simple(p, name, Vec::new(), vec![ty], attrs)
}

/// `i1`, or a tensor of `i1` shaped like `t`.
fn cmp_result(t: &Type) -> Type {
    match t {
        Type::Tensor(tt) => Type::Tensor(Arc::new(TensorType {
            shape: tt.shape.clone(),
            elem: Type::i1(),
            dims: tt.dims.clone(),
        })),
        Type::Vector(_) => t.with_elem(Type::i1()),
        _ => Type::i1(),
    }
}

fn predicates(name: &str) -> &'static [&'static str] {
    if name == ArithOp::Cmpi.name() {
        &CMPI_PREDICATES
    } else {
        &CMPF_PREDICATES
    }
}

fn print_cmp(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, Some(2), 1, 0)?;
    let name = m.name(op).as_str();
    let pred = m.attr(op, "predicate")?.as_int()?;
    let pred_name = predicates(name).get(usize::try_from(pred).ok()?)?;
    let (a, b) = (m.operands(op)[0], m.operands(op)[1]);
    let ty = m.value_type(a);
    if m.value_type(b) != ty || cmp_result(ty) != *m.value_type(m.results(op)[0]) {
        return None;
    }
    p.wf(format_args!("{name} {pred_name}, "));
    p.values(&[a, b]);
    p.attr_dict(op, &["predicate"]);
    p.w(" : ");
    p.ty(ty);
    Some(())
}

fn parse_cmp(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let pos = p.tok.start;
    let text = p.text();
    let Some(pred) = predicates(name).iter().position(|&s| s == text) else {
        return Err(p.err_at(pos, &format!("unknown predicate '{text}' for '{name}'")));
    };
    p.bump();
    p.expect_punct(b',')?;
    let a = p.operand()?;
    p.expect_punct(b',')?;
    let b = p.operand()?;
    let mut attrs = vec![attr("predicate", Attribute::i64(pred as i64))];
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let ty = p.parse_type()?;
    let operands = p.resolve_all(&[a, b], &ty)?;
    simple(p, name, operands, vec![cmp_result(&ty)], attrs)
}

fn print_select(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, Some(3), 1, 0)?;
    let ops = m.operands(op);
    let (cty, ty) = (m.value_type(ops[0]), m.value_type(ops[1]));
    if m.value_type(ops[2]) != ty || m.value_type(m.results(op)[0]) != ty {
        return None;
    }
    p.w("arith.select ");
    p.values(ops);
    p.attr_dict(op, &[]);
    p.w(" : ");
    if *cty != Type::i1() {
        p.ty(cty);
        p.w(", ");
    }
    p.ty(ty);
    Some(())
}

fn parse_select(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let pos = p.tok.start;
    let refs = p.operand_list()?;
    let [c, a, b] = &refs[..] else {
        return Err(p.err_at(pos, "expected three operands"));
    };
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let first = p.parse_type()?;
    let (cty, ty) = if p.eat_punct(b',') {
        (first, p.parse_type()?)
    } else {
        (Type::i1(), first)
    };
    let operands = vec![p.resolve(c, &cty)?, p.resolve(a, &ty)?, p.resolve(b, &ty)?];
    simple(p, name, operands, vec![ty], attrs)
}
