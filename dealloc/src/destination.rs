//! `write-into-destination`: a buffer computed only to be copied into a
//! slot of another is computed in the slot.
//!
//! ```text
//! %s = alloc; <writes and reads of %s>; %o = alloc; %v = subview %o[..]
//! copy %s -> %v {onnxc.disjoint_slot}; dealloc %s
//! ```
//! becomes `%o = alloc; %v = subview %o[..]; <the same through %v>`: the
//! destination's allocation and the slot view (with the index arithmetic
//! they need) move up to `%s`'s allocation, `%s`'s uses go to the slot,
//! and the copy, `%s` and its free go away. Bufferize marks the copies
//! whose destination slots are disjoint and written by nothing else
//! (Concat's inputs); only those are taken.
//!
//! `%s`'s uses must accept a strided view: loads, stores, vector
//! loads/stores, `memref.dim`. A flattening `reinterpret_cast` of `%s` (the
//! element-wise kernels', the GEMM's) is taken when the slot is contiguous
//! (the dims before the concatenation axis are 1) and the flat view is
//! addressed through its descriptor (also by a GEMM function, whose output
//! parameter takes any offset): it becomes the same cast of `%o` at the
//! slot's offset.

use crate::ownership::MANUAL_DEALLOCATION;
use crate::support::ops_where;
use ir::attr::Attribute;
use ir::builder::ViewLayout;
use ir::dialects::memref::{static_list, DISJOINT_SLOT};
use ir::pass::{Pass, PassContext, PassInfo};
use ir::{BlockId, InsertPoint, Module, OpId, Result, Type, ValueId, DYN};
use std::collections::HashSet;

pub struct WriteIntoDestination;

impl Pass for WriteIntoDestination {
    fn name(&self) -> &'static str {
        "write-into-destination"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let copies = ops_where(m, |m, o| {
            m.is(o, "memref.copy") && m.attr(o, DISJOINT_SLOT).is_some()
        });
        let n = copies.into_iter().filter(|&c| write_in_slot(m, c)).count();
        cx.bump("write-into-destination.copies-removed", n as u64);
        Ok(())
    }
}

pub fn pass_info() -> PassInfo {
    PassInfo {
        name: "write-into-destination",
        summary: "a buffer copied into a slot of another is computed in the slot",
        create: |_| Ok(Box::new(WriteIntoDestination)),
    }
}

/// A plain `memref.alloc` of block `b` defining `v`.
fn plain_alloc(m: &Module, v: ValueId, b: BlockId) -> Option<OpId> {
    let a = m.defining_op(v)?;
    let plain = m.is(a, "memref.alloc")
        && m.attr(a, MANUAL_DEALLOCATION).is_none()
        && m.op_block(a) == Some(b);
    plain.then_some(a)
}

/// Ops that address a memref operand through its strides.
fn strided_access(m: &Module, op: OpId) -> bool {
    [
        "memref.load",
        "memref.store",
        "memref.dim",
        "memref.copy",
        "vector.load",
        "vector.store",
        "vector.maskedload",
        "vector.maskedstore",
    ]
    .iter()
    .any(|n| m.is(op, n))
}

/// The uses of the source other than the copy and its free that are not
/// strided accesses.
#[derive(Default)]
struct SourceUses {
    /// Flattening casts (static offsets, strided uses only).
    casts: Vec<OpId>,
    /// Unit-step subviews (strided uses only): slots of an earlier
    /// Concat whose inputs were written into the source.
    views: Vec<OpId>,
}

fn source_uses(m: &Module, src: ValueId, copy: OpId, free: OpId) -> Option<SourceUses> {
    let mut uses = SourceUses::default();
    for u in m.users(src) {
        if u == copy || u == free || strided_access(m, u) {
            continue;
        }
        if m.is(u, "memref.subview")
            && m.operand(u, 0) == Some(src)
            && unit_steps(m, u)
            && m.results(u).iter().all(|&r| reads_through_strides(m, r, 0))
        {
            uses.views.push(u);
            continue;
        }
        let flat = m.is(u, "memref.reinterpret_cast")
            && static_offset(m, u).is_some()
            && m.results(u).iter().all(|&r| reads_through_strides(m, r, 0));
        if !flat {
            return None;
        }
        uses.casts.push(u);
    }
    Some(uses)
}

fn unit_steps(m: &Module, view: OpId) -> bool {
    static_list(m, view, "static_strides")
        .iter()
        .all(|&s| s == 1)
}

/// A subview's offsets: static ones as constants, dynamic ones as their
/// operands.
fn view_offsets(m: &Module, view: OpId) -> Vec<Offset> {
    let mut dynamic = m.operands(view).iter().skip(1).copied();
    static_list(m, view, "static_offsets")
        .into_iter()
        .map(|o| match o {
            DYN => dynamic.next().map_or(Offset::Static(DYN), Offset::Value),
            o => Offset::Static(o),
        })
        .collect()
}

