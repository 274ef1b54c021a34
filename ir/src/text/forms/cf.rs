//! `cf.br`, `cf.cond_br`, `cf.assert`.

use super::{attr, simple, Form};
use crate::attr::Attribute;
use crate::module::{BlockId, OpId, OpSpec, ValueId};
use crate::ops::CfOp;
use crate::text::parser::{PResult, Parser};
use crate::text::printer::Printer;

pub(super) fn form(op: CfOp) -> Option<Form> {
    let (print, parse): (super::PrintFn, super::ParseFn) = match op {
        CfOp::Br => (print_br, parse_br),
        CfOp::CondBr => (print_cond_br, parse_cond_br),
        CfOp::Assert => (print_assert, parse_assert),
    };
    Some(Form { print, parse })
}

/// `cf.br ^bb1(%a : i32) attr-dict`.
fn print_br(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    let ok = m.num_successors(op) == 1
        && m.regular_operands(op).is_empty()
        && m.results(op).is_empty()
        && m.regions(op).is_empty();
    if !ok {
        return None;
    }
    p.w("cf.br ");
    p.successor(op, 0);
    p.attr_dict(op, &[]);
    Some(())
}

/// `^bb1` or `^bb1(%a, %b : T, U)`.
fn parse_successor(p: &mut Parser<'_>) -> PResult<(BlockId, Vec<ValueId>)> {
    let block = p.block_ref()?;
    let mut args = Vec::new();
    if p.eat_punct(b'(') {
        let refs = p.operand_list()?;
        if !refs.is_empty() {
            p.expect_punct(b':')?;
            let pos = p.tok.start;
            let tys = p.type_list()?;
            args = p.resolve_list(&refs, &tys, pos)?;
        }
        p.expect_punct(b')')?;
    }
    Ok((block, args))
}

fn branch(
    p: &mut Parser<'_>,
    name: &str,
    operands: Vec<ValueId>,
    successors: Vec<(BlockId, Vec<ValueId>)>,
) -> PResult<OpId> {
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    let spec = OpSpec {
        operands,
        attrs,
        successors,
        ..OpSpec::default()
    };
    p.create(name, spec, Vec::new())
}

fn parse_br(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let succ = parse_successor(p)?;
    branch(p, name, Vec::new(), vec![succ])
}

/// `cf.cond_br %c, ^bb1(%a : i32), ^bb2 attr-dict`.
fn print_cond_br(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    let [c] = m.regular_operands(op) else {
        return None;
    };
    if m.num_successors(op) != 2 || !m.results(op).is_empty() || !m.regions(op).is_empty() {
        return None;
    }
    if *m.value_type(*c) != crate::types::Type::i1() {
        return None;
    }
    p.w("cf.cond_br ");
    p.value(*c);
    p.w(", ");
    p.successor(op, 0);
    p.w(", ");
    p.successor(op, 1);
    p.attr_dict(op, &["operandSegmentSizes"]);
    Some(())
}

fn parse_cond_br(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let c = p.operand()?;
    let cond = p.resolve(&c, &crate::types::Type::i1())?;
    p.expect_punct(b',')?;
    let t = parse_successor(p)?;
    p.expect_punct(b',')?;
    let f = parse_successor(p)?;
    branch(p, name, vec![cond], vec![t, f])
}

/// `cf.assert %c, "msg" attr-dict`.
fn print_assert(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    super::shape(m, op, Some(1), 0, 0)?;
    let msg = m.attr(op, "msg")?.as_str()?;
    if *m.value_type(m.operands(op)[0]) != crate::types::Type::i1() {
        return None;
    }
    p.w("cf.assert ");
    p.value(m.operands(op)[0]);
    p.w(", ");
    p.string(msg);
    p.attr_dict(op, &["msg"]);
    Some(())
}

fn parse_assert(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let c = p.operand()?;
    p.expect_punct(b',')?;
    let msg = p.string()?;
    let mut attrs = vec![attr("msg", Attribute::string(&msg))];
    p.opt_attr_dict(&mut attrs)?;
    let cond = p.resolve(&c, &crate::types::Type::i1())?;
    simple(p, name, vec![cond], Vec::new(), attrs)
}
