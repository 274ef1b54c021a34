//! Versioning on a rank known only at run time.
//!
//! A memref has one rank, but ONNX lets a value's rank depend on data: an
//! `If` whose branches yield different ranks (exported voice-activity
//! models), a `Squeeze` without axes of a dim that may be 1 (opset < 13
//! torch exports). Such a value is made static by copying the rest of its
//! block into each branch of the `If` that decides the rank, so that each
//! copy sees one rank ("versioning the continuation"); a Squeeze without
//! axes first becomes a chain of `If(dim == 1)`. Shape inference then types
//! each version. Versions double with each level, so their number per
//! path is bounded (`MAX_VERSIONS`), with a diagnostic naming the value
//! beyond it.

use crate::canon::make_const;
use ir::attr::Attribute;
use ir::elements::{DType, Elements, WideNum};
use ir::{Diagnostic, InsertPoint, Module, OpId, OpSpec, Result, Sym, Type, ValueId, ValueMap};
use onnx::{branches, OpKind};
use std::collections::HashSet;

/// Versions of one continuation at most (each versioned If doubles them).
pub const MAX_VERSIONS: usize = 16;

/// Marks an If that carries a versioned continuation.
const VERSIONED_ATTR: &str = "onnxc.versioned";

/// One round over the module: Squeezes without axes of dynamic dims become
/// If chains, and every If whose branches yield ranked values of different
/// ranks takes its continuation into both branches. True if it changed
/// anything (shape inference must run again).
pub fn version_ranks(m: &mut Module) -> Result<bool> {
    let mut changed = false;
    for f in m.top_level_ops("func.func") {
        changed |= pad_varying_results(m, f);
        for op in m.collect_ops(f) {
            if !m.is_erased(op) && !branches::in_dead_branch(m, op) {
                changed |= expand_squeeze(m, op);
            }
        }
        // Innermost Ifs first: a nested version may settle an outer rank.
        for op in m.collect_ops(f).into_iter().rev() {
            if !m.is_erased(op) && rank_decided_here(m, op) {
                absorb_continuation(m, op)?;
                changed = true;
            }
        }
    }
    Ok(changed)
}

/// An If with a result of unknown rank whose branches both yield ranked
/// values, read by an op after it (its continuation).
fn rank_decided_here(m: &Module, op: OpId) -> bool {
    if !onnx::is(m, op, OpKind::If) || branches::in_dead_branch(m, op) {
        return false;
    }
    if (0..2).any(|k| branches::branch_error(m, op, k).is_some()) {
        return false;
    }
    let yields = |k| frontend::infer::control::yield_types(m, op, k);
    let (Some(a), Some(b)) = (yields(0), yields(1)) else {
        return false;
    };
    let unranked: Vec<usize> = (0..m.results(op).len())
        .filter(|&i| {
            m.value_type(m.results(op)[i])
                .as_tensor()
                .is_some_and(|t| t.shape.is_none())
        })
        .collect();
    let terminator = m.op_block(op).and_then(|b| m.last_op(b));
    !unranked.is_empty()
        && unranked.iter().all(|&i| {
            [&a, &b]
                .iter()
                .all(|ys| ys.get(i).is_some_and(|t| t.shape().is_some()))
        })
        && unranked.iter().any(|&i| {
            m.users(m.results(op)[i])
                .iter()
                .any(|&u| Some(u) != terminator)
        })
}

/// How many versioned Ifs enclose `op` (itself included).
fn versioning_depth(m: &Module, op: OpId) -> usize {
    let mut depth = 0;
    let mut cur = Some(op);
    while let Some(o) = cur {
        depth += usize::from(m.attr(o, VERSIONED_ATTR).is_some());
        cur = m.parent_op(o);
    }
    depth
}

