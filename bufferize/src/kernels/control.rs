//! Control flow: If → `scf.if` yielding memrefs; Loop → `scf.while` with
//! loop-carried memrefs (scan outputs stacked into buffers that grow as
//! the loop runs, `scan_rows`); Scan → `scf.for` (scan outputs sized by
//! the scanned dim). Subgraph bodies are lowered in place
//! into the new regions; buffers they allocate are yielded out, and the
//! dealloc pass owns them from there.

use crate::convert::{alloc, dims, lower_region_block, Lowering};
use crate::kernels::support::index::{from_index, to_index};
use crate::kernels::support::scan_rows::Growing;
use crate::kernels::{support::alloc_result, support::result_memref_type, support::shape_of};
use crate::loops::{loop_nest, Bounds};
use ir::builder::CmpI;
use ir::dialects::op_error;
use ir::{BlockId, Builder, Diagnostic, Module, OpId, Result, Type, ValueId, DYN};
use onnx::ops;
use std::cell::RefCell;

/// `v` as type `ty` (a `memref.cast` when the static shapes differ; a
/// contiguous copy first when `v` is a strided view).
fn cast_to(b: &mut Builder<'_>, v: ValueId, ty: &Type) -> ValueId {
    let v = crate::convert::contiguous(b, v);
    if b.m.value_type(v) == ty {
        v
    } else {
        b.memref_cast(v, ty.clone())
    }
}

/// The scalar in a 0-d or one-element memref.
fn scalar_of(b: &mut Builder<'_>, v: ValueId) -> ValueId {
    let r = shape_of(b.m, v).len();
    let zero = b.const_index(0);
    let idx = vec![zero; r];
    b.load(v, &idx)
}

fn body_block(b: &Builder<'_>, op: OpId, i: usize) -> Result<BlockId> {
    b.m.region(op, i)
        .and_then(|r| b.m.entry_block(r))
        .ok_or_else(|| op_error(b.m, op, format!("missing region #{i}")))
}

fn result_types(b: &Builder<'_>, op: OpId) -> Result<Vec<Type>> {
    (0..b.m.results(op).len())
        .map(|i| result_memref_type(b.m, op, i))
        .collect()
}

/// Keeps the first error a region builder (a closure) meets.
fn keep_first(err: &mut Option<Diagnostic>, e: Diagnostic) {
    if err.is_none() {
        *err = Some(e);
    }
}

/// The diagnostic for an If result without a rank: what each branch yields
/// there (a memref has one rank).
fn rank_mismatch(b: &Builder<'_>, op: OpId) -> Option<Diagnostic> {
    let m = &*b.m;
    let i = m.results(op).iter().position(|&r| {
        m.value_type(r)
            .as_tensor()
            .is_some_and(|t| t.shape.is_none())
    })?;
    let name = result_name(m, op, i);
    let yielded = |k| rank_text(m, yielded_value(m, op, k, i), "a value of unknown rank");
    Some(op_error(
        m,
        op,
        format!(
            "output {i}{name}: the then branch yields {}, the else branch {}; a value needs one rank at compile time",
            yielded(0),
            yielded(1)
        ),
    ))
}

/// ` ('NAME')` of result `i` of `op`, or nothing when it has no name.
fn result_name(m: &Module, op: OpId, i: usize) -> String {
    m.attr(op, onnx::dialect::NAMES_ATTR)
        .and_then(ir::Attribute::as_array)
        .and_then(|a| a.get(i))
        .and_then(ir::Attribute::as_str)
        .map(|n| format!(" ('{n}')"))
        .unwrap_or_default()
}

/// Operand `i` of the terminator of `op`'s region `k`.
fn yielded_value(m: &Module, op: OpId, k: usize, i: usize) -> Option<ValueId> {
    m.region(op, k)
        .and_then(|r| m.entry_block(r))
        .and_then(|blk| m.last_op(blk))
        .and_then(|t| m.operands(t).get(i).copied())
}

/// `rank R (TYPE)` of `v`, `unknown` (with its type) without a rank.
fn rank_text(m: &Module, v: Option<ValueId>, unknown: &str) -> String {
    match v.map(|v| m.value_type(v)) {
        Some(t) => match t.shape() {
            Some(s) => format!("rank {} ({t})", s.len()),
            None => format!("{unknown} ({t})"),
        },
        None => "no value".to_string(),
    }
}

