//! Slice: a `memref.subview` view of its input when every step is known
//! positive (no copy), else a copy nest (negative or runtime steps).
//!
//! A view is not a contiguous row-major buffer: consumers that reinterpret
//! memory, cross a region boundary or return it take
//! `convert::contiguous` (a copy) instead.

use crate::convert::{dims, Lowering};
use crate::kernels::support::index::index_at;
use crate::kernels::support::index::wrap;
use crate::kernels::{
    support::alloc_result, support::constant_ints, support::result_memref_type, support::shape_of,
};
use crate::loops::{loop_nest, Bounds};
use ir::builder::{CmpI, ViewLayout};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId, DYN};
use onnx::ops;

/// An offset or size known at compile time, or computed at runtime.
#[derive(Clone, Copy)]
pub enum Ix {
    C(i64),
    V(ValueId),
}

impl Ix {
    fn value(self, b: &mut Builder<'_>) -> ValueId {
        match self {
            Ix::C(c) => b.const_index(c),
            Ix::V(v) => v,
        }
    }
    fn stat(self) -> i64 {
        match self {
            Ix::C(c) => c,
            Ix::V(_) => DYN,
        }
    }
    fn dynamic(self) -> Option<ValueId> {
        match self {
            Ix::C(_) => None,
            Ix::V(v) => Some(v),
        }
    }
}

pub fn slice(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, ops::Slice::DATA)?;
    let sx = shape_of(b.m, x);
    let out_shape = result_memref_type(b.m, op, 0)?
        .shape()
        .map(<[i64]>::to_vec)
        .unwrap_or_default();
    if out_shape.len() != sx.len() {
        return Err(op_error(b.m, op, "result rank differs from the input rank"));
    }
    if let Some(dims) = static_params(b, op, &sx)? {
        let dx = dims_or_static(b, x, &sx);
        let offs: Vec<Ix> = dims.iter().map(|d| Ix::C(d.0)).collect();
        let sizes: Vec<Ix> = dims
            .iter()
            .zip(&dx)
            .map(|(d, &v)| if d.1 == DYN { v } else { Ix::C(d.1) })
            .collect();
        let steps: Vec<i64> = dims.iter().map(|d| d.2).collect();
        return Ok(vec![subview(b, x, &offs, &sizes, &steps, &out_shape)]);
    }
    let p = runtime_params(cx, b, op, &sx)?;
    if let Some(steps) = p.positive_steps {
        let sizes: Vec<Ix> = p.sizes.iter().map(|&v| Ix::V(v)).collect();
        return Ok(vec![subview(b, x, &p.first, &sizes, &steps, &out_shape)]);
    }
    let out = alloc_result(b, op, 0, &p.sizes)?;
    let first: Vec<ValueId> = p.first.iter().map(|f| f.value(b)).collect();
    let bounds = Bounds::new(b);
    loop_nest(b, &bounds, &p.sizes, &mut |b, ivs| {
        let idx: Vec<ValueId> = (0..sx.len())
            .map(|d| {
                let k = b.muli(ivs[d], p.steps[d]);
                b.addi(first[d], k)
            })
            .collect();
        let v = b.load(x, &idx);
        b.store(v, out, ivs);
    });
    Ok(vec![out])
}

/// Sizes of `x`: static dims as constants, dynamic ones as `memref.dim`.
fn dims_or_static(b: &mut Builder<'_>, x: ValueId, sx: &[i64]) -> Vec<Ix> {
    (0..sx.len())
        .map(|i| match sx[i] {
            DYN => Ix::V(b.dim(x, i)),
            s => Ix::C(s),
        })
        .collect()
}