fn too_many_versions(m: &Module, op: OpId) -> Diagnostic {
    let i = m
        .results(op)
        .iter()
        .position(|&r| m.value_type(r).shape().is_none())
        .unwrap_or(0);
    let rank = |k| {
        frontend::infer::control::yield_types(m, op, k)
            .and_then(|ts| ts.get(i).and_then(|t| t.shape().map(<[i64]>::len)))
            .map_or("?".to_string(), |r| r.to_string())
    };
    onnx_error(
        m,
        op,
        format!(
            "result {i}{} has rank {} or {} depending on a run-time value; compiling the rest \
             of the graph once per rank would take more than {MAX_VERSIONS} versions",
            result_name(m, op, i),
            rank(0),
            rank(1)
        ),
    )
}

fn onnx_error(m: &Module, op: OpId, msg: String) -> Diagnostic {
    ir::dialects::op_error(m, op, msg)
}

/// " ('name')" of result `i` as the model named it, or "".
fn result_name(m: &Module, op: OpId, i: usize) -> String {
    m.attr(op, onnx::dialect::NAMES_ATTR)
        .and_then(Attribute::as_array)
        .and_then(|a| a.get(i))
        .and_then(Attribute::as_str)
        .map(|n| format!(" ('{n}')"))
        .unwrap_or_default()
}

/// The ops after `op` in its block (terminator excluded) that read its
/// results, directly, through each other or from nested regions.
fn continuation(m: &Module, op: OpId) -> Vec<OpId> {
    let mut reached: HashSet<ValueId> = m.results(op).iter().copied().collect();
    let mut slice = Vec::new();
    let mut cur = m.next_op(op);
    while let Some(o) = cur {
        cur = m.next_op(o);
        if cur.is_none() {
            break; // the terminator
        }
        let reads = m
            .collect_ops(o)
            .iter()
            .any(|&n| m.operands(n).iter().any(|v| reached.contains(v)));
        if reads {
            reached.extend(m.results(o).iter().copied());
            slice.push(o);
        }
    }
    slice
}

/// Moves the continuation of `iff` into both of its branches: ops after it
/// that do not read it move before it, the others are copied into each
/// branch, and a new If yields what the block's terminator reads.
fn absorb_continuation(m: &mut Module, iff: OpId) -> Result<()> {
    if 1 << versioning_depth(m, iff) >= MAX_VERSIONS {
        return Err(too_many_versions(m, iff));
    }
    let (Some(block), Some(terminator)) =
        (m.op_block(iff), m.op_block(iff).and_then(|b| m.last_op(b)))
    else {
        return Ok(());
    };
    let slice = continuation(m, iff);
    let in_slice: HashSet<OpId> = slice.iter().copied().collect();
    let after: Vec<OpId> = m
        .block_ops(block)
        .skip_while(|&o| o != iff)
        .skip(1)
        .collect();
    for o in after {
        if o != terminator && !in_slice.contains(&o) {
            m.move_to(o, InsertPoint::Before(iff));
        }
    }
    let mut produced: HashSet<ValueId> = m.results(iff).iter().copied().collect();
    for &o in &slice {
        produced.extend(m.results(o).iter().copied());
    }
    let mut outs: Vec<ValueId> = Vec::new();
    for &v in m.operands(terminator) {
        if produced.contains(&v) && !outs.contains(&v) {
            outs.push(v);
        }
    }
    let mut branch_outs = Vec::new();
    for k in 0..2 {
        branch_outs.push(copy_into_branch(m, iff, k, &slice, &outs));
    }
    let types = outs
        .iter()
        .enumerate()
        .map(
            |(i, &v)| match (branch_outs[0].get(i), branch_outs[1].get(i)) {
                (Some(&a), Some(&b)) if m.value_type(a) == m.value_type(b) => {
                    m.value_type(a).clone()
                }
                _ => unranked(m.value_type(v)),
            },
        )
        .collect();
    let names: Vec<Attribute> = outs
        .iter()
        .map(|&v| Attribute::String(value_name(m, v).into()))
        .collect();
    let new = if_like(m, iff, types, names);
    for (i, &v) in outs.iter().enumerate() {
        if let Some(r) = m.result(new, i) {
            m.replace_uses_where(v, r, |_, u| u.op == terminator);
        }
    }
    for &o in slice.iter().rev() {
        m.erase_op(o);
    }
    m.erase_op(iff);
    Ok(())
}

