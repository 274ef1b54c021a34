//! `scf.for`, `scf.if`, `scf.while`, `scf.yield`, `scf.condition`.

use super::{shape, simple, Form};
use crate::module::{BlockId, Module, OpId, OpSpec, RegionId};
use crate::ops::ScfOp;
use crate::text::lexer::Kind;
use crate::text::parser::{ArgDef, PResult, Parser};
use crate::text::printer::Printer;
use crate::types::Type;

pub(super) fn form(op: ScfOp) -> Option<Form> {
    let (print, parse): (super::PrintFn, super::ParseFn) = match op {
        ScfOp::For => (print_for, parse_for),
        ScfOp::If => (print_if, parse_if),
        ScfOp::While => (print_while, parse_while),
        ScfOp::Yield => (print_yield, parse_yield),
        ScfOp::Condition => (print_condition, parse_condition),
    };
    Some(Form { print, parse })
}

/// The only block of region `i`, if it has exactly one.
fn single_block(m: &Module, op: OpId, i: usize) -> Option<BlockId> {
    match m.region_blocks(m.region(op, i)?) {
        [b] => Some(*b),
        _ => None,
    }
}

/// The parser adds an `scf.yield` to blocks without a terminator, so only
/// blocks that have one print in pretty form.
fn terminated(m: &Module, b: BlockId) -> bool {
    m.last_op(b).is_some_and(|o| m.is_terminator(o))
}

fn types_of(m: &Module, vs: &[crate::module::ValueId]) -> Vec<Type> {
    vs.iter().map(|&v| m.value_type(v).clone()).collect()
}

/// `scf.for %iv = %lb to %ub step %s iter_args(%a = %init) -> (T)  : i32
/// { ... } attr-dict` (the `: type` only for non-index induction variables).
fn print_for(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    if m.regions(op).len() != 1 || m.num_successors(op) != 0 {
        return None;
    }
    let body = single_block(m, op, 0)?;
    if !terminated(m, body) {
        return None;
    }
    let ops = m.operands(op);
    let [lb, ub, step, inits @ ..] = ops else {
        return None;
    };
    let args = m.block_args(body);
    let (&iv, iter_args) = args.split_first()?;
    let iv_ty = m.value_type(iv);
    let inits_ty = types_of(m, inits);
    if [*lb, *ub, *step].iter().any(|&v| m.value_type(v) != iv_ty)
        || types_of(m, iter_args) != inits_ty
        || types_of(m, m.results(op)) != inits_ty
    {
        return None;
    }
    p.w("scf.for ");
    p.value(iv);
    p.w(" = ");
    p.value(*lb);
    p.w(" to ");
    p.value(*ub);
    p.w(" step ");
    p.value(*step);
    if !inits.is_empty() {
        p.w(" iter_args(");
        for (i, (&a, &init)) in iter_args.iter().zip(inits).enumerate() {
            if i > 0 {
                p.w(", ");
            }
            p.value(a);
            p.w(" = ");
            p.value(init);
        }
        p.w(") -> (");
        p.types(&inits_ty);
        p.w(")");
    }
    if !iv_ty.is_index() {
        // mlir-opt 19 prints two spaces here.
        p.w("  : ");
        p.ty(iv_ty);
    }
    p.w(" ");
    p.region(m.region(op, 0)?, false, !inits.is_empty(), false);
    p.attr_dict(op, &[]);
    Some(())
}

fn parse_for(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let (iv_name, iv_pos) = p.def_name()?;
    p.expect_punct(b'=')?;
    let lb = p.operand()?;
    p.expect_keyword("to")?;
    let ub = p.operand()?;
    p.expect_keyword("step")?;
    let step = p.operand()?;
    let (mut iter_names, mut init_refs, mut init_tys) = (Vec::new(), Vec::new(), Vec::new());
    if p.eat_keyword("iter_args") {
        p.expect_punct(b'(')?;
        if !p.eat_punct(b')') {
            loop {
                iter_names.push(p.def_name()?);
                p.expect_punct(b'=')?;
                init_refs.push(p.operand()?);
                if !p.eat_punct(b',') {
                    break;
                }
            }
            p.expect_punct(b')')?;
        }
        p.expect_arrow()?;
        init_tys = if p.is_punct(b'(') {
            p.paren_type_list()?
        } else {
            vec![p.parse_type()?]
        };
    }
    let iv_ty = if p.eat_punct(b':') {
        p.parse_type()?
    } else {
        Type::Index
    };
    let pos = p.tok.start;
    let mut operands = p.resolve_all(&[lb, ub, step], &iv_ty)?;
    operands.extend(p.resolve_list(&init_refs, &init_tys, pos)?);
    let mut args = vec![ArgDef {
        name: iv_name,
        ty: iv_ty,
        pos: iv_pos,
    }];
    for ((n, at), ty) in iter_names.into_iter().zip(&init_tys) {
        args.push(ArgDef {
            name: n,
            ty: ty.clone(),
            pos: at,
        });
    }
    let r = p.scratch_region();
    p.parse_region(r, Some(args), false)?;
    p.ensure_terminator(r, ScfOp::Yield.name());
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    let spec = OpSpec {
        operands,
        result_types: init_tys,
        attrs,
        ..OpSpec::default()
    };
    p.create(name, spec, vec![r])
}

