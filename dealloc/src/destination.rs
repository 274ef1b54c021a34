//! `write-into-destination`: a buffer computed only to be copied into a
//! slot of another is computed in the slot.
//!
//! ```text
//! %s = alloc; <writes and reads of %s>; %o = alloc; %v = subview %o[..]
//! copy %s -> %v {onnxc.disjoint_slot}; dealloc %s
//! ```
//! becomes `%o = alloc; %v = subview %o[..]; <the same through %v>`: the
//! slot view (with the index arithmetic it needs, and the destination's
//! allocation when that comes later) moves up to `%s`'s allocation, `%s`'s
//! uses go to the slot, and the copy, `%s` and its free go away.
//! Bufferize marks the copies whose destination slots are disjoint and
//! written by nothing else: Concat's inputs (subviews of its result) and
//! a Loop's scan rows (reinterpret_casts of the growing buffer, made ready
//! before the body computes the slice); only those are taken.
//!
//! `%s`'s uses must accept a strided view: loads, stores, vector
//! loads/stores, `memref.dim`, subviews of its rank (an inner Concat's
//! slots, which become views of the slot), casts to a view of any offset
//! and outer strides used so (a window kernel's output parameter, when
//! the slot's last dim is contiguous). A flattening `reinterpret_cast`
//! of `%s` (the element-wise kernels', the GEMM's) is taken when the slot
//! is contiguous and the flat view is addressed through its descriptor
//! (also by a GEMM function, whose output parameter takes any offset): it
//! becomes the same cast of the buffer under the slot at the slot's
//! offset (`ir::analysis::view_layout` reads both off the ops that made
//! the slot). A
//! copy from a row-major reshape of `%s` (an Unsqueeze) moves `%s` into a
//! row-major view of the destination at the slot's offset.

use crate::ownership::MANUAL_DEALLOCATION;
use crate::support::ops_where;
use ir::analysis::view_layout::{self, layout_of, Layout, Linear};
use ir::attr::Attribute;
use ir::builder::ViewOffset as Offset;
use ir::dialects::memref::{static_list, DISJOINT_SLOT};
use ir::pass::{Pass, PassContext, PassInfo};
use ir::{ArithOp, CoreOp, FuncOp, MemrefOp, VectorOp};
use ir::{BlockId, InsertPoint, Module, OpId, Result, Type, ValueId, DYN};
use std::collections::HashSet;

pub struct WriteIntoDestination;