pub fn if_op(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    if let Some(e) = rank_mismatch(b, op) {
        return Err(e);
    }
    let c = cx.input(b.m, op, ops::If::COND)?;
    let cond = scalar_of(b, c);
    let types = result_types(b, op)?;
    let (then_src, else_src) = (body_block(b, op, 0)?, body_block(b, op, 1)?);
    // Both branches lower into the same conversion state; a branch that
    // cannot be lowered is kept with its error.
    let state = RefCell::new((cx, None::<Diagnostic>, Vec::new()));
    let branch = |ib: &mut Builder<'_>, src: BlockId| -> Vec<ValueId> {
        let k = usize::from(src == else_src);
        if let Some(e) = onnx::branches::branch_error(ib.m, op, k).map(str::to_string) {
            return failing_branch(ib, op, k, &e, &types);
        }
        let mut st = state.borrow_mut();
        let (cx, err, failed) = &mut *st;
        let Some(dst) = ib.block() else {
            return Vec::new();
        };
        match lower_region_block(cx, ib.m, src, dst) {
            Ok(ys) if ys.len() == types.len() => ys
                .iter()
                .zip(&types)
                .map(|(&y, t)| cast_to(ib, y, t))
                .collect(),
            Ok(_) => {
                let e = op_error(ib.m, op, "a branch yields the wrong number of values");
                keep_first(err, e);
                Vec::new()
            }
            Err(e) => {
                // As a branch that fails inference: it aborts if taken.
                clear_block(ib.m, dst);
                let text = onnx::branches::error_text(&e);
                failed.push((k, e));
                failing_branch(ib, op, k, &text, &types)
            }
        }
    };
    let scf = b.scf_if(
        cond,
        &types,
        &mut |ib| branch(ib, then_src),
        Some(&mut |ib| branch(ib, else_src)),
    );
    let (_, err, mut failed) = state.into_inner();
    if let Some(e) = err {
        return Err(e);
    }
    let live = (0..2)
        .filter(|&k| onnx::branches::branch_error(b.m, op, k).is_none())
        .count();
    match failed.as_slice() {
        [] => {}
        [(k, e)] if live == 2 => tracing::warn!(
            "{}: the {} branch of 'onnx.If' cannot be compiled and aborts if taken: {}",
            b.m.loc(op),
            onnx::branches::branch_name(*k),
            onnx::branches::error_text(e)
        ),
        _ => return Err(failed.swap_remove(0).1),
    }
    Ok(b.m.results(scf).to_vec())
}

/// Erases the ops of `block` (a branch lowered only in part).
fn clear_block(m: &mut ir::Module, block: BlockId) {
    let ops: Vec<OpId> = m.block_ops(block).collect();
    for o in ops.into_iter().rev() {
        m.erase_op(o);
    }
}

/// A branch that fails shape inference (`onnx::branches`): it aborts with
/// the error when taken. It yields empty buffers cast to the result
/// types, which nothing reads.
fn failing_branch(
    b: &mut Builder<'_>,
    op: OpId,
    k: usize,
    err: &str,
    types: &[Type],
) -> Vec<ValueId> {
    let fals = b.const_bool(false);
    let what = format!("the {} branch fails: {err}", onnx::branches::branch_name(k));
    crate::kernels::support::checks::assert(b, op, fals, &what);
    let zero = b.const_index(0);
    types
        .iter()
        .map(|t| {
            let rank = t.shape().map_or(0, <[i64]>::len);
            let empty = Type::memref(vec![DYN; rank], t.element_type().clone());
            let v = alloc(b, &empty, &vec![zero; rank]);
            cast_to(b, v, t)
        })
        .collect()
}

/// Copies `src` (one slice) into row `i` of `dst` along dim 0.
fn store_row(b: &mut Builder<'_>, src: ValueId, dst: ValueId, i: ValueId) {
    let ds = dims(b, src);
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &ds, &mut |b, ivs| {
        let v = b.load(src, ivs);
        let mut oi = vec![i];
        oi.extend_from_slice(ivs);
        b.store(v, dst, &oi);
    });
}

/// A fresh copy of row `i` (dim 0) of `src`.
fn load_row(b: &mut Builder<'_>, src: ValueId, i: ValueId) -> ValueId {
    let shape = shape_of(b.m, src);
    let elem = b.m.value_type(src).element_type().clone();
    let ds = dims(b, src);
    let ty = Type::memref(shape[1..].to_vec(), elem);
    let out = crate::convert::alloc_dims(b, &ty, &ds[1..]);
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &ds[1..], &mut |b, ivs| {
        let mut si = vec![i];
        si.extend_from_slice(ivs);
        let v = b.load(src, &si);
        b.store(v, out, ivs);
    });
    out
}

