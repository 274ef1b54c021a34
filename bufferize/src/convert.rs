//! The conversion driver: rewrites each function's `onnx.*` ops into memref
//! allocations and loop nests, in program order, mapping every tensor value
//! to the memref holding it.

use crate::kernels;
use ir::dialects::op_error;
use ir::entity::SecondaryMap;
use ir::{Builder, Diagnostic, InsertPoint, Module, OpId, Result, Type, ValueId, DYN};
use ir::{FuncOp, MemrefOp};
use onnx::OpKind;
use std::cell::RefCell;

/// State of one module's conversion.
pub struct Lowering {
    /// Tensor value → the memref now holding it.
    map: SecondaryMap<ValueId, Option<ValueId>>,
    /// Memref → the tensor values it holds (the inverse of `map`).
    holders: SecondaryMap<ValueId, Vec<ValueId>>,
    /// Program position of each op of the function being converted.
    pos: SecondaryMap<OpId, Option<usize>>,
    /// Where new `memref.global`s go (before the first function).
    global_ip: Option<OpId>,
    next_global: usize,
    /// What earlier in-place checks verified, per memref.
    verified: RefCell<SecondaryMap<ValueId, Verified>>,
    /// Width of the target's vector registers, which the kernels' vector
    /// code is written for.
    pub vector_bits: u32,
    /// The target has VNNI's `vpdpbusd` at `vector_bits`.
    pub int8_dot: bool,
    /// The vector widths of the GEMM functions.
    pub gemm: crate::kernels::linalg::gemm::Isa,
    /// Ops whose results a producer's epilogue computed.
    absorbed: SecondaryMap<OpId, bool>,
    /// The scalar body of an element-wise op kind (`kernels::ew_body`),
    /// which fusion reads without depending on the dispatch.
    pub ew_body: fn(onnx::OpKind) -> Option<crate::kernels::elementwise::Body>,
    /// Element-wise ops their consumer's loop computes (`elementwise::fusion`):
    /// the length of the deferred chain each ends (0: not deferred).
    deferred: SecondaryMap<OpId, u32>,
}

/// What earlier `reusable_operand` calls established about a memref: its
/// first `uses` uses are loads or stores and its first `holders` holders
/// are dead, or it `escaped` (has another use). Both lists only grow
/// during the conversion walk (kernels add ops, never erase them; a shrunk
/// list is verified again from scratch), and positions only advance, so
/// a later check need only look at what was added since: without this, a
/// chain of in-place ops (Relu, Sigmoid, ... all in one buffer) re-scanned
/// every earlier load, store and holder at each op, quadratic in its length.
#[derive(Clone, Copy, Default)]
struct Verified {
    uses: usize,
    holders: usize,
    escaped: bool,
}

/// Converts a ranked tensor type to an identity-layout memref type.
pub fn memref_type(m: &Module, op: OpId, t: &Type) -> Result<Type> {
    match t {
        Type::Tensor(tt) => match &tt.shape {
            Some(shape) => Ok(Type::memref(shape.clone(), tt.elem.clone())),
            None => Err(op_error(
                m,
                op,
                format!("cannot bufferize a value of unranked type {t}"),
            )),
        },
        Type::MemRef(_) => Ok(t.clone()),
        _ => Err(op_error(
            m,
            op,
            format!("cannot bufferize a value of type {t}"),
        )),
    }
}

impl Lowering {
    /// The memref holding operand `i` of `op`.
    pub fn input(&self, m: &Module, op: OpId, i: usize) -> Result<ValueId> {
        let v = m
            .operand(op, i)
            .ok_or_else(|| op_error(m, op, format!("missing operand #{i}")))?;
        self.map[v].ok_or_else(|| op_error(m, op, format!("operand #{i} has no buffer")))
    }

    /// The memref of optional operand `i`, or None when it is omitted.
    pub fn optional_input(&self, m: &Module, op: OpId, i: usize) -> Result<Option<ValueId>> {
        self.has_input(m, op, i)
            .then(|| self.input(m, op, i))
            .transpose()
    }