/// A new If before `iff` with its condition, attributes and regions (taken
/// from `iff`), results of `types` named `names`, marked versioned.
fn if_like(m: &mut Module, iff: OpId, types: Vec<Type>, names: Vec<Attribute>) -> OpId {
    let mut attrs: Vec<(Sym, Attribute)> = m.attrs(iff).to_vec();
    attrs.retain(|(s, _)| s.as_str() != onnx::dialect::NAMES_ATTR);
    attrs.push((
        Sym::new(onnx::dialect::NAMES_ATTR),
        Attribute::Array(names.into()),
    ));
    attrs.push((Sym::new(VERSIONED_ATTR), Attribute::Bool(true)));
    let new = m.create_op(
        m.name(iff),
        OpSpec {
            operands: m.operands(iff).to_vec(),
            result_types: types,
            attrs,
            regions: 2,
            loc: m.loc(iff).clone(),
            ..OpSpec::default()
        },
    );
    m.insert(new, InsertPoint::Before(iff));
    for k in 0..2 {
        if let (Some(from), Some(to)) = (m.region(iff, k), m.region(new, k)) {
            m.take_blocks(from, to);
        }
    }
    new
}

/// Copies `slice` before the yield of branch `k` of `iff`, reading the
/// branch's yielded values for the If's results; the yield then gives
/// the copies of `outs`. Copies are typed afresh by inference.
fn copy_into_branch(
    m: &mut Module,
    iff: OpId,
    k: usize,
    slice: &[OpId],
    outs: &[ValueId],
) -> Vec<ValueId> {
    let Some(y) = m
        .region(iff, k)
        .and_then(|r| m.entry_block(r))
        .and_then(|b| m.last_op(b))
    else {
        return Vec::new();
    };
    let mut map = ValueMap::new();
    for (&r, &v) in m.results(iff).to_vec().iter().zip(&m.operands(y).to_vec()) {
        map.insert(r, v);
    }
    for &o in slice {
        let copy = m.clone_op(o, InsertPoint::Before(y), &mut map);
        for r in m.results(copy).to_vec() {
            let t = unranked(m.value_type(r));
            m.set_value_type(r, t);
        }
    }
    let yielded: Vec<ValueId> = outs.iter().map(|v| *map.get(v).unwrap_or(v)).collect();
    m.set_operands(y, &yielded);
    yielded
}

/// A tensor type without its shape (other types as they are).
fn unranked(t: &Type) -> Type {
    match t.as_tensor() {
        Some(tt) => Type::unranked_tensor(tt.elem.clone()),
        None => t.clone(),
    }
}

/// The ONNX name of `v` ("" when unknown).
fn value_name(m: &Module, v: ValueId) -> String {
    let Some(def) = m.defining_op(v) else {
        return String::new();
    };
    let i = m.results(def).iter().position(|&r| r == v).unwrap_or(0);
    m.attr(def, onnx::dialect::NAMES_ATTR)
        .and_then(Attribute::as_array)
        .and_then(|a| a.get(i))
        .and_then(Attribute::as_str)
        .unwrap_or("")
        .to_string()
}

/// `Squeeze(x)` without axes of an `x` with dynamic dims: from the last dim
/// to the first, a static 1 is squeezed and a dynamic dim is squeezed in
/// the then branch of `If(dim == 1)` (kept in the else branch), so the
/// rank is decided by Ifs that `absorb_continuation` versions.
fn expand_squeeze(m: &mut Module, op: OpId) -> bool {
    if !onnx::is(m, op, OpKind::Squeeze) || m.operands(op).len() != 1 {
        return false;
    }
    let (Some(&x), Some(&r)) = (m.operands(op).first(), m.results(op).first()) else {
        return false;
    };
    let Some(dims) = m.value_type(x).shape().map(<[i64]>::to_vec) else {
        return false;
    };
    if m.value_type(r).shape().is_some() || !dims.contains(&ir::DYN) {
        return false;
    }
    // Ops made before a failure are left unused; dead-code removal takes them.
    let mut v = x;
    for (axis, &d) in dims.iter().enumerate().rev() {
        let next = match d {
            1 => squeeze_axis(m, op, InsertPoint::Before(op), v, axis),
            ir::DYN => squeeze_if_one(m, op, v, axis),
            _ => Some(v),
        };
        let Some(next) = next else {
            return false;
        };
        v = next;
    }
    m.replace_all_uses(r, v);
    m.erase_op(op);
    true
}

