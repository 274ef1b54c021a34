//! Pretty (custom) forms of the registered ops, grouped by dialect, plus
//! the two registry classes `Syntax::SameType` and `Syntax::Cast`.
//!
//! A print function returns `None` when the op does not have the shape its
//! form assumes (wrong counts, missing attributes); the printer then uses
//! the generic form, so malformed IR still round-trips.

mod arith;
mod bufferization;
mod cf;
mod func;
mod memref;
mod memref_view;
mod scf;
mod vector;

use super::parser::{PResult, Parser};
use super::printer::Printer;
use crate::attr::Attribute;
use crate::module::{Module, OpId, OpSpec};
use crate::ops::{BuiltinOp, CfOp, CoreOp, FuncOp, MemrefOp};
use crate::registry::{self, Syntax};
use crate::sym::Sym;
use crate::types::{Type, DYN};
use std::sync::Arc;

pub(crate) type PrintFn = fn(&mut Printer<'_>, OpId) -> Option<()>;
pub(crate) type ParseFn = fn(&mut Parser<'_>, &str) -> PResult<OpId>;

/// How one op name prints and parses in pretty form.
pub(crate) struct Form {
    pub print: PrintFn,
    pub parse: ParseFn,
}

fn lookup(name: &str) -> Option<Form> {
    let def = registry::lookup_name(name)?;
    match def.syntax {
        Syntax::SameType => Some(Form {
            print: print_same_type,
            parse: parse_same_type,
        }),
        Syntax::Cast => Some(Form {
            print: print_cast,
            parse: parse_cast,
        }),
        Syntax::Format(_) => Some(Form {
            print: super::format::print,
            parse: super::format::parse,
        }),
        Syntax::Generic => None,
        Syntax::Custom => custom_form(CoreOp::from_name(name)?),
    }
}

/// The hand-written form of a core op whose table format is `custom`.
fn custom_form(op: CoreOp) -> Option<Form> {
    match op {
        CoreOp::Builtin(BuiltinOp::Module) => Some(Form {
            print: print_module_op,
            parse: parse_module_op,
        }),
        CoreOp::Func(op) => func::form(op),
        CoreOp::Arith(op) => arith::form(op),
        CoreOp::Math(_) | CoreOp::X86Vector(_) => None,
        CoreOp::Memref(op) => memref::form(op),
        CoreOp::Scf(op) => scf::form(op),
        CoreOp::Cf(op) => cf::form(op),
        CoreOp::Bufferization(op) => bufferization::form(op),
        CoreOp::Vector(op) => vector::form(op),
    }
}

/// Prints `op` in its pretty form; `None` if it has none or does not fit it.
pub(crate) fn print_custom(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let name = p.m.name(op);
    registry::lookup(name)?;
    (lookup(name.as_str())?.print)(p, op)
}

/// Parses a pretty-form op whose name is the current token.
pub(crate) fn parse_custom(p: &mut Parser<'_>) -> PResult<OpId> {
    let pos = p.tok.start;
    let name = match p.text() {
        // The func dialect is the default inside functions, as in MLIR.
        "return" => FuncOp::Return.name(),
        "call" => FuncOp::Call.name(),
        "module" => BuiltinOp::Module.name(),
        other => other,
    };
    let Some(form) = lookup(name) else {
        return Err(p.err_at(
            pos,
            &format!("custom op '{name}' is unknown (unregistered ops need the generic form \"{name}\"(...))"),
        ));
    };
    p.bump();
    (form.parse)(p, name)
}

/// `operandSegmentSizes` MLIR needs in the generic form of ops whose IR
/// here keeps the split implicit.
pub(crate) fn derived_segments(m: &Module, op: OpId, inline_succ: bool) -> Option<Attribute> {
    let has = m.attr(op, "operandSegmentSizes").is_some();
    let seg = |v: Vec<i64>| Some(Attribute::DenseArray(Type::i(32), Arc::from(v)));
    use MemrefOp as M;
    match CoreOp::of(m, op)? {
        CoreOp::Memref(M::Alloc | M::Alloca) if !has => seg(vec![m.operands(op).len() as i64, 0]),
        CoreOp::Memref(M::Subview | M::ReinterpretCast) if !has => {
            let n = |k: &str| {
                m.attr(op, k)
                    .and_then(Attribute::as_dense_array)
                    .map(|a| a.iter().filter(|&&d| d == DYN).count() as i64)
            };
            seg(vec![
                1,
                n("static_offsets")?,
                n("static_sizes")?,
                n("static_strides")?,
            ])
        }
        CoreOp::Cf(CfOp::CondBr) if inline_succ => seg(vec![
            m.regular_operands(op).len() as i64,
            m.successor_args(op, 0).len() as i64,
            m.successor_args(op, 1).len() as i64,
        ]),
        _ => None,
    }
}

// ---- shared checks and pieces ----

/// Operand (when given), result and region counts, and no successors.
pub(crate) fn shape(
    m: &Module,
    op: OpId,
    operands: Option<usize>,
    results: usize,
    regions: usize,
) -> Option<()> {
    let ok = operands.is_none_or(|n| m.operands(op).len() == n)
        && m.results(op).len() == results
        && m.regions(op).len() == regions
        && m.num_successors(op) == 0;
    ok.then_some(())
}

/// A plain op (no regions or successors) from parsed pieces.
pub(crate) fn simple(
    p: &mut Parser<'_>,
    name: &str,
    operands: Vec<crate::module::ValueId>,
    results: Vec<Type>,
    attrs: Vec<(Sym, Attribute)>,
) -> PResult<OpId> {
    let spec = OpSpec {
        operands,
        result_types: results,
        attrs,
        ..OpSpec::default()
    };
    p.create(name, spec, Vec::new())
}

pub(crate) fn attr(key: &'static str, value: Attribute) -> (Sym, Attribute) {
    (Sym::new(key), value)
}

/// Writes `[%a, 4, ?...]`: static entries as numbers, `DYN` ones as the
/// next dynamic operand. `None` if the counts disagree.
pub(crate) fn print_index_list(
    p: &mut Printer<'_>,
    statics: &[i64],
    dynamic: &mut std::slice::Iter<'_, crate::module::ValueId>,
) -> Option<()> {
    p.w("[");
    for (i, &s) in statics.iter().enumerate() {
        if i > 0 {
            p.w(", ");
        }
        if s == DYN {
            p.value(*dynamic.next()?);
        } else {
            p.wf(format_args!("{s}"));
        }
    }
    p.w("]");
    Some(())
}

/// Parses `[%a, 4]`: the static list (with `DYN` for operands) and operands.
pub(crate) fn parse_index_list(
    p: &mut Parser<'_>,
) -> PResult<(Vec<i64>, Vec<super::parser::OperandRef>)> {
    p.expect_punct(b'[')?;
    let (mut statics, mut refs) = (Vec::new(), Vec::new());
    if !p.eat_punct(b']') {
        loop {
            if p.is(super::lexer::Kind::PercentId) {
                refs.push(p.operand()?);
                statics.push(DYN);
            } else {
                let pos = p.tok.start;
                let v = p.int()?;
                if v == DYN {
                    return Err(p.err_at(pos, "integer is too small"));
                }
                statics.push(v);
            }
            if !p.eat_punct(b',') {
                break;
            }
        }
        p.expect_punct(b']')?;
    }
    Ok((statics, refs))
}

/// A `DenseArray` attribute's values, if `op` has it.
pub(crate) fn dense_array<'m>(m: &'m Module, op: OpId, key: &str) -> Option<&'m [i64]> {
    m.attr(op, key)?.as_dense_array()
}

