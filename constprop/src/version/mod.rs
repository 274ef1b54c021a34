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

mod results;
mod squeeze;

use ir::attr::Attribute;
use ir::FuncOp;
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
    for f in m.top_level_ops(FuncOp::Func) {
        changed |= results::pad_varying_results(m, f);
        for op in m.collect_ops(f) {
            if !m.is_erased(op) && !branches::in_dead_branch(m, op) {
                changed |= squeeze::expand_squeeze(m, op);
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
    let name = m
        .result(op, i)
        .map(|r| value_name(m, r))
        .filter(|n| !n.is_empty())
        .map(|n| format!(" ('{n}')"))
        .unwrap_or_default();
    ir::dialects::op_error(
        m,
        op,
        format!(
            "result {i}{name} has rank {} or {} depending on a run-time value; compiling the rest \
             of the graph once per rank would take more than {MAX_VERSIONS} versions",
            rank(0),
            rank(1)
        ),
    )
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
    let Some(y) = yield_of(m, iff, k) else {
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

/// The terminator of branch `k` of `iff`.
fn yield_of(m: &Module, iff: OpId, k: usize) -> Option<OpId> {
    m.region(iff, k)
        .and_then(|r| m.entry_block(r))
        .and_then(|b| m.last_op(b))
}

#[cfg(test)]
mod tests {
    use crate::hybrid::{ConstProp, Growth};
    use ir::pass::Pass;
    use ir::FuncOp;

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
        let f = m.top_level_ops(FuncOp::Func)[0];
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