    /// True if operand `i` exists and is not an omitted optional (`none`).
    pub fn has_input(&self, m: &Module, op: OpId, i: usize) -> bool {
        m.operand(op, i)
            .is_some_and(|v| *m.value_type(v) != Type::None)
    }

    /// The tensor type of `v` before bufferization (symbolic dims
    /// included): a function argument's is still in the function's type,
    /// which is refreshed only once its body is converted.
    pub fn tensor_type<'m>(&self, m: &'m Module, v: ValueId) -> Option<&'m ir::types::TensorType> {
        if let ir::ValueDef::BlockArg(block, i) = m.value_def(v) {
            let f = m.block_parent_op(block).filter(|&f| m.is(f, FuncOp::Func));
            if let Some(f) = f {
                let ft = ir::dialects::func::function_type(m, f)?;
                return ft.inputs.get(i as usize)?.as_tensor();
            }
        }
        m.value_type(v).as_tensor()
    }

    /// Marks `op` as computed by another op's kernel (its results bound).
    pub fn absorb(&mut self, op: OpId) {
        self.absorbed[op] = true;
    }

    /// Marks `op` as computed inside `user`'s loop; its inputs are read
    /// there, so for the in-place analysis it sits at `user`.
    pub fn defer(&mut self, op: OpId, user: OpId, chain: u32) {
        self.deferred[op] = chain;
        self.pos[op] = self.pos[user];
    }

    /// `op`'s program position (see [`Lowering::defer`]).
    pub fn position(&self, op: OpId) -> Option<usize> {
        self.pos[op]
    }

    pub fn is_deferred(&self, op: OpId) -> bool {
        self.deferred[op] > 0
    }

    /// The length of the deferred chain `op` ends (0 when not deferred).
    pub fn chain(&self, op: OpId) -> u32 {
        self.deferred[op]
    }

    /// Records that tensor value `t` now lives in memref `buf`.
    pub fn bind(&mut self, t: ValueId, buf: ValueId) {
        self.map[t] = Some(buf);
        self.holders[buf].push(t);
    }

    /// In-place analysis for an element-wise `op` whose result has memref
    /// type `out_ty`: the buffer of one of `operands` that `op` may
    /// overwrite. It must be a fresh `memref.alloc` of exactly `out_ty`
    /// (not a function argument, a global or a view), used so far only by
    /// loads and stores (no view, no return), and every tensor value it
    /// holds must be dead after `op`.
    pub fn reusable_operand(
        &self,
        m: &Module,
        op: OpId,
        operands: &[usize],
        out_ty: &Type,
        here_block: Option<ir::BlockId>,
    ) -> Option<ValueId> {
        if !out_ty.as_memref().is_some_and(|t| t.has_static_shape()) {
            return None;
        }
        // Only buffers allocated in the block being built: one from an
        // enclosing block may be read again by a later loop iteration.
        let block = here_block;
        let here = self.top_pos(m, op)?;
        operands.iter().find_map(|&i| {
            let buf = self.input(m, op, i).ok()?;
            let def = m.defining_op(buf)?;
            let fresh = m.is(def, MemrefOp::Alloc)
                && m.op_block(def) == block
                && m.value_type(buf) == out_ty;
            let holders = &self.holders[buf];
            if !fresh || holders.is_empty() {
                return None;
            }
            let mut verified = self.verified.borrow_mut();
            let v = &mut verified[buf];
            let uses = m.uses(buf);
            if uses.len() < v.uses || holders.len() < v.holders {
                *v = Verified::default();
            }
            if v.escaped {
                return None;
            }
            let access = |u: &ir::Use| m.is(u.op, MemrefOp::Load) || m.is(u.op, MemrefOp::Store);
            if !uses[v.uses..].iter().all(access) {
                v.escaped = true;
                return None;
            }
            v.uses = uses.len();
            let dead_after = holders[v.holders..].iter().all(|&t| {
                m.uses(t)
                    .iter()
                    .all(|u| self.top_pos(m, u.op).is_some_and(|p| p <= here))
            });
            if dead_after {
                v.holders = holders.len();
            }
            dead_after.then_some(buf)
        })
    }

    /// Position of `op` (or of its ancestor at function level).
    fn top_pos(&self, m: &Module, mut op: OpId) -> Option<usize> {
        loop {
            if let Some(p) = self.pos[op] {
                return Some(p);
            }
            op = m.parent_op(op)?;
        }
    }

    /// A `memref.global` holding `value`, and a `get_global` of it at `b`.
    /// A large value that repeats along some dims (a splat, Expand folded
    /// to a broadcast view) is stored as its distinct values and expanded
    /// at run time into a buffer (a fill for a splat): Expand of a scalar
    /// to [2000, 1000] is one element in the library, not 8 MB. (Element-
    /// wise ops already take such operands as their core: constprop's
    /// `shrink-broadcast-operands`.)
    pub fn global(&mut self, b: &mut Builder<'_>, value: &ir::elements::Elements) -> ValueId {
        let full = value
            .dtype()
            .storage_bytes(value.len())
            .unwrap_or(usize::MAX);
        if full >= EXPAND_AT_RUN_TIME_BYTES && value.emitted_bytes().saturating_mul(2) <= full {
            if let Some((repeated, core)) = value.repeated_core() {
                let g = self.plain_global(b, &core.materialized());
                let ty = Type::memref(value.shape().to_vec(), value.dtype().to_type());
                let out = alloc(b, &ty, &[]);
                let sizes = dims(b, out);
                let bounds = crate::loops::Bounds::new(b);
                crate::loops::loop_nest(b, &bounds, &sizes, &mut |b, ivs| {
                    let at: Vec<ValueId> = ivs
                        .iter()
                        .zip(&repeated)
                        .map(|(&i, &r)| if r { bounds.zero } else { i })
                        .collect();
                    let v = b.load(g, &at);
                    b.store(v, out, ivs);
                });
                return out;
            }
        }
        self.plain_global(b, value)
    }

    fn plain_global(&mut self, b: &mut Builder<'_>, value: &ir::elements::Elements) -> ValueId {
        let ty = Type::memref(value.shape().to_vec(), value.dtype().to_type());
        let name = format!("__constant_{}", self.next_global);
        self.next_global += 1;
        if let Some(anchor) = self.global_ip {
            let mut gb = Builder::new(b.m, InsertPoint::Before(anchor));
            gb.constant_global(&name, ty.clone(), value.clone(), 64);
        }
        b.get_global(&name, ty)
    }
}