impl Pass for WriteIntoDestination {
    fn name(&self) -> &'static str {
        "write-into-destination"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let copies = ops_where(m, |m, o| {
            m.is(o, MemrefOp::Copy) && m.attr(o, DISJOINT_SLOT).is_some()
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
    let plain = m.is(a, MemrefOp::Alloc)
        && m.attr(a, MANUAL_DEALLOCATION).is_none()
        && m.op_block(a) == Some(b);
    plain.then_some(a)
}

/// Ops that address a memref operand through its strides.
fn strided_access(m: &Module, op: OpId) -> bool {
    use {MemrefOp as M, VectorOp as V};
    matches!(
        CoreOp::of(m, op),
        Some(
            CoreOp::Memref(M::Load | M::Store | M::Dim | M::Copy)
                | CoreOp::Vector(V::Load | V::Store | V::Maskedload | V::Maskedstore)
        )
    )
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
    /// Casts to a view of any offset and outer strides (a kernel
    /// function's output parameter, read through strides): they take
    /// any slot whose last dim is contiguous.
    any_layout: bool,
}

fn source_uses(m: &Module, src: ValueId, copy: OpId, free: OpId) -> Option<SourceUses> {
    let mut uses = SourceUses::default();
    for u in m.users(src) {
        if u == copy || u == free || strided_access(m, u) {
            continue;
        }
        if m.is(u, MemrefOp::Cast)
            && m.results(u)
                .iter()
                .all(|&r| any_layout(m.value_type(r)) && reads_through_strides(m, r, 0))
        {
            uses.any_layout = true;
            continue;
        }
        if m.is(u, MemrefOp::Subview)
            && m.operand(u, 0) == Some(src)
            && unit_steps(m, u)
            && m.results(u).iter().all(|&r| reads_through_strides(m, r, 0))
        {
            uses.views.push(u);
            continue;
        }
        let flat = m.is(u, MemrefOp::ReinterpretCast)
            && cast_offset(m, u).is_some()
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

/// Whether every use of view `v` addresses it through its descriptor:
/// strided accesses, casts to a view of any offset used so, and calls of
/// functions of the module whose parameter is used so (the GEMM's output).
fn reads_through_strides(m: &Module, v: ValueId, depth: usize) -> bool {
    depth < 4
        && m.users(v).into_iter().all(|u| {
            strided_access(m, u)
                || (m.is(u, MemrefOp::Cast)
                    && m.results(u).iter().all(|&r| {
                        any_offset(m.value_type(r)) && reads_through_strides(m, r, depth + 1)
                    }))
                || (m.is(u, FuncOp::Call) && callee_reads_through_strides(m, u, v, depth + 1))
        })
}

fn any_offset(t: &Type) -> bool {
    t.as_memref()
        .is_some_and(|mt| mt.strides_and_offset().1 == DYN)
}

/// A view of any offset and outer strides, the last 1.
fn any_layout(t: &Type) -> bool {
    t.as_memref().is_some_and(|mt| {
        let (strides, offset) = mt.strides_and_offset();
        let outer = strides.len().saturating_sub(1);
        offset == DYN && strides[..outer].iter().all(|&s| s == DYN) && strides.last() == Some(&1)
    })
}

/// Whether a view of type `t` has a contiguous last dim.
fn unit_last_stride(t: &Type) -> bool {
    t.as_memref()
        .is_some_and(|mt| mt.strides_and_offset().0.last() == Some(&1))
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

/// A reinterpret_cast's offset: static, or its offset operand.
fn cast_offset(m: &Module, cast: OpId) -> Option<Offset> {
    match m.attr(cast, "static_offsets")?.as_dense_array()? {
        [DYN] => m.operand(cast, 1).map(Offset::Value),
        [o] => Some(Offset::Static(*o)),
        _ => None,
    }
}

/// What `write_in_slot` found it may do for one copy.
struct Plan {
    /// The copied buffer's allocation, and its free.
    alloc: OpId,
    free: OpId,
    /// The copy reads a row-major reshape of the buffer, not the buffer.
    reshaped: bool,
    uses: SourceUses,
    /// The slot and its view op.
    slot: ValueId,
    view: OpId,
    /// Where a contiguous slot starts in the buffer under it.
    start: Option<Linear>,
}

fn write_in_slot(m: &mut Module, copy: OpId) -> bool {
    let Some(plan) = plan_write(m, copy) else {
        return false;
    };
    let ready = defined_before(m, plan.slot, plan.alloc);
    if !ready && !make_slot_before(m, plan.view, plan.alloc) {
        return false;
    }
    let base = view_layout::root(m, plan.slot);
    let start = plan.start.as_ref().map(|l| build_offset(m, l, plan.view));
    let home = match (plan.reshaped, start) {
        (true, Some(at)) => reshaped_home(m, base, at, plan.alloc),
        _ => plan.slot,
    };
    if let Some(at) = start {
        for &cast in &plan.uses.casts {
            recast_into(m, cast, base, at);
        }
    }
    for &inner in &plan.uses.views {
        rebase_view(m, inner, home);
    }
    let src = m.operand(copy, 0);
    m.erase_op(copy);
    m.erase_op(plan.free);
    if let Some(buffer) = m.result(plan.alloc, 0) {
        m.replace_all_uses(buffer, home);
    }
    m.erase_op(plan.alloc);
    // A reshape's cast, its home and the slot view may be left unused.
    let home = Some(home).filter(|_| plan.reshaped);
    for v in src
        .filter(|_| plan.reshaped)
        .into_iter()
        .chain(home)
        .chain([plan.slot])
    {
        if let Some(d) = m.defining_op(v).filter(|_| !m.has_uses(v)) {
            m.erase_op(d);
        }
    }
    true
}

/// The checks before any change: the copy's source is a buffer of the
/// block (or a row-major reshape of one) freed after the copy and used
/// only through strides, flattening casts and subviews of its rank;
/// flattening casts and reshapes need a contiguous slot.
fn plan_write(m: &Module, copy: OpId) -> Option<Plan> {
    let (src, slot, b) = (m.operand(copy, 0)?, m.operand(copy, 1)?, m.op_block(copy)?);
    let view = m.defining_op(slot)?;
    let is_view = m.is(view, MemrefOp::Subview) || m.is(view, MemrefOp::ReinterpretCast);
    let (alloc, reshaped) = source_buffer(m, src, b)?;
    let buffer = m.result(alloc, 0)?;
    let free = crate::motion::local_free(m, buffer, b)?;
    let touched = crate::motion::between(m, copy, free)
        .into_iter()
        .any(|o| crate::motion::touches(m, o, buffer));
    if !is_view || !m.is_before_in_block(copy, free) || touched {
        return None;
    }
    let uses = source_uses(m, buffer, copy, free)?;
    let start = layout_of(m, slot)
        .filter(Layout::contiguous)
        .map(|l| l.offset);
    let identity = m
        .value_type(buffer)
        .as_memref()
        .is_some_and(|t| t.is_identity_layout());
    let flat = !uses.casts.is_empty() || reshaped;
    let cast_fits = !uses.any_layout || unit_last_stride(m.value_type(slot));
    if !identity || (flat && start.is_none()) || !cast_fits {
        return None;
    }
    let rank = m.value_type(buffer).shape().map_or(0, <[i64]>::len);
    let same_rank = |&v: &OpId| {
        m.result(v, 0)
            .and_then(|r| m.value_type(r).shape())
            .is_some_and(|s| s.len() == rank)
    };
    if !uses.views.iter().all(same_rank) {
        return None;
    }
    Some(Plan {
        alloc,
        free,
        reshaped,
        uses,
        slot,
        view,
        start,
    })
}

/// The allocation a copy's source is: the source's own, or the one a
/// row-major reshape of it (a contiguous reinterpret_cast at offset 0 with
/// as many elements) views; and whether it was a reshape.
fn source_buffer(m: &Module, src: ValueId, b: BlockId) -> Option<(OpId, bool)> {
    if let Some(a) = plain_alloc(m, src, b) {
        return Some((a, false));
    }
    let cast = m.defining_op(src)?;
    if !m.is(cast, MemrefOp::ReinterpretCast) || cast_offset(m, cast) != Some(Offset::Static(0)) {
        return None;
    }
    let a = plain_alloc(m, m.operand(cast, 0)?, b)?;
    let (view, whole) = (layout_of(m, src)?, layout_of(m, m.result(a, 0)?)?);
    let same = view.contiguous() && view.elements()? == whole.elements()?;
    same.then_some((a, true))
}

/// `start` as an index value built after the slot's view op.
fn build_offset(m: &mut Module, start: &Linear, view: OpId) -> Offset {
    if let Some(c) = start.as_static() {
        return Offset::Static(c);
    }
    let mut b = ir::Builder::new(m, InsertPoint::After(view));
    Offset::Value(start.build(&mut b))
}

/// A row-major view of `base` at `at` with the shape of the buffer
/// `alloc` allocates, made before it: where that buffer's elements go.
fn reshaped_home(m: &mut Module, base: ValueId, at: Offset, alloc: OpId) -> ValueId {
    let Some(r) = m.result(alloc, 0) else {
        return base;
    };
    let ty = m.value_type(r).clone();
    let shape = ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    let given = layout_of(m, r).map(|l| l.sizes).unwrap_or_default();
    let mut b = ir::Builder::new(m, InsertPoint::Before(alloc));
    let sizes: Vec<ValueId> = shape
        .iter()
        .enumerate()
        .map(|(k, &d)| match given.get(k).and_then(|s| s.as_value()) {
            Some(v) if d == DYN => v,
            _ => b.const_index(d.max(0)),
        })
        .collect();
    b.row_major_view(base, ty.element_type(), (&shape, &sizes), at)
}

/// `inner` (a unit-step subview of the source, of its rank) becomes the
/// same subview of `home`, which took the source's place; its offset is
/// static when `home`'s and its own are.
fn rebase_view(m: &mut Module, inner: OpId, home: ValueId) {
    let (Some(r), Some(home_ty)) = (m.result(inner, 0), m.value_type(home).as_memref()) else {
        return;
    };
    let (strides, home_offset) = home_ty.strides_and_offset();
    let elem = home_ty.elem.clone();
    let offsets = static_list(m, inner, "static_offsets");
    let offset = offsets
        .iter()
        .zip(&strides)
        .try_fold(home_offset, |acc, (&o, &s)| {
            let known = acc != DYN && o != DYN && s != DYN;
            known.then(|| acc.checked_add(o.checked_mul(s)?)).flatten()
        })
        .unwrap_or(DYN);
    let shape = m
        .value_type(r)
        .shape()
        .map(<[i64]>::to_vec)
        .unwrap_or_default();
    m.set_operand(inner, 0, home);
    m.set_value_type(r, Type::memref_strided(shape, elem, offset, strides));
}

/// Moves the slot view, with the index arithmetic it needs, to before the
/// source's allocation, and with it the destination's allocation when
/// that is a plain one of the block that comes later; false (nothing
/// moved) when the destination is defined later otherwise or that
/// arithmetic is not pure.
fn make_slot_before(m: &mut Module, view: OpId, alloc_src: OpId) -> bool {
    let (Some(b), Some(dest)) = (m.op_block(alloc_src), m.operand(view, 0)) else {
        return false;
    };
    let alloc_dest = plain_alloc(m, dest, b).filter(|&a| !m.is_before_in_block(a, alloc_src));
    if alloc_dest.is_none() && !defined_before(m, dest, alloc_src) {
        return false;
    }
    for op in alloc_dest.into_iter().chain([view]) {
        size_operands_from_layouts(m, op);
    }
    let mut needed: Vec<ValueId> = alloc_dest.map_or(Vec::new(), |a| m.operands(a).to_vec());
    needed.extend(m.operands(view).iter().skip(1));
    if !hoist_computation(m, &needed, alloc_src) {
        return false;
    }
    if let Some(a) = alloc_dest {
        m.move_to(a, InsertPoint::Before(alloc_src));
    }
    m.move_to(view, InsertPoint::Before(alloc_src));
    true
}

/// `op`'s operands that are `memref.dim`s of views whose layout gives the
/// size as a value become that value: a Concat's slot sizes are read off
/// its inputs, which are computed after the slot once they are written
/// there.
fn size_operands_from_layouts(m: &mut Module, op: OpId) {
    for (i, v) in m.operands(op).to_vec().into_iter().enumerate() {
        let Some(dim) = m.defining_op(v).filter(|&d| m.is(d, MemrefOp::Dim)) else {
            continue;
        };
        let index = m.operand(dim, 1).and_then(|k| {
            let k = m.defining_op(k).filter(|&c| m.is(c, ArithOp::Constant))?;
            usize::try_from(m.attr(k, "value")?.as_int()?).ok()
        });
        let size = m
            .operand(dim, 0)
            .zip(index)
            .and_then(|(x, k)| layout_of(m, x)?.sizes.get(k)?.as_value());
        if let Some(size) = size {
            m.set_operand(op, i, size);
        }
    }
}

/// Whether `v` is defined before `point`: earlier in its block, or in a
/// block around it.
fn defined_before(m: &Module, v: ValueId, point: OpId) -> bool {
    let (block, def) = match m.value_def(v) {
        ir::ValueDef::Result(d, _) => (m.op_block(d), Some(d)),
        ir::ValueDef::BlockArg(blk, _) => (Some(blk), None),
        ir::ValueDef::Erased => return false,
    };
    let Some(here) = block.and_then(|blk| m.ancestor_in_block(blk, point)) else {
        return false;
    };
    def.is_none_or(|d| d != here && m.is_before_in_block(d, here))
}

/// `cast` (of the source, at offset `o`) becomes the same cast of `base`
/// at the slot's offset plus `o`, its type's offset moved with it.
fn recast_into(m: &mut Module, cast: OpId, base: ValueId, start: Offset) {
    let Some(own) = cast_offset(m, cast) else {
        return;
    };
    m.set_operand(cast, 0, base);
    let offset = match (start, own) {
        (Offset::Static(a), Offset::Static(o)) => {
            let offset = a.saturating_add(o);
            m.set_attr(cast, "static_offsets", Attribute::i64_array(&[offset]));
            offset
        }
        (a, o) => {
            let mut b = ir::Builder::new(m, InsertPoint::Before(cast));
            let at = match (a, o) {
                (Offset::Value(a), Offset::Static(0)) => a,
                (a, o) => {
                    let (a, o) = (offset_value(&mut b, a), offset_value(&mut b, o));
                    b.addi(a, o)
                }
            };
            match own {
                Offset::Value(_) => m.set_operand(cast, 1, at),
                Offset::Static(_) => set_dynamic_offset(m, cast, at),
            }
            DYN
        }
    };
    for r in m.results(cast).to_vec() {
        if let Some(mt) = m.value_type(r).as_memref() {
            let (strides, _) = mt.strides_and_offset();
            let ty = Type::memref_strided(mt.shape.clone(), mt.elem.clone(), offset, strides);
            m.set_value_type(r, ty);
        }
    }
}

fn offset_value(b: &mut ir::Builder<'_>, o: Offset) -> ValueId {
    match o {
        Offset::Static(c) => b.const_index(c),
        Offset::Value(v) => v,
    }
}

/// A reinterpret_cast with a static offset takes the value `at` instead.
fn set_dynamic_offset(m: &mut Module, cast: OpId, at: ValueId) {
    let mut operands = m.operands(cast).to_vec();
    operands.insert(1.min(operands.len()), at);
    m.set_operands(cast, &operands);
    m.set_attr(cast, "static_offsets", Attribute::i64_array(&[DYN]));
    let mut segments = static_list(m, cast, "operandSegmentSizes");
    if let Some(n) = segments.get_mut(1) {
        *n = 1;
    }
    m.set_attr(
        cast,
        "operandSegmentSizes",
        Attribute::DenseArray(Type::i(32), segments.as_slice().into()),
    );
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