/// An ONNX op of one result at `ip`, located as `at`.
fn add_op(
    m: &mut Module,
    at: OpId,
    ip: InsertPoint,
    kind: OpKind,
    operands: Vec<ValueId>,
    ty: Type,
) -> Option<ValueId> {
    let o = m.create_op(
        Sym::new(kind.ir_name()),
        OpSpec {
            operands,
            result_types: vec![ty],
            loc: m.loc(at).clone(),
            ..OpSpec::default()
        },
    );
    m.insert(o, ip);
    m.result(o, 0)
}

fn i64_const(m: &mut Module, before: OpId, shape: Vec<i64>, values: &[i64]) -> Option<ValueId> {
    let wide: Vec<WideNum> = values.iter().map(|&v| WideNum::from_i64(v)).collect();
    let e = Elements::from_wide(DType::I64, shape, &wide).ok()?;
    make_const(m, before, e)
}

/// `Squeeze(v, [axis])` at `ip`.
fn squeeze_axis(
    m: &mut Module,
    at: OpId,
    ip: InsertPoint,
    v: ValueId,
    axis: usize,
) -> Option<ValueId> {
    let anchor = match ip {
        InsertPoint::Before(o) => o,
        _ => at,
    };
    let axes = i64_const(m, anchor, vec![1], &[axis as i64])?;
    let elem = m.value_type(v).element_type().clone();
    add_op(
        m,
        at,
        ip,
        OpKind::Squeeze,
        vec![v, axes],
        Type::unranked_tensor(elem),
    )
}

/// `If(Shape(v)[axis] == 1) { Squeeze(v, [axis]) } else { v }` before `at`.
fn squeeze_if_one(m: &mut Module, at: OpId, v: ValueId, axis: usize) -> Option<ValueId> {
    let before = InsertPoint::Before(at);
    let rank = m.value_type(v).shape().map_or(ir::DYN, |s| s.len() as i64);
    let shape = add_op(
        m,
        at,
        before,
        OpKind::Shape,
        vec![v],
        Type::tensor(vec![rank], Type::i64()),
    )?;
    let index = i64_const(m, at, vec![], &[axis as i64])?;
    let dim = add_op(
        m,
        at,
        before,
        OpKind::Gather,
        vec![shape, index],
        Type::tensor(vec![], Type::i64()),
    )?;
    let one = i64_const(m, at, vec![], &[1])?;
    let cond = add_op(
        m,
        at,
        before,
        OpKind::Equal,
        vec![dim, one],
        Type::tensor(vec![], Type::i1()),
    )?;
    let elem = m.value_type(v).element_type().clone();
    let iff = m.create_op(
        Sym::new(OpKind::If.ir_name()),
        OpSpec {
            operands: vec![cond],
            result_types: vec![Type::unranked_tensor(elem)],
            regions: 2,
            loc: m.loc(at).clone(),
            ..OpSpec::default()
        },
    );
    m.insert(iff, before);
    for k in 0..2 {
        let region = m.region(iff, k)?;
        let block = m.append_block(region, &[]);
        let y = m.create_op(
            Sym::new(OpKind::Yield.ir_name()),
            OpSpec {
                loc: m.loc(at).clone(),
                ..OpSpec::default()
            },
        );
        m.insert(y, InsertPoint::End(block));
        let out = if k == 0 {
            squeeze_axis(m, at, InsertPoint::Before(y), v, axis)?
        } else {
            v
        };
        m.set_operands(y, &[out]);
    }
    m.result(iff, 0)
}