/// Repeating constants from this size up are expanded at run time (below
/// it the plain global costs less than the loop).
const EXPAND_AT_RUN_TIME_BYTES: usize = 64 * 1024;

/// Allocates a buffer of memref type `ty`; `dyn_dims` gives each `?` dim in order.
pub fn alloc(b: &mut Builder<'_>, ty: &Type, dyn_dims: &[ValueId]) -> ValueId {
    b.alloc_aligned(ty, dyn_dims, 64)
}

/// `alloc` of `ty` with every dim's size given (`dims`, one per dim).
pub fn alloc_dims(b: &mut Builder<'_>, ty: &Type, dims: &[ValueId]) -> ValueId {
    let shape = ty.shape().unwrap_or(&[]);
    let dynamic = ir::types::dynamic_sizes(shape, dims);
    alloc(b, ty, &dynamic)
}

/// True when `v` may not be a contiguous row-major buffer: a Slice's
/// `memref.subview` (every other buffer bufferize binds is contiguous).
pub fn is_strided_view(m: &Module, v: ValueId) -> bool {
    m.defining_op(v).is_some_and(|d| m.is(d, MemrefOp::Subview))
}

/// `v`, or a fresh row-major copy of it when it is a strided view: for
/// consumers that reinterpret its memory, pass it across a region or
/// function boundary, or call a kernel that wants unit strides.
pub fn contiguous(b: &mut Builder<'_>, v: ValueId) -> ValueId {
    if !is_strided_view(b.m, v) {
        return v;
    }
    let (shape, elem) = match b.m.value_type(v).as_memref() {
        Some(t) => (t.shape.clone(), t.elem.clone()),
        None => return v,
    };
    let sizes = dims(b, v);
    let out = alloc_dims(b, &Type::memref(shape, elem), &sizes);
    b.copy(v, out);
    out
}

