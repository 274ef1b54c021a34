//! `bufferization.dealloc` (`bufferization.clone` uses the Cast form).

use super::{attr, Form};
use crate::attr::Attribute;
use crate::dialects::bufferization::{dealloc_groups, segment_attr};
use crate::module::{OpId, OpSpec};
use crate::ops::BufferizationOp;
use crate::text::parser::{PResult, Parser};
use crate::text::printer::Printer;
use crate::types::Type;

pub(super) fn form(op: BufferizationOp) -> Option<Form> {
    match op {
        BufferizationOp::Dealloc => Some(Form {
            print: print_dealloc,
            parse: parse_dealloc,
        }),
        // The table's cast class.
        BufferizationOp::Clone => None,
    }
}

/// `bufferization.dealloc (%a : T) if (%c) retain (%r : U) attr-dict`;
/// both groups are omitted when empty.
fn print_dealloc(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    let (n, c, r) = dealloc_groups(m, op)?;
    let ops = m.operands(op);
    if n != c || n.checked_add(c)?.checked_add(r)? != ops.len() || m.results(op).len() != r {
        return None;
    }
    super::shape(m, op, None, r, 0)?;
    if ops[n..2 * n]
        .iter()
        .any(|&v| *m.value_type(v) != Type::i1())
    {
        return None;
    }
    if m.results(op)
        .iter()
        .any(|&v| *m.value_type(v) != Type::i1())
    {
        return None;
    }
    p.w(BufferizationOp::Dealloc.name());
    if n > 0 {
        p.w(" (");
        p.values_with_types(&ops[..n]);
        p.w(") if (");
        p.values(&ops[n..2 * n]);
        p.w(")");
    }
    if r > 0 {
        p.w(" retain (");
        p.values_with_types(&ops[2 * n..]);
        p.w(")");
    }
    p.attr_dict(op, &["operandSegmentSizes"]);
    Some(())
}

/// `(%a, %b : T, U)` resolved.
fn typed_group(p: &mut Parser<'_>) -> PResult<Vec<crate::module::ValueId>> {
    p.expect_punct(b'(')?;
    let refs = p.operand_list()?;
    let mut out = Vec::new();
    if !refs.is_empty() {
        p.expect_punct(b':')?;
        let pos = p.tok.start;
        let tys = p.type_list()?;
        out = p.resolve_list(&refs, &tys, pos)?;
    }
    p.expect_punct(b')')?;
    Ok(out)
}

fn parse_dealloc(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let mut operands = Vec::new();
    let mut n = 0;
    if p.is_punct(b'(') {
        operands = typed_group(p)?;
        n = operands.len();
        p.expect_keyword("if")?;
        p.expect_punct(b'(')?;
        let pos = p.tok.start;
        let conds = p.operand_list()?;
        p.expect_punct(b')')?;
        if conds.len() != n {
            return Err(p.err_at(pos, "expected one condition per deallocated memref"));
        }
        operands.extend(p.resolve_all(&conds, &Type::i1())?);
    }
    let mut r = 0;
    if p.eat_keyword("retain") {
        let retained = typed_group(p)?;
        r = retained.len();
        operands.extend(retained);
    }
    let mut attrs: Vec<(crate::sym::Sym, Attribute)> =
        vec![attr("operandSegmentSizes", segment_attr(n, r))];
    p.opt_attr_dict(&mut attrs)?;
    let spec = OpSpec {
        operands,
        result_types: vec![Type::i1(); r],
        attrs,
        ..OpSpec::default()
    };
    p.create(name, spec, Vec::new())
}