#[derive(Clone, Copy)]
enum Offset {
    Static(i64),
    Value(ValueId),
}

/// Whether every use of view `v` addresses it through its descriptor:
/// strided accesses, casts to a view of any offset used so, and calls of
/// functions of the module whose parameter is used so (the GEMM's output).
fn reads_through_strides(m: &Module, v: ValueId, depth: usize) -> bool {
    depth < 4
        && m.users(v).into_iter().all(|u| {
            strided_access(m, u)
                || (m.is(u, "memref.cast")
                    && m.results(u).iter().all(|&r| {
                        any_offset(m.value_type(r)) && reads_through_strides(m, r, depth + 1)
                    }))
                || (m.is(u, "func.call") && callee_reads_through_strides(m, u, v, depth + 1))
        })
}

fn any_offset(t: &Type) -> bool {
    t.as_memref()
        .is_some_and(|mt| mt.strides_and_offset().1 == DYN)
}

/// Whether `call`'s callee uses each parameter `v` is passed as through
/// its strides, and takes it at any offset.
fn callee_reads_through_strides(m: &Module, call: OpId, v: ValueId, depth: usize) -> bool {
    let callee = m
        .attr(call, "callee")
        .and_then(Attribute::as_symbol)
        .and_then(|s| m.lookup_symbol(s));
    let Some(entry) = callee
        .and_then(|f| m.region(f, 0))
        .and_then(|r| m.entry_block(r))
    else {
        return false;
    };
    let params = m.block_args(entry);
    m.operands(call).iter().enumerate().all(|(i, &x)| {
        x != v
            || params
                .get(i)
                .is_some_and(|&p| any_offset(m.value_type(p)) && reads_through_strides(m, p, depth))
    })
}

fn static_offset(m: &Module, cast: OpId) -> Option<i64> {
    match m.attr(cast, "static_offsets")?.as_dense_array()? {
        [o] if *o != DYN => Some(*o),
        _ => None,
    }
}

/// The offset of a view whose elements lie contiguously in row-major
/// order (as a fresh buffer of its shape would), or None.
fn contiguous_offset(t: &Type) -> Option<i64> {
    let mt = t.as_memref()?;
    let (strides, offset) = mt.strides_and_offset();
    let mut inner = 1i64;
    for (&size, &stride) in mt.shape.iter().zip(&strides).rev() {
        if size != 1 && (size == DYN || stride != inner) {
            return None;
        }
        inner = inner.checked_mul(size.max(1))?;
    }
    (offset != DYN).then_some(offset)
}

fn write_in_slot(m: &mut Module, copy: OpId) -> bool {
    let (Some(src), Some(slot), Some(b)) =
        (m.operand(copy, 0), m.operand(copy, 1), m.op_block(copy))
    else {
        return false;
    };
    let Some(view) = m.defining_op(slot).filter(|&v| m.is(v, "memref.subview")) else {
        return false;
    };
    let (Some(alloc_src), Some(dest)) = (plain_alloc(m, src, b), m.operand(view, 0)) else {
        return false;
    };
    let Some(alloc_dest) = plain_alloc(m, dest, b) else {
        return false;
    };
    let Some(free) = crate::motion::local_free(m, src, b) else {
        return false;
    };
    let touched = || {
        crate::motion::between(m, copy, free)
            .into_iter()
            .any(|o| crate::motion::touches(m, o, src))
    };
    if !m.is_before_in_block(copy, free) || touched() {
        return false;
    }
    let Some(uses) = source_uses(m, src, copy, free) else {
        return false;
    };
    let slot_offset = contiguous_offset(m.value_type(slot));
    if !uses.casts.is_empty() && slot_offset.is_none() {
        return false;
    }
    if !m
        .value_type(src)
        .as_memref()
        .is_some_and(|t| t.is_identity_layout())
    {
        return false;
    }
    // The destination and its slot view are made where the source was.
    let mut needed: Vec<ValueId> = m.operands(alloc_dest).to_vec();
    needed.extend(m.operands(view).iter().skip(1));
    if !hoist_computation(m, &needed, alloc_src) {
        return false;
    }
    if m.is_before_in_block(alloc_src, alloc_dest) {
        m.move_to(alloc_dest, InsertPoint::Before(alloc_src));
    }
    m.move_to(view, InsertPoint::Before(alloc_src));
    if let Some(base) = slot_offset {
        for cast in uses.casts {
            recast_into(m, cast, dest, base);
        }
    }
    for inner in uses.views {
        compose_views(m, inner, view, dest);
    }
    m.erase_op(copy);
    m.erase_op(free);
    m.replace_all_uses(src, slot);
    m.erase_op(alloc_src);
    true
}

