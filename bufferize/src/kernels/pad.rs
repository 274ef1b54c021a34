//! Pad in every mode (constant, reflect, edge, wrap), pads and constant
//! from operands (runtime values allowed) or the legacy attributes,
//! optional axes (constant or runtime). Negative pads crop.

use super::build::index_at;
use super::reduce::normalize_axis;
use super::scalar::{self, constant};
use super::{
    alloc_result, attr_float, attr_ints, attr_str, constant_ints, elem_of, load_at, shape_of,
    store_at,
};
use crate::convert::{dims, Lowering};
use crate::loops::{self, loop_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};

pub fn pad(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let x = cx.input(b.m, op, 0)?;
    let rank = shape_of(b.m, x).len();
    let dx = dims(b, x);
    let mode = attr_str(b.m, op, "mode").unwrap_or("constant").to_string();
    let elem = elem_of(b.m, x);
    let bounds = Bounds::new(b);
    // Axes: constant, read at runtime (each listed dim picked by compares),
    // or all dims.
    let runtime_axes = match cx.optional_input(b.m, op, 3)? {
        Some(a) if constant_ints(b.m, op, 3).is_none() => Some(a),
        _ => None,
    };
    let axes: Vec<usize> = match constant_ints(b.m, op, 3) {
        Some(a) if cx.has_input(b.m, op, 3) => a
            .iter()
            .map(|&v| normalize_axis(b, op, v, rank))
            .collect::<Result<_>>()?,
        _ => (0..rank).collect(),
    };
    let mut begin = vec![bounds.zero; rank];
    let mut end = vec![bounds.zero; rank];
    if cx.has_input(b.m, op, 1) {
        let p = cx.input(b.m, op, 1)?;
        match runtime_axes {
            Some(av) => {
                let n = shape_of(b.m, av).first().copied().unwrap_or(-1);
                if n < 0 {
                    return Err(op_error(b.m, op, "Pad needs axes of static length"));
                }
                let r = b.const_index(rank as i64);
                for j in 0..n {
                    let a = index_at(b, av, Some(j));
                    let a = super::gather::wrap(b, a, r, bounds.zero);
                    let pb = index_at(b, p, Some(j));
                    let pe = index_at(b, p, Some(j + n));
                    for d in 0..rank {
                        let dv = b.const_index(d as i64);
                        let hit = loops::cmp(b, "eq", a, dv);
                        begin[d] = loops::select(b, hit, pb, begin[d]);
                        end[d] = loops::select(b, hit, pe, end[d]);
                    }
                }
            }
            None => {
                let n = axes.len();
                for (j, &d) in axes.iter().enumerate() {
                    begin[d] = index_at(b, p, Some(j as i64));
                    end[d] = index_at(b, p, Some((j + n) as i64));
                }
            }
        }
    } else if let Some(p) = attr_ints(b.m, op, "pads") {
        if p.len() != 2 * rank {
            return Err(op_error(b.m, op, "pads must have 2 * rank entries"));
        }
        for d in 0..rank {
            begin[d] = b.const_index(p[d]);
            end[d] = b.const_index(p[d + rank]);
        }
    }
    let cval = if cx.has_input(b.m, op, 2) {
        let c = cx.input(b.m, op, 2)?;
        let r = shape_of(b.m, c).len();
        let idx: Vec<ValueId> = (0..r).map(|_| bounds.zero).collect();
        load_at(b, c, &idx)
    } else if elem == Type::i1() {
        b.const_bool(false)
    } else {
        constant(b, &elem, attr_float(b.m, op, "value", 0.0))
    };
    let out_dims: Vec<ValueId> = (0..rank)
        .map(|d| {
            let s = loops::add(b, dx[d], begin[d]);
            loops::add(b, s, end[d])
        })
        .collect();
    let out = alloc_result(b, op, 0, &out_dims)?;
    let (zero, one) = (bounds.zero, bounds.one);
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        let mut idx = Vec::with_capacity(rank);
        let mut inside = b.const_bool(true);
        for d in 0..rank {
            let s = loops::sub(b, ivs[d], begin[d]);
            let dm1 = loops::sub(b, dx[d], one);
            let i = match mode.as_str() {
                "edge" => {
                    let c = b.same("arith.maxsi", &[s, zero]);
                    b.same("arith.minsi", &[c, dm1])
                }
                "reflect" => {
                    let neg = loops::sub(b, zero, s);
                    let lt = loops::cmp(b, "slt", s, zero);
                    let s1 = loops::select(b, lt, neg, s);
                    let twice = loops::add(b, dm1, dm1);
                    let back = loops::sub(b, twice, s1);
                    let ge = loops::cmp(b, "sgt", s1, dm1);
                    let r = loops::select(b, ge, back, s1);
                    // A dim of size 1 reflects onto itself.
                    let c = b.same("arith.maxsi", &[r, zero]);
                    b.same("arith.minsi", &[c, dm1])
                }
                "wrap" => {
                    let r = b.same("arith.remsi", &[s, dx[d]]);
                    let r = loops::add(b, r, dx[d]);
                    b.same("arith.remsi", &[r, dx[d]])
                }
                _ => {
                    let ge = loops::cmp(b, "sge", s, zero);
                    let lt = loops::cmp(b, "slt", s, dx[d]);
                    let ok = loops::and(b, ge, lt);
                    inside = loops::and(b, inside, ok);
                    loops::select(b, ok, s, zero)
                }
            };
            idx.push(i);
        }
        let v = load_at(b, x, &idx);
        let r = if mode == "constant" {
            scalar::select(b, inside, v, cval)
        } else {
            v
        };
        store_at(b, r, out, ivs);
    });
    Ok(vec![out])
}