/// Function results whose rank is decided at run time (by versioned Ifs):
/// each is returned in its largest rank, the versions of lower rank
/// adding leading dims of 1, plus a result holding its rank, listed in
/// `func::OUTPUT_RANK_RESULTS` for the C wrapper.
fn pad_varying_results(m: &mut Module, f: OpId) -> bool {
    let Some(ret) = m
        .region(f, 0)
        .and_then(|r| m.entry_block(r))
        .and_then(|b| m.last_op(b))
        .filter(|&t| m.is(t, "func.return"))
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

/// The ranks `v` may have: its own, or those its If's branches yield,
/// when `v` is read by `user` alone (a padded form is all it may see).
fn leaf_ranks(m: &Module, v: ValueId, user: OpId) -> Option<Vec<usize>> {
    if m.uses(v).iter().any(|u| u.op != user) {
        return None;
    }
    if let Some(s) = m.value_type(v).shape() {
        return Some(vec![s.len()]);
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

fn yield_of(m: &Module, iff: OpId, k: usize) -> Option<OpId> {
    m.region(iff, k)
        .and_then(|r| m.entry_block(r))
        .and_then(|b| m.last_op(b))
}

/// `v` in rank `max` (leading 1s) and its rank as a 0-d i64, made before
/// `before`; an If result is padded in each branch, the If yielding the
/// rank as one more result.
fn pad_rank(m: &mut Module, v: ValueId, max: usize, before: OpId) -> Option<(ValueId, ValueId)> {
    if let Some(s) = m.value_type(v).shape().map(<[i64]>::to_vec) {
        let r = s.len();
        let rank = i64_const(m, before, vec![], &[r as i64])?;
        if r == max {
            return Some((v, rank));
        }
        let lead = max - r;
        let axes: Vec<i64> = (0..lead as i64).collect();
        let axes = i64_const(m, before, vec![lead as i64], &axes)?;
        let dims: Vec<i64> = std::iter::repeat_n(1, lead).chain(s).collect();
        let ty = Type::tensor(dims, m.value_type(v).element_type().clone());
        let padded = add_op(
            m,
            before,
            InsertPoint::Before(before),
            OpKind::Unsqueeze,
            vec![v, axes],
            ty,
        )?;
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

#[cfg(test)]
mod tests {
    use crate::hybrid::{ConstProp, Growth};
    use ir::pass::Pass;

    fn run(src: &str) -> ir::Result<ir::Module> {
        let mut m = ir::text::parse_module(src, "t.mlir")?;
        let pass = ConstProp {
            config: Default::default(),
            growth: Growth::Unbounded,
            lazy_min: crate::fold::DEFAULT_LAZY_MIN,
            version_ranks: true,
        };
        pass.run(&mut m, &mut Default::default())?;
        Ok(m)
    }

    /// A Squeeze without axes of a value with `n` dynamic dims, read after.
    fn squeeze_of_dims(n: usize) -> String {
        let ty = format!("tensor<{}f32>", "?x".repeat(n));
        format!(
            "func.func @f(%x: {ty}) -> tensor<*xf32> {{\n\
             %s = \"onnx.Squeeze\"(%x) : ({ty}) -> tensor<*xf32>\n\
             %r = \"onnx.Relu\"(%s) : (tensor<*xf32>) -> tensor<*xf32>\n\
             return %r : tensor<*xf32>\n}}\n"
        )
    }

    #[test]
    fn four_dims_make_sixteen_versions() {
        let m = run(&squeeze_of_dims(4)).expect("16 versions are allowed");
        let f = m.top_level_ops("func.func")[0];
        let relus = m
            .collect_ops(f)
            .into_iter()
            .filter(|&o| m.is(o, "onnx.Relu"))
            .count();
        assert_eq!(relus, 16);
        assert!(ir::verify::verify(&m).is_ok());
    }

    #[test]
    fn more_versions_than_the_bound_is_a_diagnostic() {
        let err = run(&squeeze_of_dims(5)).expect_err("32 versions are refused");
        assert!(
            err.message.contains("more than 16 versions") && err.message.contains("rank"),
            "{}",
            err.message
        );
    }
}