/// `scf.if %c -> (T) { ... } else { ... } attr-dict`.
fn print_if(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, Some(1), m.results(op).len(), 2)?;
    let then_b = single_block(m, op, 0)?;
    let else_r = m.region(op, 1)?;
    let else_blocks = m.region_blocks(else_r);
    if else_blocks.len() > 1
        || !m.block_args(then_b).is_empty()
        || *m.value_type(m.operands(op)[0]) != Type::i1()
    {
        return None;
    }
    if !terminated(m, then_b) || else_blocks.iter().any(|&b| !terminated(m, b)) {
        return None;
    }
    if else_blocks
        .first()
        .is_some_and(|&b| !m.block_args(b).is_empty())
    {
        return None;
    }
    let results = m.results(op);
    p.w("scf.if ");
    p.value(m.operands(op)[0]);
    if !results.is_empty() {
        p.w(" -> (");
        p.value_types(results);
        p.w(")");
    }
    let terminators = !results.is_empty();
    p.w(" ");
    p.region(m.region(op, 0)?, false, terminators, false);
    if !else_blocks.is_empty() {
        p.w(" else ");
        p.region(else_r, false, terminators, false);
    }
    p.attr_dict(op, &[]);
    Some(())
}

fn parse_if(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let c = p.operand()?;
    let results = if p.is(Kind::Arrow) {
        p.bump();
        if p.is_punct(b'(') {
            p.paren_type_list()?
        } else {
            vec![p.parse_type()?]
        }
    } else {
        Vec::new()
    };
    let cond = p.resolve(&c, &Type::i1())?;
    let then_r = p.scratch_region();
    p.parse_region(then_r, None, false)?;
    p.ensure_terminator(then_r, ScfOp::Yield.name());
    let else_r = p.scratch_region();
    if p.eat_keyword("else") {
        p.parse_region(else_r, None, false)?;
        p.ensure_terminator(else_r, ScfOp::Yield.name());
    }
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    let spec = OpSpec {
        operands: vec![cond],
        result_types: results,
        attrs,
        ..OpSpec::default()
    };
    p.create(name, spec, vec![then_r, else_r])
}

/// `scf.while (%a = %init) : (T) -> R { ... } do { ... } attributes {...}`.
fn print_while(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, None, m.results(op).len(), 2)?;
    let before = single_block(m, op, 0)?;
    single_block(m, op, 1)?;
    let inits = m.operands(op);
    let args = m.block_args(before);
    if types_of(m, args) != types_of(m, inits) {
        return None;
    }
    p.w("scf.while ");
    if !inits.is_empty() {
        p.w("(");
        for (i, (&a, &init)) in args.iter().zip(inits).enumerate() {
            if i > 0 {
                p.w(", ");
            }
            p.value(a);
            p.w(" = ");
            p.value(init);
        }
        p.w(") ");
    }
    let fty = Type::function(types_of(m, inits), types_of(m, m.results(op)));
    p.w(": ");
    p.ty(&fty);
    p.w(" ");
    p.region(m.region(op, 0)?, false, true, false);
    p.w(" do ");
    p.region(m.region(op, 1)?, true, true, false);
    p.attr_dict_with_keyword(op, &[]);
    Some(())
}

fn parse_while(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let (mut names, mut refs) = (Vec::new(), Vec::new());
    if p.eat_punct(b'(') && !p.eat_punct(b')') {
        loop {
            names.push(p.def_name()?);
            p.expect_punct(b'=')?;
            refs.push(p.operand()?);
            if !p.eat_punct(b',') {
                break;
            }
        }
        p.expect_punct(b')')?;
    }
    p.expect_punct(b':')?;
    let pos = p.tok.start;
    let Type::Function(fty) = p.parse_type()? else {
        return Err(p.err_at(pos, "expected function type"));
    };
    let operands = p.resolve_list(&refs, &fty.inputs, pos)?;
    let args = names
        .into_iter()
        .zip(&fty.inputs)
        .map(|((n, at), ty)| ArgDef {
            name: n,
            ty: ty.clone(),
            pos: at,
        })
        .collect();
    let before: RegionId = p.scratch_region();
    p.parse_region(before, Some(args), false)?;
    p.expect_keyword("do")?;
    let after = p.scratch_region();
    p.parse_region(after, None, false)?;
    let mut attrs = Vec::new();
    p.opt_attr_dict_with_keyword(&mut attrs)?;
    let spec = OpSpec {
        operands,
        result_types: fty.results.clone(),
        attrs,
        ..OpSpec::default()
    };
    p.create(name, spec, vec![before, after])
}

/// `scf.yield attr-dict %a, %b : T, U`.
fn print_yield(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, None, 0, 0)?;
    p.w(ScfOp::Yield.name());
    p.attr_dict(op, &[]);
    if !m.operands(op).is_empty() {
        p.w(" ");
        p.values_with_types(m.operands(op));
    }
    Some(())
}

fn parse_yield(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let (operands, attrs) = super::func::parse_return_like(p)?;
    simple(p, name, operands, Vec::new(), attrs)
}

/// `scf.condition(%c) attr-dict %a, %b : T, U`.
fn print_condition(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, None, 0, 0)?;
    let (&c, rest) = m.operands(op).split_first()?;
    if *m.value_type(c) != Type::i1() {
        return None;
    }
    p.w("scf.condition(");
    p.value(c);
    p.w(")");
    p.attr_dict(op, &[]);
    if !rest.is_empty() {
        p.w(" ");
        p.values_with_types(rest);
    }
    Some(())
}

fn parse_condition(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    p.expect_punct(b'(')?;
    let c = p.operand()?;
    p.expect_punct(b')')?;
    let (mut rest, attrs) = super::func::parse_return_like(p)?;
    let cond = p.resolve(&c, &Type::i1())?;
    rest.insert(0, cond);
    simple(p, name, rest, Vec::new(), attrs)
}
