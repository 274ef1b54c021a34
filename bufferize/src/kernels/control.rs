//! Control flow: If → `scf.if` yielding memrefs; Loop → `scf.while` with
//! loop-carried memrefs (scan outputs stacked into buffers sized by the
//! trip count); Scan → `scf.for`. Subgraph bodies are lowered in place
//! into the new regions; buffers they allocate are yielded out, and the
//! dealloc pass owns them from there.

use super::build::{from_index, to_index};
use super::{alloc_result, load_at, result_memref_type, shape_of, store_at};
use crate::convert::{alloc, dims, lower_region_block, Lowering};
use crate::loops::{self, loop_nest, Bounds};
use ir::dialects::op_error;
use ir::{Attribute, BlockId, Builder, OpId, OpSpec, Result, Type, ValueId, DYN};

/// `v` as type `ty` (a `memref.cast` when the static shapes differ; a
/// contiguous copy first when `v` is a strided view).
fn cast_to(b: &mut Builder<'_>, v: ValueId, ty: &Type) -> ValueId {
    let v = crate::convert::contiguous(b, v);
    if b.m.value_type(v) == ty {
        v
    } else {
        b.op1("memref.cast", &[v], ty.clone(), &[])
    }
}

/// The scalar in a 0-d or one-element memref.
fn scalar_of(b: &mut Builder<'_>, v: ValueId) -> ValueId {
    let r = shape_of(b.m, v).len();
    let zero = b.const_index(0);
    let idx = vec![zero; r];
    load_at(b, v, &idx)
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

pub fn if_op(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let c = cx.input(b.m, op, 0)?;
    let cond = scalar_of(b, c);
    let types = result_types(b, op)?;
    let (then_src, else_src) = (body_block(b, op, 0)?, body_block(b, op, 1)?);
    let scf = b.create(
        "scf.if",
        OpSpec {
            operands: vec![cond],
            result_types: types.clone(),
            regions: 2,
            ..OpSpec::default()
        },
    );
    let regions = b.m.regions(scf).to_vec();
    for (r, src) in regions.into_iter().zip([then_src, else_src]) {
        let dst = b.m.append_block(r, &[]);
        let ys = lower_region_block(cx, b.m, src, dst)?;
        if ys.len() != types.len() {
            return Err(op_error(
                b.m,
                op,
                "a branch yields the wrong number of values",
            ));
        }
        let mut inner = Builder::at_end(b.m, dst);
        let ys: Vec<ValueId> = ys
            .iter()
            .zip(&types)
            .map(|(&y, t)| cast_to(&mut inner, y, t))
            .collect();
        inner.op("scf.yield", &ys, &[], &[]);
    }
    Ok(b.m.results(scf).to_vec())
}

/// Copies `src` (one slice) into row `i` of `dst` along dim 0.
fn store_row(b: &mut Builder<'_>, src: ValueId, dst: ValueId, i: ValueId) {
    let ds = dims(b, src);
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &ds, &mut |b, ivs| {
        let v = load_at(b, src, ivs);
        let mut oi = vec![i];
        oi.extend_from_slice(ivs);
        store_at(b, v, dst, &oi);
    });
}

/// A fresh copy of row `i` (dim 0) of `src`.
fn load_row(b: &mut Builder<'_>, src: ValueId, i: ValueId) -> ValueId {
    let shape = shape_of(b.m, src);
    let elem = b.m.value_type(src).element_type().clone();
    let ds = dims(b, src);
    let ty = Type::memref(shape[1..].to_vec(), elem);
    let dynamic: Vec<ValueId> = shape[1..]
        .iter()
        .zip(&ds[1..])
        .filter(|(&d, _)| d == DYN)
        .map(|(_, &v)| v)
        .collect();
    let out = alloc(b, &ty, &dynamic);
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &ds[1..], &mut |b, ivs| {
        let mut si = vec![i];
        si.extend_from_slice(ivs);
        let v = load_at(b, src, &si);
        store_at(b, v, out, ivs);
    });
    out
}

/// A buffer for a stacked output: `rows` × the static trailing dims of
/// result `i`'s type.
fn stacked(b: &mut Builder<'_>, op: OpId, i: usize, rows: ValueId) -> Result<ValueId> {
    let ty = result_memref_type(b.m, op, i)?;
    let shape = ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    if shape.is_empty() || shape[1..].contains(&DYN) {
        return Err(op_error(b.m, op, "scan outputs need static slice shapes"));
    }
    let mut sizes = vec![rows];
    for &d in &shape[1..] {
        sizes.push(b.const_index(d));
    }
    alloc_result(b, op, i, &sizes)
}

