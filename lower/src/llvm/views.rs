//! Memref views: new descriptors over the same buffer, no copies.

use super::memref::{
    add, build_desc, desc_of, ev, memref_type, mul, offset, sizes, strides, Desc, Fields,
};
use super::FnCx;
use ir::attr::Attribute;
use ir::dialects::memref::static_list;
use ir::dialects::op_error;
use ir::types::MemRefType;
use ir::{OpId, Result, ValueId, DYN};

/// Static entries of `attr`, dynamic ones taken from `dynamic` in order.
fn mixed(
    cx: &FnCx<'_>,
    op: OpId,
    attr: &str,
    dynamic: &mut std::slice::Iter<'_, ValueId>,
) -> Result<Vec<String>> {
    static_list(cx.m, op, attr)
        .into_iter()
        .map(|s| {
            if s == DYN {
                let v = dynamic.next().ok_or_else(|| {
                    op_error(cx.m, op, format!("missing a dynamic operand for '{attr}'"))
                })?;
                cx.val(*v)
            } else {
                Ok(s.to_string())
            }
        })
        .collect()
}

/// Uses the result type's static value where it has one.
fn prefer_static(stat: i64, computed: String) -> String {
    if stat == DYN {
        computed
    } else {
        stat.to_string()
    }
}

/// Result descriptor fields with sizes/strides/offset the result type fixes
/// statically substituted in.
fn finish(
    cx: &mut FnCx<'_>,
    src: &Desc,
    rmt: &MemRefType,
    offset: String,
    sizes: Vec<String>,
    strides: Vec<String>,
    out: ValueId,
) {
    let (rstrides, roff) = rmt.strides_and_offset();
    let sizes = sizes
        .into_iter()
        .zip(&rmt.shape)
        .map(|(s, &st)| prefer_static(st, s))
        .collect();
    let strides = strides
        .into_iter()
        .zip(&rstrides)
        .map(|(s, &st)| prefer_static(st, s))
        .collect();
    let allocated = ev(cx, src, "0");
    let aligned = ev(cx, src, "1");
    build_desc(
        cx,
        Fields {
            allocated,
            aligned,
            offset: prefer_static(roff, offset),
            sizes,
            strides,
        },
        out,
    );
}

/// Which source dims a rank-reducing subview keeps: dims of static size 1
/// that do not line up with the next result dim are dropped.
fn kept_dims(sizes: &[i64], result_shape: &[i64]) -> Vec<usize> {
    let mut keep = Vec::with_capacity(result_shape.len());
    let mut j = 0;
    for (i, &s) in sizes.iter().enumerate() {
        let must_keep_rest = sizes.len() - i <= result_shape.len() - j;
        let unit_result = result_shape.get(j) == Some(&1);
        if j < result_shape.len() && (must_keep_rest || s != 1 || unit_result) {
            keep.push(i);
            j += 1;
        }
    }
    keep
}

pub(crate) fn subview(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let m = cx.m;
    let (src, r) = (cx.operand(op, 0)?, cx.result(op, 0)?);
    let (smt, rmt) = (memref_type(m, op, src)?, memref_type(m, op, r)?);
    let mut dynamic = m.operands(op).get(1..).unwrap_or(&[]).iter();
    let offs = mixed(cx, op, "static_offsets", &mut dynamic)?;
    let szs = mixed(cx, op, "static_sizes", &mut dynamic)?;
    let steps = mixed(cx, op, "static_strides", &mut dynamic)?;
    if offs.len() != smt.rank() || szs.len() != smt.rank() || steps.len() != smt.rank() {
        return Err(op_error(
            m,
            op,
            "expected offsets, sizes and strides of the source rank",
        ));
    }
    let d = desc_of(cx, op, src)?;
    let src_strides = strides(cx, &d, smt);
    let mut off = offset(cx, &d, smt);
    let mut new_strides = Vec::with_capacity(smt.rank());
    for ((o, s), st) in offs.iter().zip(&src_strides).zip(&steps) {
        let t = mul(cx, o, s);
        off = add(cx, &off, &t);
        new_strides.push(mul(cx, s, st));
    }
    let keep = kept_dims(&static_list(m, op, "static_sizes"), &rmt.shape);
    if keep.len() != rmt.rank() {
        return Err(op_error(
            m,
            op,
            "cannot tell which unit dimensions the subview drops",
        ));
    }
    let sizes_out = keep.iter().map(|&i| szs[i].clone()).collect();
    let strides_out = keep.iter().map(|&i| new_strides[i].clone()).collect();
    finish(cx, &d, rmt, off, sizes_out, strides_out, r);
    Ok(())
}

pub(crate) fn reinterpret_cast(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let m = cx.m;
    let (src, r) = (cx.operand(op, 0)?, cx.result(op, 0)?);
    let rmt = memref_type(m, op, r)?;
    let mut dynamic = m.operands(op).get(1..).unwrap_or(&[]).iter();
    let offs = mixed(cx, op, "static_offsets", &mut dynamic)?;
    let szs = mixed(cx, op, "static_sizes", &mut dynamic)?;
    let steps = mixed(cx, op, "static_strides", &mut dynamic)?;
    let (Some(off), true, true) = (
        offs.first(),
        szs.len() == rmt.rank(),
        steps.len() == rmt.rank(),
    ) else {
        return Err(op_error(
            m,
            op,
            "expected one offset and sizes/strides of the result rank",
        ));
    };
    let d = desc_of(cx, op, src)?;
    finish(cx, &d, rmt, off.clone(), szs, steps, r);
    Ok(())
}