/// The stack of a scan output: a buffer of `rows` × the slice shape,
/// allocated before the loop when result `i`'s type fixes the slice shape
/// (`Fixed`), else in the first iteration from the slice's own dims and
/// carried through the loop (`Lazy`: an empty placeholder until then).
#[derive(Clone, Copy)]
enum Stack {
    Fixed(ValueId),
    Lazy,
}

fn stacked(b: &mut Builder<'_>, op: OpId, i: usize, rows: ValueId) -> Result<Stack> {
    let ty = result_memref_type(b.m, op, i)?;
    let shape = ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    if shape.is_empty() {
        return Err(op_error(b.m, op, "a scan output must have a rank"));
    }
    if shape[1..].contains(&DYN) {
        return Ok(Stack::Lazy);
    }
    let mut sizes = vec![rows];
    for &d in &shape[1..] {
        sizes.push(b.const_index(d));
    }
    Ok(Stack::Fixed(alloc_result(b, op, i, &sizes)?))
}

/// The initial carried values of the lazy stacks: empty buffers.
fn placeholders(b: &mut Builder<'_>, stacks: &[Stack], types: &[Type]) -> Vec<ValueId> {
    let zero = b.const_index(0);
    stacks
        .iter()
        .zip(types)
        .filter(|(s, _)| matches!(s, Stack::Lazy))
        .map(|(_, ty)| {
            let n = ty
                .shape()
                .map_or(0, |s| s.iter().filter(|&&d| d == DYN).count());
            alloc(b, ty, &vec![zero; n])
        })
        .collect()
}

/// Stores slice `y` as row `i` of its stack; a lazy stack (`carried`) is
/// allocated at row 0 from `y`'s dims, which every later row must have.
/// Returns the lazy stack to carry on.
#[allow(clippy::too_many_arguments)]
fn push_row(
    b: &mut Builder<'_>,
    op: OpId,
    (stack, carried): (Stack, Option<ValueId>),
    ty: &Type,
    y: ValueId,
    i: ValueId,
    rows: ValueId,
    out: usize,
) -> Result<Option<ValueId>> {
    let buf = match (stack, carried) {
        (Stack::Fixed(s), _) => {
            store_row(b, y, s, i);
            return Ok(None);
        }
        (Stack::Lazy, Some(c)) => c,
        (Stack::Lazy, None) => return Err(op_error(b.m, op, "a scan output lost its stack")),
    };
    let dy = dims(b, y);
    let mut sizes = vec![rows];
    sizes.extend_from_slice(&dy);
    let zero = b.const_index(0);
    let first = b.cmpi(CmpI::Eq, i, zero);
    let pick = b.scf_if(
        first,
        std::slice::from_ref(ty),
        &mut |tb| vec![crate::convert::alloc_dims(tb, ty, &sizes)],
        Some(&mut |_| vec![buf]),
    );
    let buf = b.m.results(pick)[0];
    let ds = dims(b, buf);
    for (k, (&have, &want)) in ds[1..].iter().zip(&dy).enumerate() {
        let msg = format!("result {out}: slice dim {k} changes between iterations");
        crate::kernels::support::checks::equal(b, op, want, have, &msg)?;
    }
    store_row(b, y, buf, i);
    Ok(Some(buf))
}

/// Stores the rows of one iteration's scan outputs `ys` at row `i`;
/// returns the lazy stacks to carry on, in order.
#[allow(clippy::too_many_arguments)]
fn push_rows(
    b: &mut Builder<'_>,
    op: OpId,
    stacks: &[Stack],
    carried: &[ValueId],
    (types, ys): (&[Type], &[ValueId]),
    i: ValueId,
    rows: ValueId,
    first_out: usize,
) -> Result<Vec<ValueId>> {
    let mut lazy = carried.iter();
    let mut next = Vec::with_capacity(carried.len());
    for (j, &st) in stacks.iter().enumerate() {
        let c = match st {
            Stack::Lazy => lazy.next().copied(),
            Stack::Fixed(_) => None,
        };
        if let Some(buf) = push_row(b, op, (st, c), &types[j], ys[j], i, rows, first_out + j)? {
            next.push(buf);
        }
    }
    Ok(next)
}

/// The final stacks in order: fixed ones and the carried lazy ones.
fn final_stacks(stacks: &[Stack], lazy: &[ValueId]) -> Vec<ValueId> {
    let mut l = lazy.iter();
    stacks
        .iter()
        .filter_map(|s| match s {
            Stack::Fixed(v) => Some(*v),
            Stack::Lazy => l.next().copied(),
        })
        .collect()
}