/// `cast` (of the source, at offset `o`) becomes the same cast of `dest`
/// at `base + o`, its type's offset moved with it.
fn recast_into(m: &mut Module, cast: OpId, dest: ValueId, base: i64) {
    let o = static_offset(m, cast).unwrap_or(0);
    let offset = base.saturating_add(o);
    m.set_operand(cast, 0, dest);
    m.set_attr(cast, "static_offsets", Attribute::i64_array(&[offset]));
    for r in m.results(cast).to_vec() {
        if let Some(mt) = m.value_type(r).as_memref() {
            let (strides, _) = mt.strides_and_offset();
            let ty = Type::memref_strided(mt.shape.clone(), mt.elem.clone(), offset, strides);
            m.set_value_type(r, ty);
        }
    }
}

/// `inner` (a unit-step subview of the source) becomes the same view of
/// `dest` at the slot's offsets plus its own: one view, not a view of a
/// view, whose layout is `dest`'s strides at the summed offset.
fn compose_views(m: &mut Module, inner: OpId, slot: OpId, dest: ValueId) {
    let (Some(r), Some(dest_ty)) = (m.result(inner, 0), m.value_type(dest).as_memref()) else {
        return;
    };
    let (strides, _) = dest_ty.strides_and_offset();
    let elem = dest_ty.elem.clone();
    let (outer, own) = (view_offsets(m, slot), view_offsets(m, inner));
    let sizes = static_list(m, inner, "static_sizes");
    let n_dyn_offsets = own.iter().filter(|o| matches!(o, Offset::Value(_))).count();
    let dyn_sizes: Vec<ValueId> = m.operands(inner)[1 + n_dyn_offsets..].to_vec();
    let shape = m
        .value_type(r)
        .shape()
        .map(<[i64]>::to_vec)
        .unwrap_or_default();
    let mut b = ir::Builder::new(m, InsertPoint::Before(inner));
    let mut statics = Vec::new();
    let mut dynamic = Vec::new();
    let mut linear = Some(0i64);
    for ((&a, &c), &stride) in outer.iter().zip(&own).zip(&strides) {
        let sum = match (a, c) {
            (Offset::Static(x), Offset::Static(y)) if x != DYN && y != DYN => {
                Offset::Static(x.saturating_add(y))
            }
            _ => {
                let (x, y) = (offset_value(&mut b, a), offset_value(&mut b, c));
                Offset::Value(b.addi(x, y))
            }
        };
        match sum {
            Offset::Static(s) => {
                statics.push(s);
                linear = linear.and_then(|l| (stride != DYN).then(|| l + s * stride));
            }
            Offset::Value(v) => {
                statics.push(DYN);
                dynamic.push(v);
                linear = None;
            }
        }
    }
    let n_dyn = dynamic.len();
    dynamic.extend(dyn_sizes);
    let ty = Type::memref_strided(shape, elem, linear.unwrap_or(DYN), strides);
    let layout = ViewLayout {
        offsets: &statics,
        sizes: &sizes,
        strides: &vec![1; sizes.len()],
    };
    let composed = b.subview(dest, layout, n_dyn, &dynamic, ty);
    m.replace_all_uses(r, composed);
    m.erase_op(inner);
}

fn offset_value(b: &mut ir::Builder<'_>, o: Offset) -> ValueId {
    match o {
        Offset::Static(c) => b.const_index(c),
        Offset::Value(v) => v,
    }
}

/// Moves the pure ops computing `values` that come at or after `point`
/// (same block) to before it, in order; false (nothing moved) when one of
/// them depends on something that is not pure.
fn hoist_computation(m: &mut Module, values: &[ValueId], point: OpId) -> bool {
    let Some(b) = m.op_block(point) else {
        return false;
    };
    let mut moving: Vec<OpId> = Vec::new();
    let mut seen = HashSet::new();
    let mut stack = values.to_vec();
    while let Some(v) = stack.pop() {
        let Some(d) = m.defining_op(v) else { continue };
        if m.op_block(d) != Some(b) || m.is_before_in_block(d, point) || !seen.insert(d) {
            continue;
        }
        if !m.is_pure(d) || !m.regions(d).is_empty() {
            return false;
        }
        moving.push(d);
        stack.extend(m.operands(d).iter().copied());
    }
    moving.sort_by(|&x, &y| {
        if m.is_before_in_block(x, y) {
            std::cmp::Ordering::Less
        } else {
            std::cmp::Ordering::Greater
        }
    });
    for op in moving {
        m.move_to(op, InsertPoint::Before(point));
    }
    true
}