/// `[[0, 1], [2]]` as index groups.
fn reassociation(cx: &FnCx<'_>, op: OpId) -> Result<Vec<Vec<usize>>> {
    let bad = || op_error(cx.m, op, "requires a valid 'reassociation' attribute");
    let groups =
        cx.m.attr(op, "reassociation")
            .and_then(Attribute::as_array)
            .ok_or_else(bad)?;
    groups
        .iter()
        .map(|g| {
            g.as_i64_list()
                .ok_or_else(bad)?
                .into_iter()
                .map(|i| usize::try_from(i).map_err(|_| bad()))
                .collect()
        })
        .collect()
}

pub(crate) fn collapse_shape(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let m = cx.m;
    let (src, r) = (cx.operand(op, 0)?, cx.result(op, 0)?);
    let (smt, rmt) = (memref_type(m, op, src)?, memref_type(m, op, r)?);
    let groups = reassociation(cx, op)?;
    let d = desc_of(cx, op, src)?;
    let ss = sizes(cx, &d, smt);
    let st = strides(cx, &d, smt);
    let mut out_sizes = Vec::with_capacity(groups.len());
    let mut out_strides = Vec::with_capacity(groups.len());
    for g in &groups {
        let mut size = String::from("1");
        for &i in g {
            let s = ss
                .get(i)
                .ok_or_else(|| op_error(m, op, "reassociation index out of range"))?;
            size = mul(cx, &size, s);
        }
        // A collapsed group strides like its innermost dimension.
        let inner = g
            .last()
            .and_then(|&i| st.get(i))
            .cloned()
            .unwrap_or_else(|| "1".into());
        out_sizes.push(size);
        out_strides.push(inner);
    }
    let off = offset(cx, &d, smt);
    finish(cx, &d, rmt, off, out_sizes, out_strides, r);
    Ok(())
}

pub(crate) fn expand_shape(cx: &mut FnCx<'_>, op: OpId) -> Result<()> {
    let m = cx.m;
    let (src, r) = (cx.operand(op, 0)?, cx.result(op, 0)?);
    let (smt, rmt) = (memref_type(m, op, src)?, memref_type(m, op, r)?);
    let groups = reassociation(cx, op)?;
    let d = desc_of(cx, op, src)?;
    let ss = sizes(cx, &d, smt);
    let st = strides(cx, &d, smt);
    // Result sizes: static, from the `output_shape` operands, or inferred.
    let mut dynamic = m.operands(op).get(1..).unwrap_or(&[]).iter();
    let given = if m.attr(op, "static_output_shape").is_some() {
        Some(mixed(cx, op, "static_output_shape", &mut dynamic)?)
    } else {
        None
    };
    let mut out_sizes = vec![String::new(); rmt.rank()];
    let mut out_strides = vec![String::new(); rmt.rank()];
    for (src_dim, g) in groups.iter().enumerate() {
        let (Some(src_size), Some(src_stride)) = (ss.get(src_dim), st.get(src_dim)) else {
            return Err(op_error(
                m,
                op,
                "more reassociation groups than source dimensions",
            ));
        };
        let mut unknown = None;
        let mut known = String::from("1");
        for &k in g {
            let stat = *rmt
                .shape
                .get(k)
                .ok_or_else(|| op_error(m, op, "reassociation index out of range"))?;
            let s = match (&given, stat) {
                (_, s) if s != DYN => s.to_string(),
                (Some(list), _) => list.get(k).cloned().unwrap_or_default(),
                (None, _) if unknown.is_none() => {
                    unknown = Some(k);
                    continue;
                }
                _ => {
                    return Err(op_error(
                        m,
                        op,
                        "needs output_shape operands for several dynamic sizes in a group",
                    ))
                }
            };
            known = mul(cx, &known, &s);
            out_sizes[k] = s;
        }
        if let Some(k) = unknown {
            out_sizes[k] = cx.assign(format!("sdiv i64 {src_size}, {known}"));
        }
        // Innermost result dim keeps the source stride; outer ones scale up.
        let mut stride = src_stride.clone();
        for &k in g.iter().rev() {
            out_strides[k] = stride.clone();
            stride = mul(cx, &stride, &out_sizes[k]);
        }
    }
    let off = offset(cx, &d, smt);
    finish(cx, &d, rmt, off, out_sizes, out_strides, r);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::kept_dims;
    use ir::DYN;

    #[test]
    fn rank_reduction_picks_unit_dims() {
        assert_eq!(kept_dims(&[1, 6], &[6]), vec![1]);
        assert_eq!(kept_dims(&[1, 1, 5], &[1, 5]), vec![0, 2]);
        assert_eq!(kept_dims(&[4, 1, DYN], &[4, DYN]), vec![0, 2]);
        assert_eq!(kept_dims(&[5, 1, 1], &[5, 1]), vec![0, 1]);
        assert_eq!(kept_dims(&[2, 3], &[2, 3]), vec![0, 1]);
        assert_eq!(kept_dims(&[1, 1], &[]), Vec::<usize>::new());
    }
}