/// Size of every dim of a memref: constants for static dims, the size
/// the op that made it was given (an allocation's or reinterpret_cast's
/// operand) for dynamic ones, `memref.dim` otherwise.
pub fn dims(b: &mut Builder<'_>, v: ValueId) -> Vec<ValueId> {
    let given = given_sizes(b.m, v);
    let shape =
        b.m.value_type(v)
            .shape()
            .map(<[i64]>::to_vec)
            .unwrap_or_default();
    shape
        .iter()
        .enumerate()
        .map(|(i, &d)| match (d, given.get(i).copied().flatten()) {
            (DYN, Some(s)) => s,
            (DYN, None) => b.dim(v, i),
            (d, _) => b.const_index(d),
        })
        .collect()
}

/// `dims` when every dynamic size is a value the op that made `v` was
/// given (so the sizes are defined before `v` is), else None.
pub fn given_dims(b: &mut Builder<'_>, v: ValueId) -> Option<Vec<ValueId>> {
    let given = given_sizes(b.m, v);
    let shape = b.m.value_type(v).shape()?.to_vec();
    shape
        .iter()
        .enumerate()
        .map(|(i, &d)| match d {
            DYN => given.get(i).copied().flatten(),
            d => Some(b.const_index(d)),
        })
        .collect()
}

/// Per dim of `v`, the size value the op that made it was given, if any.
fn given_sizes(m: &Module, v: ValueId) -> Vec<Option<ValueId>> {
    let dynamic = m.value_type(v).shape().is_some_and(|s| s.contains(&DYN));
    if !dynamic {
        return Vec::new();
    }
    ir::analysis::view_layout::layout_of(m, v)
        .map(|l| l.sizes.iter().map(|s| s.as_value()).collect())
        .unwrap_or_default()
}

/// Lowers one op of a tensor function at `b` (which must not sit inside
/// `op`); true if `op` is now dead and must be erased by the caller.
pub fn lower_one(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<bool> {
    let m = &*b.m;
    if cx.absorbed[op] {
        return Ok(true);
    }
    let dialect = m.name(op).dialect();
    if dialect == "onnx" || dialect == "onnx_ml" || dialect == "ms" {
        if let Some((user, chain)) = kernels::deferrable(cx, m, op) {
            cx.defer(op, user, chain);
            return Ok(true);
        }
        let results = kernels::lower_op(cx, b, op)?;
        for (&r, &new) in b.m.results(op).to_vec().iter().zip(&results) {
            cx.bind(r, new);
        }
        return Ok(true);
    }
    if m.regions(op).is_empty() && m.operands(op).iter().all(|&v| !m.value_type(v).is_shaped()) {
        return Ok(false);
    }
    Err(op_error(
        m,
        op,
        "cannot bufferize this op inside a tensor function",
    ))
}

/// Lowers the ops of `src` (a region block of an onnx op) at the end of
/// `dst`; returns the memrefs its `onnx.Yield` yields.
pub fn lower_region_block(
    cx: &mut Lowering,
    m: &mut Module,
    src: ir::BlockId,
    dst: ir::BlockId,
) -> Result<Vec<ValueId>> {
    let ops: Vec<OpId> = m.block_ops(src).collect();
    for op in ops {
        if onnx::is(m, op, OpKind::Yield) {
            return (0..m.operands(op).len())
                .map(|i| cx.input(m, op, i))
                .collect();
        }
        let loc = m.loc(op).clone();
        let mut b = Builder::at_end(m, dst).with_loc(loc);
        lower_one(cx, &mut b, op)?;
    }
    Err(Diagnostic::error(
        "a subgraph body does not end with onnx.Yield",
    ))
}

/// The vector width kernels assume when no target says otherwise (AVX2).
pub const DEFAULT_VECTOR_BITS: u32 = 256;

/// What the kernels are written for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct KernelTarget {
    /// Width of the vector registers: 128, 256 or 512.
    pub vector_bits: u32,
    /// `x86vector.vpdpbusd` exists at that width.
    pub int8_dot: bool,
    /// The GEMM functions come in one variant per x86-64 level, chosen
    /// at run time (`gemm::Isa::X86Levels`); other kernels keep
    /// `vector_bits`.
    pub x86_levels: bool,
}