/// The diagnostic for a Loop-carried value without a rank: the rank it
/// enters the body with and the rank the body gives back (its rank would
/// follow the trip count; a memref has one).
fn carried_rank_change(b: &Builder<'_>, op: OpId, n: usize) -> Option<Diagnostic> {
    let m = &*b.m;
    let k = (0..n).find(|&k| {
        m.result(op, k)
            .is_some_and(|r| m.value_type(r).shape().is_none())
    })?;
    let rank_of = |v: Option<ValueId>| v.and_then(|v| m.value_type(v).shape().map(<[i64]>::len));
    let rank = |v| rank_text(m, v, "unknown rank");
    let name = result_name(m, op, k);
    let (entering, leaving) = (m.operand(op, 2 + k), yielded_value(m, op, 0, 1 + k));
    let why = match (rank_of(entering), rank_of(leaving)) {
        (Some(a), Some(b)) if a != b => "its rank would follow the trip count, and ",
        _ => "",
    };
    Some(op_error(
        m,
        op,
        format!(
            "carried value {k}{name} enters the body with {} and leaves it with {}: {why}a value needs one rank at compile time",
            rank(entering),
            rank(leaving)
        ),
    ))
}

pub fn loop_op(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let nargs = b.m.operands(op).len();
    let n = nargs.saturating_sub(2);
    if let Some(e) = carried_rank_change(b, op, n) {
        return Err(e);
    }
    let types = result_types(b, op)?;
    let bounds = Bounds::new(b);
    // Without M the loop runs until its condition stops it.
    let max_trip = if cx.has_input(b.m, op, ops::Loop::M_OPERAND) {
        let mv = cx.input(b.m, op, ops::Loop::M_OPERAND)?;
        let v = scalar_of(b, mv);
        to_index(b, v)
    } else {
        b.const_index(i64::MAX)
    };
    let c0 = if cx.has_input(b.m, op, ops::Loop::COND) {
        let cv = cx.input(b.m, op, ops::Loop::COND)?;
        scalar_of(b, cv)
    } else {
        b.const_bool(true)
    };
    let mut inits = vec![bounds.zero, c0];
    for (i, t) in types.iter().enumerate().take(n) {
        let v = cx.input(b.m, op, 2 + i)?;
        inits.push(cast_to(b, v, t));
    }
    let scans: Vec<Growing> = types[n..]
        .iter()
        .map(|ty| match ty.shape() {
            Some(s) if !s.is_empty() => Ok(Growing { ty: ty.clone() }),
            _ => Err(op_error(b.m, op, "a scan output must have a rank")),
        })
        .collect::<Result<_>>()?;
    for g in &scans {
        inits.extend(g.initial(b));
    }
    let src = body_block(b, op, 0)?;
    if b.m.block_args(src).len() != 2 + n {
        return Err(op_error(
            b.m,
            op,
            "the body takes the wrong number of inputs",
        ));
    }
    let mut err = None;
    let w = b.scf_while(
        &inits,
        // Continue while i < M and cond.
        &mut |bb, args| {
            let more = bb.cmpi(CmpI::Slt, args[0], max_trip);
            let go = bb.andi(more, args[1]);
            (go, args.to_vec())
        },
        &mut |ab, args| match loop_body(cx, ab, (op, src), args, (&types, &scans)) {
            Ok(ys) => ys,
            Err(e) => {
                err = Some(e);
                args.to_vec()
            }
        },
    );
    if let Some(e) = err {
        return Err(e);
    }
    let res = b.m.results(w).to_vec();
    let mut out: Vec<ValueId> = res[2..2 + n].to_vec();
    // Scan outputs: the first `trips` rows of each buffer.
    let mut at = 2 + n;
    for g in &scans {
        let len = g.carried_len();
        out.push(g.finish(b, &res[at..at + len], res[0]));
        at += len;
    }
    Ok(out)
}

