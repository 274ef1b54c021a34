//! memref views, reshapes and globals: `subview`, `reinterpret_cast`,
//! `collapse_shape`, `expand_shape`, `global`.
//!
//! Mixed static/dynamic lists keep the static entries in `static_*`
//! `array<i64: ...>` attributes (`DYN` where an operand stands) and the
//! dynamic ones as operands after the source, in list order.

use super::{
    attr, dense_array, i32_array, i64_array, parse_index_list, print_index_list, shape, simple,
};
use crate::attr::Attribute;
use crate::module::{Module, OpId, ValueId};
use crate::ops::MemrefOp;
use crate::text::lexer::Kind;
use crate::text::parser::{OperandRef, PResult, Parser};
use crate::text::printer::Printer;
use crate::types::{Type, DYN};
use std::sync::Arc;

const OSS_ELIDED: [&str; 4] = [
    "static_offsets",
    "static_sizes",
    "static_strides",
    "operandSegmentSizes",
];

fn all_index(m: &Module, vs: &[ValueId]) -> bool {
    vs.iter().all(|&v| m.value_type(v).is_index())
}

fn count_dyn(v: &[i64]) -> usize {
    v.iter().filter(|&&d| d == DYN).count()
}

/// The three lists of an offsets/sizes/strides op, if consistent with the
/// operand count.
fn oss_lists(m: &Module, op: OpId) -> Option<[&[i64]; 3]> {
    let o = dense_array(m, op, "static_offsets")?;
    let s = dense_array(m, op, "static_sizes")?;
    let st = dense_array(m, op, "static_strides")?;
    let ops = m.operands(op);
    if ops.len() != 1 + count_dyn(o) + count_dyn(s) + count_dyn(st) || !all_index(m, &ops[1..]) {
        return None;
    }
    Some([o, s, st])
}

/// Resolves the source and the dynamic entries; builds the attributes.
fn oss_finish(
    p: &mut Parser<'_>,
    src: &OperandRef,
    src_ty: &Type,
    lists: [(Vec<i64>, Vec<OperandRef>); 3],
    attrs: &mut Vec<(crate::sym::Sym, Attribute)>,
) -> PResult<Vec<ValueId>> {
    let mut operands = vec![p.resolve(src, src_ty)?];
    let mut seg = vec![1];
    for ((statics, refs), key) in
        lists
            .into_iter()
            .zip(["static_offsets", "static_sizes", "static_strides"])
    {
        seg.push(refs.len() as i64);
        operands.extend(p.resolve_all(&refs, &Type::Index)?);
        attrs.push(attr(key, i64_array(statics)));
    }
    attrs.push(attr("operandSegmentSizes", i32_array(seg)));
    Ok(operands)
}

/// `memref.subview %src[%o, 0] [2, %s] [1, 1] attr-dict : T to U`.
pub(super) fn print_subview(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, None, 1, 0)?;
    let lists = oss_lists(m, op)?;
    let ops = m.operands(op);
    let mut dynamic = ops.get(1..)?.iter();
    p.w("memref.subview ");
    p.value(ops[0]);
    for (i, l) in lists.iter().enumerate() {
        if i > 0 {
            p.w(" ");
        }
        print_index_list(p, l, &mut dynamic)?;
    }
    p.attr_dict(op, &OSS_ELIDED);
    p.w(" : ");
    p.ty(m.value_type(ops[0]));
    p.w(" to ");
    p.ty(m.value_type(m.results(op)[0]));
    Some(())
}

pub(super) fn parse_subview(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let src = p.operand()?;
    let lists = [
        parse_index_list(p)?,
        parse_index_list(p)?,
        parse_index_list(p)?,
    ];
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let from = p.parse_type()?;
    p.expect_keyword("to")?;
    let to = p.parse_type()?;
    let operands = oss_finish(p, &src, &from, lists, &mut attrs)?;
    simple(p, name, operands, vec![to], attrs)
}