/// Per dim (first index, count, step) when starts, ends, axes and steps
/// are constants, every step is positive and every sliced dim is static;
/// untouched dims keep their (possibly dynamic) size.
fn static_params(b: &Builder<'_>, op: OpId, sx: &[i64]) -> Result<Option<Vec<(i64, i64, i64)>>> {
    let m = &*b.m;
    let (Some(starts), Some(ends)) = (
        constant_ints(m, op, ops::Slice::STARTS),
        constant_ints(m, op, ops::Slice::ENDS),
    ) else {
        return Ok(None);
    };
    let optional = |i: usize| -> Option<Option<Vec<i64>>> {
        let present = m
            .operand(op, i)
            .is_some_and(|v| *m.value_type(v) != Type::None);
        if present {
            constant_ints(m, op, i).map(Some)
        } else {
            Some(None)
        }
    };
    let (Some(axes), Some(steps)) = (optional(ops::Slice::AXES), optional(ops::Slice::STEPS))
    else {
        return Ok(None);
    };
    let n = starts.len();
    let axes = axes.unwrap_or_else(|| (0..n as i64).collect());
    let steps = steps.unwrap_or_else(|| vec![1; n]);
    if ends.len() != n || axes.len() != n || steps.len() != n {
        return Err(op_error(
            m,
            op,
            "starts, ends, axes and steps differ in length",
        ));
    }
    let mut out: Vec<(i64, i64, i64)> = sx.iter().map(|&d| (0, d, 1)).collect();
    for j in 0..n {
        let d = crate::kernels::support::axis(m, op, axes[j], sx.len())?;
        let (dim, step) = (sx[d], steps[j]);
        if step == 0 {
            return Err(op_error(m, op, "Slice step must not be 0"));
        }
        if dim == DYN || step < 0 {
            return Ok(None);
        }
        // ONNX: negative indices count from the end, then clamp to [0, dim].
        let wrap = |i: i64| if i < 0 { i.saturating_add(dim) } else { i };
        let s = wrap(starts[j]).max(0).min(dim);
        let e = wrap(ends[j]).max(0).min(dim);
        let count = e.saturating_sub(s).saturating_add(step - 1) / step;
        out[d] = (s, count.max(0), step);
    }
    Ok(Some(out))
}

/// Slice parameters computed at runtime.
struct Params {
    /// First index per dim (0 for dims no axis names).
    first: Vec<Ix>,
    sizes: Vec<ValueId>,
    steps: Vec<ValueId>,
    /// Every dim's step when all are known positive at compile time.
    positive_steps: Option<Vec<i64>>,
}

fn runtime_params(cx: &Lowering, b: &mut Builder<'_>, op: OpId, sx: &[i64]) -> Result<Params> {
    let x = cx.input(b.m, op, ops::Slice::DATA)?;
    let rank = sx.len();
    let dx = dims(b, x);
    let starts = cx.input(b.m, op, ops::Slice::STARTS)?;
    let ends = cx.input(b.m, op, ops::Slice::ENDS)?;
    let axes = cx.optional_input(b.m, op, ops::Slice::AXES)?;
    let steps = cx.optional_input(b.m, op, ops::Slice::STEPS)?;
    // The entry count: starts', else the constant axes' (checked below).
    let n = match (
        shape_of(b.m, starts).as_slice(),
        constant_ints(b.m, op, ops::Slice::AXES),
    ) {
        ([n], _) if *n != DYN => *n,
        (_, Some(a)) if axes.is_some() => a.len() as i64,
        ([_], _) => return runtime_count_params(b, op, x, [starts, ends], (axes, steps)),
        _ => return Err(op_error(b.m, op, "starts must be 1-D")),
    };
    entry_counts(b, op, [Some(starts), Some(ends), axes, steps], Some(n))?;
    let const_steps = match steps {
        Some(_) => constant_ints(b.m, op, ops::Slice::STEPS),
        None => Some(vec![1; n as usize]),
    };
    let bounds = Bounds::new(b);
    let (zero, one) = (bounds.zero, bounds.one);
    let rank_v = b.const_index(rank as i64);
    // Defaults: the whole dim with step 1.
    let mut st: Vec<ValueId> = vec![zero; rank];
    let mut en: Vec<ValueId> = dx.clone();
    let mut sp: Vec<ValueId> = vec![one; rank];
    let mut static_sp: Option<Vec<i64>> = Some(vec![1; rank]);
    let mut touched: Vec<Option<ValueId>> = vec![None; rank];
    let const_axes = if axes.is_some() {
        constant_ints(b.m, op, ops::Slice::AXES)
    } else {
        Some((0..n).collect())
    };
    for j in 0..n {
        let s = index_at(b, starts, Some(j));
        let e = index_at(b, ends, Some(j));
        let p = match steps {
            Some(v) => index_at(b, v, Some(j)),
            None => one,
        };
        let cp = const_steps
            .as_ref()
            .and_then(|c| c.get(j as usize).copied())
            .filter(|&c| c > 0);
        match &const_axes {
            Some(ax) => {
                let a = ax.get(j as usize).copied().unwrap_or(j);
                let d = crate::kernels::support::axis(b.m, op, a, rank)?;
                st[d] = s;
                en[d] = e;
                sp[d] = p;
                touched[d] = Some(b.const_bool(true));
                match (static_sp.as_mut(), cp) {
                    (Some(v), Some(c)) => v[d] = c,
                    _ => static_sp = None,
                }
            }
            None => {
                let Some(av) = axes else { continue };
                // Which dim a step lands on is known only at runtime.
                if cp != Some(1) {
                    static_sp = None;
                }
                let a = index_at(b, av, Some(j));
                let a = wrap(b, a, rank_v, zero);
                for d in 0..rank {
                    let dv = b.const_index(d as i64);
                    let hit = b.cmpi(CmpI::Eq, a, dv);
                    st[d] = b.select(hit, s, st[d]);
                    en[d] = b.select(hit, e, en[d]);
                    sp[d] = b.select(hit, p, sp[d]);
                    let t = touched[d].unwrap_or_else(|| b.const_bool(false));
                    touched[d] = Some(b.ori(t, hit));
                }
            }
        }
    }
    let (first, sizes) = extents(b, &dx, [&st, &en, &sp], &touched);
    Ok(Params {
        first,
        sizes,
        steps: sp,
        positive_steps: static_sp,
    })
}