pub fn loop_op(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let types = result_types(b, op)?;
    let nargs = b.m.operands(op).len();
    let n = nargs.saturating_sub(2);
    let k = types.len().saturating_sub(n);
    let bounds = Bounds::new(b);
    let max_trip = if cx.has_input(b.m, op, 0) {
        let mv = cx.input(b.m, op, 0)?;
        let v = scalar_of(b, mv);
        to_index(b, v)
    } else {
        if k > 0 {
            return Err(op_error(b.m, op, "scan outputs need a trip count"));
        }
        b.const_index(i64::MAX)
    };
    let c0 = if cx.has_input(b.m, op, 1) {
        let cv = cx.input(b.m, op, 1)?;
        scalar_of(b, cv)
    } else {
        b.const_bool(true)
    };
    let mut inits = vec![bounds.zero, c0];
    for (i, t) in types.iter().enumerate().take(n) {
        let v = cx.input(b.m, op, 2 + i)?;
        inits.push(cast_to(b, v, t));
    }
    let scans: Vec<ValueId> = (0..k)
        .map(|j| stacked(b, op, n + j, max_trip))
        .collect::<Result<_>>()?;
    let carried: Vec<Type> = inits.iter().map(|&v| b.m.value_type(v).clone()).collect();
    let src = body_block(b, op, 0)?;
    let w = b.create(
        "scf.while",
        OpSpec {
            operands: inits,
            result_types: carried.clone(),
            regions: 2,
            ..OpSpec::default()
        },
    );
    let regions = b.m.regions(w).to_vec();
    // Before: continue while i < M and cond.
    let before = b.m.append_block(regions[0], &carried);
    let args = b.m.block_args(before).to_vec();
    let mut bb = Builder::at_end(b.m, before);
    let more = loops::cmp(&mut bb, "slt", args[0], max_trip);
    let go = loops::and(&mut bb, more, args[1]);
    let mut operands = vec![go];
    operands.extend_from_slice(&args);
    bb.op("scf.condition", &operands, &[], &[]);
    // After: the body.
    let after = b.m.append_block(regions[1], &carried);
    let args = b.m.block_args(after).to_vec();
    let body_args = b.m.block_args(src).to_vec();
    if body_args.len() != 2 + n {
        return Err(op_error(
            b.m,
            op,
            "the body takes the wrong number of inputs",
        ));
    }
    let mut ab = Builder::at_end(b.m, after);
    let it = alloc(&mut ab, &Type::memref(vec![], Type::i64()), &[]);
    let itv = from_index(&mut ab, args[0], &Type::i64());
    store_at(&mut ab, itv, it, &[]);
    let cb = alloc(&mut ab, &Type::memref(vec![], Type::i1()), &[]);
    store_at(&mut ab, args[1], cb, &[]);
    cx.bind(body_args[0], it);
    cx.bind(body_args[1], cb);
    for i in 0..n {
        cx.bind(body_args[2 + i], args[2 + i]);
    }
    let ys = lower_region_block(cx, b.m, src, after)?;
    if ys.len() != 1 + n + k {
        return Err(op_error(
            b.m,
            op,
            "the body yields the wrong number of values",
        ));
    }
    let mut ab = Builder::at_end(b.m, after);
    let cond = scalar_of(&mut ab, ys[0]);
    let one = ab.const_index(1);
    let next = loops::add(&mut ab, args[0], one);
    let mut yields = vec![next, cond];
    for i in 0..n {
        yields.push(cast_to(&mut ab, ys[1 + i], &types[i]));
    }
    for (j, &s) in scans.iter().enumerate() {
        store_row(&mut ab, ys[1 + n + j], s, args[0]);
    }
    ab.op("scf.yield", &yields, &[], &[]);
    let res = b.m.results(w).to_vec();
    let mut out: Vec<ValueId> = res[2..].to_vec();
    // Scan outputs: the first `trips` rows of each stacked buffer.
    for (j, &s) in scans.iter().enumerate() {
        let ty = &types[n + j];
        let shape = ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
        let mut sizes = dims(b, s);
        sizes[0] = res[0];
        out.push(super::shape::reinterpret(b, s, ty, &shape, &sizes));
    }
    Ok(out)
}

pub fn scan_op(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let m_in =
        b.m.attr(op, "num_scan_inputs")
            .and_then(Attribute::as_int)
            .unwrap_or(0);
    let nargs = b.m.operands(op).len();
    let m_in = usize::try_from(m_in).ok().filter(|&v| v >= 1 && v <= nargs);
    let Some(m_in) = m_in else {
        return Err(op_error(b.m, op, "invalid num_scan_inputs"));
    };
    for a in [
        "scan_input_axes",
        "scan_output_axes",
        "scan_input_directions",
        "scan_output_directions",
    ] {
        if super::attr_ints(b.m, op, a).is_some_and(|v| v.iter().any(|&x| x != 0)) {
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
    let scans: Vec<ValueId> = (0..k)
        .map(|j| stacked(b, op, n + j, trips))
        .collect::<Result<_>>()?;
    let inits: Vec<ValueId> = (0..n).map(|i| cast_to(b, inputs[i], &types[i])).collect();
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
    let f = b.scf_for(bounds.zero, trips, bounds.one, &inits, |ib, i, states| {
        let states = states.to_vec();
        for (j, &s) in states.iter().enumerate() {
            cx.bind(body_args[j], s);
        }
        for j in 0..m_in {
            let row = load_row(ib, inputs[n + j], i);
            cx.bind(body_args[n + j], row);
        }
        let blk = match ib.ip() {
            ir::InsertPoint::End(blk) => blk,
            _ => return states,
        };
        let ys = match lower_region_block(cx, ib.m, src, blk) {
            Ok(ys) if ys.len() == n + k => ys,
            Ok(_) => {
                err = Some(op_error(
                    ib.m,
                    op,
                    "the body yields the wrong number of values",
                ));
                return states;
            }
            Err(e) => {
                err = Some(e);
                return states;
            }
        };
        let mut inner = Builder::at_end(ib.m, blk);
        for (j, &s) in scans.iter().enumerate() {
            store_row(&mut inner, ys[n + j], s, i);
        }
        (0..n)
            .map(|j| cast_to(&mut inner, ys[j], &types[j]))
            .collect()
    });
    if let Some(e) = err {
        return Err(e);
    }
    let mut out = b.m.results(f).to_vec();
    out.extend(scans);
    Ok(out)
}
