//! `func.func`, `func.return`, `func.call`.

use super::{attr, shape, simple, Form};
use crate::attr::Attribute;
use crate::module::{Module, OpId, OpSpec};
use crate::ops::FuncOp;
use crate::sym::Sym;
use crate::text::lexer::Kind;
use crate::text::parser::{ArgDef, PResult, Parser};
use crate::text::printer::Printer;
use crate::types::Type;
use std::sync::Arc;

pub(super) fn form(op: FuncOp) -> Option<Form> {
    let (print, parse): (super::PrintFn, super::ParseFn) = match op {
        FuncOp::Func => (print_func, parse_func),
        FuncOp::Return => (print_return, parse_return),
        FuncOp::Call => (print_call, parse_call),
    };
    Some(Form { print, parse })
}

type Attrs = Vec<(Sym, Attribute)>;

const FUNC_ELIDED: [&str; 5] = [
    "sym_name",
    "function_type",
    "sym_visibility",
    "arg_attrs",
    "res_attrs",
];

/// Per-argument dictionaries of `arg_attrs`/`res_attrs`: `Some` with one
/// entry per item (`None` meaning empty), or `None` if malformed.
fn dicts(attr: Option<&Attribute>, n: usize) -> Option<Vec<Option<&Attribute>>> {
    let Some(a) = attr else {
        return Some(vec![None; n]);
    };
    let items = a.as_array()?;
    if items.len() != n {
        return None;
    }
    items
        .iter()
        .map(|d| match d {
            Attribute::Dict(e) if e.is_empty() => Some(None),
            Attribute::Dict(_) => Some(Some(d)),
            _ => None,
        })
        .collect()
}

/// `func`-dialect ops drop their prefix directly inside a function.
fn short_name(m: &Module, op: OpId, short: &'static str, full: &'static str) -> &'static str {
    if m.parent_op(op).is_some_and(|f| m.is(f, FuncOp::Func)) {
        short
    } else {
        full
    }
}

fn print_func(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, Some(0), 0, 1)?;
    let name = m.attr(op, "sym_name")?.as_str()?;
    let fty = m.attr(op, "function_type")?.as_type()?.as_function()?;
    let vis = match m.attr(op, "sym_visibility") {
        Some(a) => Some(
            a.as_str()
                .filter(|v| matches!(*v, "private" | "public" | "nested"))?,
        ),
        None => None,
    };
    let arg_attrs = dicts(m.attr(op, "arg_attrs"), fty.inputs.len())?;
    let res_attrs = dicts(m.attr(op, "res_attrs"), fty.results.len())?;
    let r = m.region(op, 0)?;
    let entry = m.entry_block(r);
    if let Some(b) = entry {
        let args = m.block_args(b);
        if args.len() != fty.inputs.len()
            || args
                .iter()
                .zip(&fty.inputs)
                .any(|(&a, t)| m.value_type(a) != t)
        {
            return None;
        }
    }
    p.w("func.func ");
    if let Some(v) = vis {
        p.w(v);
        p.w(" ");
    }
    p.symbol(name);
    p.w("(");
    for (i, t) in fty.inputs.iter().enumerate() {
        if i > 0 {
            p.w(", ");
        }
        if let Some(a) = entry.and_then(|b| m.block_arg(b, i)) {
            p.value(a);
            p.w(": ");
        }
        p.ty(t);
        if let Some(Some(d)) = arg_attrs.get(i) {
            p.w(" ");
            p.attr(d);
        }
    }
    p.w(")");
    if !fty.results.is_empty() {
        p.w(" -> ");
        let bare = fty.results.len() == 1
            && res_attrs.iter().all(Option::is_none)
            && !matches!(fty.results[0], Type::Function(_));
        if bare {
            p.ty(&fty.results[0]);
        } else {
            p.w("(");
            for (i, t) in fty.results.iter().enumerate() {
                if i > 0 {
                    p.w(", ");
                }
                p.ty(t);
                if let Some(Some(d)) = res_attrs.get(i) {
                    p.w(" ");
                    p.attr(d);
                }
            }
            p.w(")");
        }
    }
    p.attr_dict_with_keyword(op, &FUNC_ELIDED);
    if entry.is_some() {
        p.w(" ");
        p.region(r, false, true, false);
    }
    Some(())
}

/// An optional `{...}` after an argument or result type.
fn opt_dict(p: &mut Parser<'_>) -> PResult<Attribute> {
    let mut entries = Vec::new();
    p.opt_attr_dict(&mut entries)?;
    entries.sort_by_key(|a| a.0);
    Ok(Attribute::Dict(Arc::from(entries)))
}

fn dict_list(items: Vec<Attribute>) -> Option<Attribute> {
    let any = items
        .iter()
        .any(|d| matches!(d, Attribute::Dict(e) if !e.is_empty()));
    any.then(|| Attribute::Array(Arc::from(items)))
}