/// One Loop iteration in the `after` region of the `scf.while`: the body
/// `src` of `op` on the carried `args` (iteration, condition, states, the
/// scan outputs' buffers); returns the next carried values after storing
/// the scan rows.
fn loop_body(
    cx: &mut Lowering,
    ab: &mut Builder<'_>,
    (op, src): (OpId, BlockId),
    args: &[ValueId],
    (types, scans): (&[Type], &[Growing]),
) -> Result<Vec<ValueId>> {
    let k = scans.len();
    let n = types.len().saturating_sub(k);
    let body_args = ab.m.block_args(src).to_vec();
    let after = ab
        .block()
        .ok_or_else(|| op_error(ab.m, op, "no block for the body"))?;
    let it = alloc(ab, &Type::memref(vec![], Type::i64()), &[]);
    let itv = from_index(ab, args[0], &Type::i64());
    ab.store(itv, it, &[]);
    let cb = alloc(ab, &Type::memref(vec![], Type::i1()), &[]);
    ab.store(args[1], cb, &[]);
    cx.bind(body_args[0], it);
    cx.bind(body_args[1], cb);
    for i in 0..n {
        cx.bind(body_args[2 + i], args[2 + i]);
    }
    let ys = lower_region_block(cx, ab.m, src, after)?;
    if ys.len() != 1 + n + k {
        return Err(op_error(
            ab.m,
            op,
            "the body yields the wrong number of values",
        ));
    }
    let cond = scalar_of(ab, ys[0]);
    let one = ab.const_index(1);
    let next = ab.addi(args[0], one);
    let mut yields = vec![next, cond];
    for i in 0..n {
        yields.push(cast_to(ab, ys[1 + i], &types[i]));
    }
    let mut at = 2 + n;
    for (j, g) in scans.iter().enumerate() {
        let len = g.carried_len();
        let y = crate::convert::contiguous(ab, ys[1 + n + j]);
        yields.extend(g.push(ab, op, &args[at..at + len], (y, args[0]), n + j)?);
        at += len;
    }
    Ok(yields)
}

pub fn scan_op(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let view = ops::Scan::of(b.m, op);
    let m_in = view.num_scan_inputs();
    let nargs = b.m.operands(op).len();
    let m_in = usize::try_from(m_in).ok().filter(|&v| v >= 1 && v <= nargs);
    let Some(m_in) = m_in else {
        return Err(op_error(b.m, op, "invalid num_scan_inputs"));
    };
    for (a, vals) in [
        ("scan_input_axes", view.scan_input_axes()),
        ("scan_output_axes", view.scan_output_axes()),
        ("scan_input_directions", view.scan_input_directions()),
        ("scan_output_directions", view.scan_output_directions()),
    ] {
        if vals.is_some_and(|v| v.iter().any(|&x| x != 0)) {
            return Err(op_error(
                b.m,
                op,
                format!("Scan with non-zero '{a}' is not supported"),
            ));
        }
    }
    let n = nargs - m_in;
    let types = result_types(b, op)?;
    let k = types.len().saturating_sub(n);
    let inputs: Vec<ValueId> = (0..nargs)
        .map(|i| cx.input(b.m, op, i))
        .collect::<Result<_>>()?;
    let trips = dims(b, inputs[n])[0];
    let scans: Vec<Stack> = (0..k)
        .map(|j| stacked(b, op, n + j, trips))
        .collect::<Result<_>>()?;
    let mut inits: Vec<ValueId> = (0..n).map(|i| cast_to(b, inputs[i], &types[i])).collect();
    inits.extend(placeholders(b, &scans, &types[n..]));
    let src = body_block(b, op, 0)?;
    let body_args = b.m.block_args(src).to_vec();
    if body_args.len() != nargs {
        return Err(op_error(
            b.m,
            op,
            "the body takes the wrong number of inputs",
        ));
    }
    let bounds = Bounds::new(b);
    let mut err = None;
    let f = b.scf_for(bounds.zero, trips, bounds.one, &inits, |ib, i, carried| {
        let carried = carried.to_vec();
        let (states, lazy) = carried.split_at(n);
        for (j, &s) in states.iter().enumerate() {
            cx.bind(body_args[j], s);
        }
        for j in 0..m_in {
            let row = load_row(ib, inputs[n + j], i);
            cx.bind(body_args[n + j], row);
        }
        let Some(blk) = ib.block() else {
            return carried;
        };
        let ys = match lower_region_block(cx, ib.m, src, blk) {
            Ok(ys) if ys.len() == n + k => ys,
            Ok(_) => {
                err = Some(op_error(
                    ib.m,
                    op,
                    "the body yields the wrong number of values",
                ));
                return carried;
            }
            Err(e) => {
                err = Some(e);
                return carried;
            }
        };
        let mut next: Vec<ValueId> = (0..n).map(|j| cast_to(ib, ys[j], &types[j])).collect();
        let scan_io = (&types[n..], &ys[n..]);
        match push_rows(ib, op, &scans, lazy, scan_io, i, trips, n) {
            Ok(l) => next.extend(l),
            Err(e) => {
                err = Some(e);
                return carried;
            }
        }
        next
    });
    if let Some(e) = err {
        return Err(e);
    }
    let res = b.m.results(f).to_vec();
    let mut out = res[..n].to_vec();
    out.extend(final_stacks(&scans, &res[n..]));
    Ok(out)
}