/// Bufferizes every function of the module.
pub fn bufferize_module(m: &mut Module) -> Result<()> {
    let target = KernelTarget {
        vector_bits: DEFAULT_VECTOR_BITS,
        int8_dot: false,
        x86_levels: false,
    };
    bufferize_module_for(m, target)
}

/// [`bufferize_module`] with kernels for `target`.
pub fn bufferize_module_for(m: &mut Module, target: KernelTarget) -> Result<()> {
    let funcs = m.top_level_ops(FuncOp::Func);
    let mut cx = Lowering {
        map: SecondaryMap::default(),
        holders: SecondaryMap::default(),
        pos: SecondaryMap::default(),
        global_ip: funcs.first().copied(),
        next_global: 0,
        verified: RefCell::default(),
        vector_bits: target.vector_bits,
        int8_dot: target.int8_dot,
        gemm: match target.x86_levels {
            true => crate::kernels::linalg::gemm::Isa::X86Levels,
            false => crate::kernels::linalg::gemm::Isa::Fixed(target.vector_bits),
        },
        absorbed: SecondaryMap::default(),
        ew_body: crate::kernels::ew_body,
        deferred: SecondaryMap::default(),
    };
    for f in funcs {
        bufferize_function(m, &mut cx, f)?;
    }
    Ok(())
}

fn bufferize_function(m: &mut Module, cx: &mut Lowering, f: OpId) -> Result<()> {
    let Some(entry) = m.region(f, 0).and_then(|r| m.entry_block(r)) else {
        return Ok(());
    };
    // Arguments: the caller's buffers, used in place.
    for &a in &m.block_args(entry).to_vec() {
        let ty = memref_type(m, f, m.value_type(a))?;
        m.set_value_type(a, ty);
        cx.bind(a, a);
    }
    // Program order of every op, nested ones included (in-place analysis).
    let mut order = Vec::new();
    m.walk_pre(f, &mut |_, o| order.push(o));
    cx.pos.clear();
    for (i, &o) in order.iter().enumerate() {
        cx.pos[o] = Some(i);
    }
    let mut converted = Vec::new();
    let ops: Vec<OpId> = m.block_ops(entry).collect();
    for op in ops {
        ir::cancel::check()?;
        if m.is(op, FuncOp::Return) {
            // Results are fresh buffers the caller owns: never a view.
            for i in 0..m.operands(op).len() {
                let v = cx.input(m, op, i)?;
                let v = contiguous(&mut Builder::new(m, InsertPoint::Before(op)), v);
                m.set_operand(op, i, v);
            }
            continue;
        }
        let loc = m.loc(op).clone();
        let mut b = Builder::new(m, InsertPoint::Before(op)).with_loc(loc);
        if lower_one(cx, &mut b, op)? {
            converted.push(op);
        }
    }
    for op in converted.into_iter().rev() {
        let live: Vec<ValueId> = m
            .results(op)
            .iter()
            .copied()
            .filter(|&r| m.has_uses(r))
            .collect();
        if !live.is_empty() {
            return Err(op_error(m, op, "result still used after bufferization"));
        }
        m.erase_op(op);
    }
    if !ir::dialects::func::refresh_signature(m, f) {
        return Err(Diagnostic::error(
            "function body does not end with func.return",
        ));
    }
    Ok(())
}