/// Asserts that starts, ends, axes and steps (the ones given) have `n`
/// entries, or, without `n`, as many as starts; returns the count.
fn entry_counts(
    b: &mut Builder<'_>,
    op: OpId,
    ops: [Option<ValueId>; 4],
    n: Option<i64>,
) -> Result<ValueId> {
    let names = ["starts", "ends", "axes", "steps"];
    let mut count = n.map(|n| b.const_index(n));
    for (v, name) in ops.iter().zip(names) {
        let Some(v) = *v else { continue };
        let Some(&len) = dims(b, v).first() else {
            return Err(op_error(b.m, op, format!("{name} must be 1-D")));
        };
        match count {
            None => count = Some(len),
            Some(c) => {
                let msg = format!("{name} has another length than starts");
                crate::kernels::support::checks::equal(b, op, len, c, &msg)?;
            }
        }
    }
    count.ok_or_else(|| op_error(b.m, op, "Slice needs starts"))
}

/// Runtime parameters when the entry count is known only at run time: a
/// loop over the entries picks, per dim, the start, end and step of the
/// entry whose axis names it.
fn runtime_count_params(
    b: &mut Builder<'_>,
    op: OpId,
    x: ValueId,
    [starts, ends]: [ValueId; 2],
    (axes, steps): (Option<ValueId>, Option<ValueId>),
) -> Result<Params> {
    let dx = dims(b, x);
    let rank = dx.len();
    let n = entry_counts(b, op, [Some(starts), Some(ends), axes, steps], None)?;
    let bounds = Bounds::new(b);
    let (zero, one) = (bounds.zero, bounds.one);
    let rank_v = b.const_index(rank as i64);
    let mut init = vec![zero; rank];
    init.extend_from_slice(&dx);
    init.extend(std::iter::repeat_n(one, rank));
    let f = b.scf_for(zero, n, one, &init, |b, j, acc| {
        let at = |b: &mut Builder<'_>, v: ValueId| {
            let e = b.load(v, &[j]);
            crate::kernels::support::index::to_index(b, e)
        };
        let (s, e) = (at(b, starts), at(b, ends));
        let p = steps.map_or(one, |v| at(b, v));
        let a = match axes {
            Some(av) => {
                let a = at(b, av);
                wrap(b, a, rank_v, zero)
            }
            None => j,
        };
        let mut next = acc.to_vec();
        for d in 0..rank {
            let dv = b.const_index(d as i64);
            let hit = b.cmpi(CmpI::Eq, a, dv);
            for (k, v) in [s, e, p].into_iter().enumerate() {
                next[k * rank + d] = b.select(hit, v, acc[k * rank + d]);
            }
        }
        next
    });
    let r = b.m.results(f).to_vec();
    let (st, en, sp) = (&r[..rank], &r[rank..2 * rank], r[2 * rank..].to_vec());
    let touched = vec![Some(one); rank];
    let (first, sizes) = extents(b, &dx, [st, en, &sp], &touched);
    Ok(Params {
        first,
        sizes,
        steps: sp,
        positive_steps: steps.is_none().then(|| vec![1; rank]),
    })
}