pub(crate) fn i64_array(v: Vec<i64>) -> Attribute {
    Attribute::DenseArray(Type::i64(), Arc::from(v))
}

pub(crate) fn i32_array(v: Vec<i64>) -> Attribute {
    Attribute::DenseArray(Type::i(32), Arc::from(v))
}

// ---- builtin.module ----

fn print_module_op(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, Some(0), 0, 1)?;
    let r = m.region(op, 0)?;
    let [b] = m.region_blocks(r) else { return None };
    if !m.block_args(*b).is_empty() {
        return None;
    }
    p.w("module");
    let mut elided: &[&str] = &[];
    if let Some(a) = m.attr(op, "sym_name") {
        p.w(" ");
        p.symbol(a.as_str()?);
        elided = &["sym_name"];
    }
    p.attr_dict_with_keyword(op, elided);
    p.w(" ");
    p.region(r, false, true, false);
    Some(())
}

fn parse_module_op(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let mut attrs = Vec::new();
    if p.is(super::lexer::Kind::AtId) {
        let s = p.symbol_name()?;
        attrs.push(attr("sym_name", Attribute::String(Arc::from(s.as_str()))));
    }
    p.opt_attr_dict_with_keyword(&mut attrs)?;
    let r = p.scratch_region();
    p.parse_region(r, None, true)?;
    if p.m.region_blocks(r).is_empty() {
        p.m.append_block(r, &[]);
    }
    let spec = OpSpec {
        attrs,
        ..OpSpec::default()
    };
    p.create(name, spec, vec![r])
}

// ---- registry classes ----

/// `op %a, %b attr-dict : T`: operands and the one result share `T`.
fn print_same_type(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, None, 1, 0)?;
    let ty = m.value_type(m.results(op)[0]);
    if m.operands(op).is_empty() || m.operands(op).iter().any(|&v| m.value_type(v) != ty) {
        return None;
    }
    p.w(m.name(op).as_str());
    p.w(" ");
    p.values(m.operands(op));
    p.attr_dict(op, &[]);
    p.w(" : ");
    p.ty(ty);
    Some(())
}

fn parse_same_type(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let refs = p.operand_list()?;
    if refs.is_empty() {
        return Err(p.err("expected SSA operand"));
    }
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let ty = p.parse_type()?;
    let operands = p.resolve_all(&refs, &ty)?;
    simple(p, name, operands, vec![ty], attrs)
}

/// `op %a attr-dict : T to U`.
fn print_cast(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, Some(1), 1, 0)?;
    p.w(m.name(op).as_str());
    p.w(" ");
    p.value(m.operands(op)[0]);
    p.attr_dict(op, &[]);
    p.w(" : ");
    p.ty(m.value_type(m.operands(op)[0]));
    p.w(" to ");
    p.ty(m.value_type(m.results(op)[0]));
    Some(())
}

fn parse_cast(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let r = p.operand()?;
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let from = p.parse_type()?;
    p.expect_keyword("to")?;
    let to = p.parse_type()?;
    let v = p.resolve(&r, &from)?;
    simple(p, name, vec![v], vec![to], attrs)
}
