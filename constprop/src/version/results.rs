//! Function results whose rank still varies after versioning: returned in
//! their largest rank plus a rank result, for the C wrapper.

use super::{if_like, value_name, yield_of};
use crate::canon::{make_i64s, make_op};
use ir::attr::Attribute;
use ir::FuncOp;
use ir::{Module, OpId, Type, ValueId};
use onnx::OpKind;

/// Function results whose rank is decided at run time (by versioned Ifs):
/// each is returned in its largest rank, the versions of lower rank
/// adding leading dims of 1, plus a result holding its rank, listed in
/// `func::OUTPUT_RANK_RESULTS` for the C wrapper.
pub(super) fn pad_varying_results(m: &mut Module, f: OpId) -> bool {
    let Some(ret) = m
        .region(f, 0)
        .and_then(|r| m.entry_block(r))
        .and_then(|b| m.last_op(b))
        .filter(|&t| m.is(t, FuncOp::Return))
    else {
        return false;
    };
    let mut table: Vec<Option<usize>> = ir::dialects::func::output_rank_results(m, f)
        .unwrap_or_else(|| vec![None; m.operands(ret).len()]);
    let mut changed = false;
    for i in 0..table.len() {
        let Some(v) = m.operand(ret, i) else { break };
        if m.value_type(v).shape().is_some() {
            continue;
        }
        let Some(max) = leaf_ranks(m, v, ret).and_then(|r| r.into_iter().max()) else {
            continue;
        };
        let Some((padded, rank)) = pad_rank(m, v, max, ret) else {
            continue;
        };
        // Each output of the value (the If's uses now read `padded`)
        // points to its rank, the last result.
        let mut operands = m.operands(ret).to_vec();
        operands.push(rank);
        let at = operands.len() - 1;
        for (j, t) in table.iter_mut().enumerate() {
            if operands.get(j) == Some(&padded) {
                *t = Some(at);
            }
        }
        m.set_operands(ret, &operands);
        changed = true;
    }
    if changed {
        let ints = table
            .iter()
            .map(|t| Attribute::Int(t.map_or(-1, |k| k as i64), Type::i64()))
            .collect::<Vec<_>>();
        m.set_attr(
            f,
            ir::dialects::func::OUTPUT_RANK_RESULTS,
            Attribute::Array(ints.into()),
        );
    }
    changed
}

/// The ranks `v` may have: its own (a ranked value is padded by a new
/// op, whoever else reads it), or those its If's branches yield, when
/// the If result is read by `user` alone (a padded form is all it may
/// see).
fn leaf_ranks(m: &Module, v: ValueId, user: OpId) -> Option<Vec<usize>> {
    if let Some(s) = m.value_type(v).shape() {
        return Some(vec![s.len()]);
    }
    if m.uses(v).iter().any(|u| u.op != user) {
        return None;
    }
    let iff = m.defining_op(v).filter(|&o| onnx::is(m, o, OpKind::If))?;
    let i = m.results(iff).iter().position(|&r| r == v)?;
    let mut ranks = Vec::new();
    for k in 0..2 {
        let y = yield_of(m, iff, k)?;
        ranks.extend(leaf_ranks(m, m.operand(y, i)?, y)?);
    }
    Some(ranks)
}

/// `v` in rank `max` (leading 1s) and its rank as a 0-d i64, made before
/// `before`; an If result is padded in each branch, the If yielding the
/// rank as one more result.
fn pad_rank(m: &mut Module, v: ValueId, max: usize, before: OpId) -> Option<(ValueId, ValueId)> {
    if let Some(s) = m.value_type(v).shape().map(<[i64]>::to_vec) {
        let r = s.len();
        let rank = make_i64s(m, before, vec![], &[r as i64])?;
        if r == max {
            return Some((v, rank));
        }
        let lead = max - r;
        let axes: Vec<i64> = (0..lead as i64).collect();
        let axes = make_i64s(m, before, vec![lead as i64], &axes)?;
        let dims: Vec<i64> = std::iter::repeat_n(1, lead).chain(s).collect();
        let ty = Type::tensor(dims, m.value_type(v).element_type().clone());
        let padded = make_op(m, before, onnx::ops::Unsqueeze::build(v, axes), ty, "")?;
        return Some((padded, rank));
    }
    let iff = m.defining_op(v)?;
    let i = m.results(iff).iter().position(|&r| r == v)?;
    let mut padded = Vec::new();
    for k in 0..2 {
        let y = yield_of(m, iff, k)?;
        let (p, r) = pad_rank(m, m.operand(y, i)?, max, y)?;
        let mut ys = m.operands(y).to_vec();
        ys[i] = p;
        ys.push(r);
        m.set_operands(y, &ys);
        padded.push(p);
    }
    let mut types: Vec<Type> = m
        .results(iff)
        .iter()
        .map(|&r| m.value_type(r).clone())
        .collect();
    types[i] = frontend::infer::control::join(m.value_type(padded[0]), m.value_type(padded[1]));
    types.push(Type::tensor(vec![], Type::i64()));
    let mut names: Vec<Attribute> = (0..m.results(iff).len())
        .map(|j| Attribute::String(value_name(m, m.results(iff)[j]).into()))
        .collect();
    names.push(Attribute::String("".into()));
    let new = if_like(m, iff, types, names);
    for (j, r) in m.results(iff).to_vec().into_iter().enumerate() {
        if let Some(n) = m.result(new, j) {
            m.replace_all_uses(r, n);
        }
    }
    m.erase_op(iff);
    let n = m.results(new).len();
    Some((m.result(new, i)?, m.result(new, n - 1)?))
}