/// First index and count per dim from the (unclamped) starts, ends and
/// steps; dims no entry touches keep their size.
fn extents(
    b: &mut Builder<'_>,
    dx: &[ValueId],
    [st, en, sp]: [&[ValueId]; 3],
    touched: &[Option<ValueId>],
) -> (Vec<Ix>, Vec<ValueId>) {
    let rank = dx.len();
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let mut sizes = Vec::with_capacity(rank);
    let mut first = Vec::with_capacity(rank);
    for d in 0..rank {
        if touched[d].is_none() {
            sizes.push(dx[d]);
            first.push(Ix::C(0));
            continue;
        }
        let dim = dx[d];
        let s = wrap(b, st[d], dim, zero);
        let e = wrap(b, en[d], dim, zero);
        let pos = b.cmpi(CmpI::Sgt, sp[d], zero);
        let m1 = b.const_index(-1);
        let dm1 = b.subi(dim, one);
        // step > 0: clamp to [0, dim]; step < 0: start to [0, dim-1], end to [-1, dim-1].
        let s_hi = b.select(pos, dim, dm1);
        let e_lo = b.select(pos, zero, m1);
        let e_hi = b.select(pos, dim, dm1);
        let s = b.maxsi(s, zero);
        let s = b.minsi(s, s_hi);
        let e = b.maxsi(e, e_lo);
        let e = b.minsi(e, e_hi);
        let span = b.subi(e, s);
        let cnt = b.ceildivsi(span, sp[d]);
        let cnt = b.maxsi(cnt, zero);
        sizes.push(cnt);
        first.push(Ix::V(s));
    }
    (first, sizes)
}

/// `memref.subview` of `x` (same rank) with positive static `steps`; the
/// result layout is the one MLIR infers: strides scaled by the steps, the
/// offset moved by `offsets · strides`. Sizes the result type `shape`
/// fixes are used statically.
pub fn subview(
    b: &mut Builder<'_>,
    x: ValueId,
    offsets: &[Ix],
    sizes: &[Ix],
    steps: &[i64],
    shape: &[i64],
) -> ValueId {
    let (elem, (src_strides, src_off)) = match b.m.value_type(x).as_memref() {
        Some(t) => (t.elem.clone(), t.strides_and_offset()),
        None => (Type::None, (Vec::new(), DYN)),
    };
    let sizes: Vec<Ix> = sizes
        .iter()
        .zip(shape)
        .map(|(&s, &d)| if d == DYN { s } else { Ix::C(d) })
        .collect();
    let strides: Vec<i64> = src_strides
        .iter()
        .zip(steps)
        .map(|(&s, &p)| if s == DYN { DYN } else { s.saturating_mul(p) })
        .collect();
    // As MLIR: a static 0 offset adds 0 even over a dynamic stride.
    let mut offset = src_off;
    for (o, &s) in offsets.iter().zip(&src_strides) {
        offset = match (o.stat(), s) {
            (0, _) => offset,
            (DYN, _) | (_, DYN) => DYN,
            (o, s) if offset != DYN => offset.saturating_add(o.saturating_mul(s)),
            _ => DYN,
        };
    }
    let out_shape: Vec<i64> = sizes.iter().map(|s| s.stat()).collect();
    let ty = Type::memref_strided(out_shape.clone(), elem, offset, strides);
    let mut dynamic: Vec<ValueId> = offsets.iter().filter_map(|o| o.dynamic()).collect();
    let n_offs = dynamic.len();
    dynamic.extend(sizes.iter().filter_map(|o| o.dynamic()));
    let static_offs: Vec<i64> = offsets.iter().map(|o| o.stat()).collect();
    let layout = ViewLayout {
        offsets: &static_offs,
        sizes: &out_shape,
        strides: steps,
    };
    b.subview(x, layout, n_offs, &dynamic, ty)
}