fn parse_func(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let mut attrs = Vec::new();
    for vis in ["private", "public", "nested"] {
        if p.eat_keyword(vis) {
            attrs.push(attr("sym_visibility", Attribute::string(vis)));
            break;
        }
    }
    let sym = p.symbol_name()?;
    attrs.push(attr("sym_name", Attribute::string(&sym)));
    p.expect_punct(b'(')?;
    let (mut inputs, mut args, mut arg_dicts) = (Vec::new(), Vec::new(), Vec::new());
    if !p.eat_punct(b')') {
        loop {
            if p.is(Kind::PercentId) || !args.is_empty() {
                if inputs.len() != args.len() {
                    return Err(p.err("expected a type, not a named argument"));
                }
                let (n, pos) = p.def_name()?;
                p.expect_punct(b':')?;
                let ty = p.parse_type()?;
                args.push(ArgDef {
                    name: n,
                    ty: ty.clone(),
                    pos,
                });
                inputs.push(ty);
            } else {
                inputs.push(p.parse_type()?);
            }
            arg_dicts.push(opt_dict(p)?);
            p.parse_trailing_loc()?;
            if !p.eat_punct(b',') {
                break;
            }
        }
        p.expect_punct(b')')?;
    }
    let (mut results, mut res_dicts) = (Vec::new(), Vec::new());
    if p.is(Kind::Arrow) {
        p.bump();
        if p.eat_punct(b'(') {
            if !p.eat_punct(b')') {
                loop {
                    results.push(p.parse_type()?);
                    res_dicts.push(opt_dict(p)?);
                    if !p.eat_punct(b',') {
                        break;
                    }
                }
                p.expect_punct(b')')?;
            }
        } else {
            results.push(p.parse_type()?);
            res_dicts.push(Attribute::Dict(Arc::from([])));
        }
    }
    attrs.push(attr(
        "function_type",
        Attribute::Type(Type::function(inputs.clone(), results)),
    ));
    if let Some(a) = dict_list(arg_dicts) {
        attrs.push(attr("arg_attrs", a));
    }
    if let Some(a) = dict_list(res_dicts) {
        attrs.push(attr("res_attrs", a));
    }
    p.opt_attr_dict_with_keyword(&mut attrs)?;
    let r = p.scratch_region();
    if p.is_punct(b'{') {
        if args.len() != inputs.len() {
            return Err(p.err("a function with a body needs named arguments"));
        }
        p.parse_region(r, Some(args), true)?;
    }
    let spec = OpSpec {
        attrs,
        ..OpSpec::default()
    };
    p.create(name, spec, vec![r])
}

fn print_return(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, None, 0, 0)?;
    p.w(short_name(m, op, "return", FuncOp::Return.name()));
    p.attr_dict(op, &[]);
    if !m.operands(op).is_empty() {
        p.w(" ");
        p.values_with_types(m.operands(op));
    }
    Some(())
}

/// `attr-dict? (%a, %b : T, U)?` as return-like ops print their operands.
pub(super) fn parse_return_like(
    p: &mut Parser<'_>,
) -> PResult<(Vec<crate::module::ValueId>, Attrs)> {
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    let refs = p.operand_list()?;
    let mut operands = Vec::new();
    if !refs.is_empty() {
        p.expect_punct(b':')?;
        let pos = p.tok.start;
        let tys = p.type_list()?;
        operands = p.resolve_list(&refs, &tys, pos)?;
    }
    Ok((operands, attrs))
}

fn parse_return(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let (operands, attrs) = parse_return_like(p)?;
    simple(p, name, operands, Vec::new(), attrs)
}

fn print_call(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    if !m.regions(op).is_empty() || m.num_successors(op) != 0 {
        return None;
    }
    let callee = m.attr(op, "callee")?.as_symbol()?;
    p.w(short_name(m, op, "call", FuncOp::Call.name()));
    p.w(" ");
    p.symbol(callee);
    p.w("(");
    p.values(m.operands(op));
    p.w(")");
    p.attr_dict(op, &["callee"]);
    p.w(" : (");
    p.value_types(m.operands(op));
    p.w(") -> ");
    let results = m.results(op);
    if results.len() == 1 && !matches!(m.value_type(results[0]), Type::Function(_)) {
        p.ty(m.value_type(results[0]));
    } else {
        p.w("(");
        p.value_types(results);
        p.w(")");
    }
    Some(())
}

fn parse_call(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let callee = p.symbol_ref()?;
    p.expect_punct(b'(')?;
    let refs = p.operand_list()?;
    p.expect_punct(b')')?;
    let mut attrs = vec![attr("callee", Attribute::symbol(&callee))];
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let pos = p.tok.start;
    let Type::Function(fty) = p.parse_type()? else {
        return Err(p.err_at(pos, "expected function type"));
    };
    let operands = p.resolve_list(&refs, &fty.inputs, pos)?;
    simple(p, name, operands, fty.results.clone(), attrs)
}