/// `memref.reinterpret_cast %src to offset: [0], sizes: [%n, 4], strides:
/// [4, 1] attr-dict : T to U`.
pub(super) fn print_reinterpret(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, None, 1, 0)?;
    let lists = oss_lists(m, op)?;
    let ops = m.operands(op);
    let mut dynamic = ops.get(1..)?.iter();
    p.w("memref.reinterpret_cast ");
    p.value(ops[0]);
    p.w(" to ");
    for (i, (l, key)) in lists.iter().zip(["offset", "sizes", "strides"]).enumerate() {
        if i > 0 {
            p.w(", ");
        }
        p.w(key);
        p.w(": ");
        print_index_list(p, l, &mut dynamic)?;
    }
    p.attr_dict(op, &OSS_ELIDED);
    p.w(" : ");
    p.ty(m.value_type(ops[0]));
    p.w(" to ");
    p.ty(m.value_type(m.results(op)[0]));
    Some(())
}

pub(super) fn parse_reinterpret(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let src = p.operand()?;
    p.expect_keyword("to")?;
    let mut lists: [(Vec<i64>, Vec<OperandRef>); 3] = Default::default();
    for (i, key) in ["offset", "sizes", "strides"].into_iter().enumerate() {
        if i > 0 {
            p.expect_punct(b',')?;
        }
        p.expect_keyword(key)?;
        p.expect_punct(b':')?;
        lists[i] = parse_index_list(p)?;
    }
    let mut attrs = Vec::new();
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let from = p.parse_type()?;
    p.expect_keyword("to")?;
    let to = p.parse_type()?;
    let operands = oss_finish(p, &src, &from, lists, &mut attrs)?;
    simple(p, name, operands, vec![to], attrs)
}

/// `[[0, 1], [2]]` of a reassociation attribute.
fn reassociation(a: &Attribute) -> Option<Vec<Vec<i64>>> {
    a.as_array()?
        .iter()
        .map(|g| {
            g.as_array()?
                .iter()
                .map(|i| match i {
                    Attribute::Int(v, _) => Some(*v),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// `memref.collapse_shape %a [[0, 1], [2]] attr-dict : T into U`, and
/// `memref.expand_shape %a [[0, 1], [2]] output_shape [2, %n, 4] ...`.
pub(super) fn print_reshape(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, None, 1, 0)?;
    let name = m.name(op).as_str();
    let groups = reassociation(m.attr(op, "reassociation")?)?;
    let ops = m.operands(op);
    let expand = name == MemrefOp::ExpandShape.name();
    let out_shape = if expand {
        let s = dense_array(m, op, "static_output_shape")?;
        (ops.len() == 1 + count_dyn(s) && all_index(m, &ops[1..])).then_some(s)?
    } else if ops.len() == 1 {
        &[]
    } else {
        return None;
    };
    p.w(name);
    p.w(" ");
    p.value(ops[0]);
    p.w(" [");
    for (i, g) in groups.iter().enumerate() {
        if i > 0 {
            p.w(", ");
        }
        p.w("[");
        for (j, d) in g.iter().enumerate() {
            if j > 0 {
                p.w(", ");
            }
            p.wf(format_args!("{d}"));
        }
        p.w("]");
    }
    p.w("]");
    if expand {
        p.w(" output_shape ");
        print_index_list(p, out_shape, &mut ops[1..].iter())?;
    }
    p.attr_dict(op, &["reassociation", "static_output_shape"]);
    p.w(" : ");
    p.ty(m.value_type(ops[0]));
    p.w(" into ");
    p.ty(m.value_type(m.results(op)[0]));
    Some(())
}

pub(super) fn parse_reshape(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let src = p.operand()?;
    p.expect_punct(b'[')?;
    let mut groups = Vec::new();
    if !p.eat_punct(b']') {
        loop {
            p.expect_punct(b'[')?;
            let mut g = Vec::new();
            if !p.eat_punct(b']') {
                loop {
                    g.push(Attribute::i64(p.int()?));
                    if !p.eat_punct(b',') {
                        break;
                    }
                }
                p.expect_punct(b']')?;
            }
            groups.push(Attribute::Array(Arc::from(g)));
            if !p.eat_punct(b',') {
                break;
            }
        }
        p.expect_punct(b']')?;
    }
    let mut attrs = vec![attr("reassociation", Attribute::Array(Arc::from(groups)))];
    let mut dyn_refs = Vec::new();
    if name == MemrefOp::ExpandShape.name() {
        p.expect_keyword("output_shape")?;
        let (statics, refs) = parse_index_list(p)?;
        attrs.push(attr("static_output_shape", i64_array(statics)));
        dyn_refs = refs;
    }
    p.opt_attr_dict(&mut attrs)?;
    p.expect_punct(b':')?;
    let from = p.parse_type()?;
    p.expect_keyword("into")?;
    let to = p.parse_type()?;
    let mut operands = vec![p.resolve(&src, &from)?];
    operands.extend(p.resolve_all(&dyn_refs, &Type::Index)?);
    simple(p, name, operands, vec![to], attrs)
}

const GLOBAL_ELIDED: [&str; 5] = [
    "sym_visibility",
    "constant",
    "sym_name",
    "type",
    "initial_value",
];

/// `memref.global "private" constant @g : memref<2xf32> = dense<...> attr-dict`.
pub(super) fn print_global(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    shape(m, op, Some(0), 0, 0)?;
    let name = m.attr(op, "sym_name")?.as_str()?;
    let ty = m.attr(op, "type")?.as_type()?;
    let mt = ty.as_memref()?;
    let vis = match m.attr(op, "sym_visibility") {
        Some(a) => Some(a.as_str()?),
        None => None,
    };
    let constant = match m.attr(op, "constant") {
        Some(Attribute::Unit) => true,
        None => false,
        Some(_) => return None,
    };
    let init = match m.attr(op, "initial_value") {
        None => None,
        Some(Attribute::Unit) => Some("uninitialized".to_string()),
        Some(a @ Attribute::Elements(e)) => {
            if e.shape() != mt.shape.as_slice() || e.tensor_type().element_type() != &mt.elem {
                return None;
            }
            // The literal's type is implied by the global's type.
            let full = a.to_string();
            let suffix = format!(" : {}", e.tensor_type());
            Some(full.strip_suffix(&suffix)?.to_string())
        }
        Some(_) => return None,
    };
    p.w("memref.global ");
    if let Some(v) = vis {
        p.string(v);
        p.w(" ");
    }
    if constant {
        p.w("constant ");
    }
    p.symbol(name);
    p.w(" : ");
    p.ty(ty);
    if let Some(i) = init {
        p.w(" = ");
        p.w(&i);
    }
    p.attr_dict(op, &GLOBAL_ELIDED);
    Some(())
}

pub(super) fn parse_global(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let mut attrs = Vec::new();
    if p.is(Kind::String) {
        let vis = p.string()?;
        attrs.push(attr("sym_visibility", Attribute::string(&vis)));
    }
    if p.eat_keyword("constant") {
        attrs.push(attr("constant", Attribute::Unit));
    }
    let sym = p.symbol_name()?;
    attrs.push(attr("sym_name", Attribute::string(&sym)));
    p.expect_punct(b':')?;
    let ty_pos = p.tok.start;
    let ty = p.parse_type()?;
    let Some(mt) = ty.as_memref() else {
        return Err(p.err_at(ty_pos, "expected a memref type"));
    };
    let tensor = Type::tensor(mt.shape.clone(), mt.elem.clone());
    attrs.push(attr("type", Attribute::Type(ty.clone())));
    if p.eat_punct(b'=') {
        let init = if p.eat_keyword("uninitialized") {
            Attribute::Unit
        } else if p.is_keyword("dense") {
            p.parse_dense(Some(tensor))?
        } else {
            return Err(p.err("expected 'uninitialized' or dense elements"));
        };
        attrs.push(attr("initial_value", init));
    }
    p.opt_attr_dict(&mut attrs)?;
    simple(p, name, Vec::new(), Vec::new(), attrs)
}
