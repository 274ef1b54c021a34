//! Textual LLVM IR from a module whose functions use only func, arith, math,
//! memref and cf ops (run `convert-scf-to-cf` first). Anything else is a
//! diagnostic naming the op.
//!
//! Naming: values are named after their ids (`%v12`), IR blocks after theirs
//! (`bb3`); helper instructions use `%t<N>` and helper blocks `L<N>`, both
//! counted per function, so the same module always gives the same text.
//! Blocks are emitted in reverse post-order, which puts every definition
//! before its uses (unreachable blocks are dropped); block arguments become
//! phi nodes, and a `cf.cond_br` whose two edges reach the same block routes
//! one of them through a block of its own.
//!
//! ABI (internal, not C): `index` is `i64`; a memref is MLIR's descriptor
//! `{ ptr allocated, ptr aligned, i64 offset, [N x i64] sizes, [N x i64]
//! strides }` (rank 0: `{ ptr, ptr, i64 }`) passed and returned by value;
//! several results come back as one literal struct. A memref argument of a
//! private function marked `llvm.noalias` (see `crate::noalias`) also
//! passes its aligned pointer as a trailing `ptr noalias` parameter, which
//! the callee puts back into the descriptor; outlined kernels are
//! `noinline`. `func.func @main` of
//! type `() -> ()` becomes `i32 @main()` returning 0. Private functions are
//! `internal`; bodiless ones are `declare`d, except MLIR's runner-utils print
//! helpers (`printI64`, `printF64`, ...), which get `linkonce_odr`
//! definitions over `printf`.
//!
//! Memory: heap buffers come from `aligned_alloc(max(64, alignment), size
//! rounded up to that alignment)` with allocated == aligned, through a
//! library-wide cache of large freed blocks (`alloc_cache`), and are released
//! to it; their sizes are overflow-checked and a failed allocation is the
//! out-of-memory exit of `memref::guarded` (a -1 return in a library, whose
//! C wrapper frees what the call held: `alloc_track`); `memref.alloca` is
//! an `alloca` where the op is (no stack save/restore: keep dynamic allocas
//! out of loops).
//!
//! Numbers: f16 arithmetic is native LLVM `half`; bf16 arithmetic and math
//! run in f32 and are rounded back with integer code (no `__truncsfbf2`
//! needed); f64 → bf16 rounds twice (via f32). The 8- and 4-bit float
//! formats are `i8` codes converted with integer code (`minifloat`);
//! their arithmetic runs in f32. Integers narrower than a byte take a
//! byte in memory (`types::storage`).

mod alloc_cache;
mod alloc_track;
mod arith;
mod control;
mod cpu;
mod globals;
mod math;
mod memref;
mod minifloat;
mod parallel;
mod parts;
mod runtime;
pub(crate) mod types;
mod vector;
mod views;

use ir::dialects::op_error;
use ir::entity::{EntityRef, EntitySet, SecondaryMap};
use ir::{BlockId, Diagnostic, Module, OpId, RegionId, Result, Type, ValueId};
use ir::{CoreOp, FuncOp, MemrefOp, X86VectorOp};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;

/// What the emitted module targets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EmitOptions {
    /// `target triple = "..."`; none lets clang pick the host.
    pub target_triple: Option<String>,
}

pub use globals::{
    WeightLayout, WeightSink, CODE_MODEL_ARGS, LARGE_WEIGHTS, WEIGHTS_SECTION, WEIGHTS_SYM,
};

/// Emits the whole module as LLVM IR text.
pub fn emit_module(m: &Module, opts: &EmitOptions) -> Result<String> {
    emit_module_with(m, opts, None)
}

/// Emits the module, moving large constant globals to `weights` when given
/// (see [`WeightSink`]).
pub fn emit_module_with(
    m: &Module,
    opts: &EmitOptions,
    weights: Option<&mut WeightSink<'_>>,
) -> Result<String> {
    let (map, text) = match weights {
        Some(sink) => globals::write_sidecar(m, sink)?,
        None => Default::default(),
    };
    emit_with_sidecar(m, opts, map, &text)
}

/// Emits the module with its large constant globals in a weights blob
/// defined elsewhere (`@__onnxc_weights`, hidden); the caller writes the
/// blob from the returned layout (e.g. as an object, see `crate::elf`).
pub fn emit_module_extern_weights(
    m: &Module,
    opts: &EmitOptions,
) -> Result<(String, WeightLayout)> {
    let (map, layout) = globals::plan_weights(m);
    let text = globals::weights_decl(&layout, None);
    Ok((emit_with_sidecar(m, opts, map, &text)?, layout))
}

fn emit_with_sidecar(
    m: &Module,
    opts: &EmitOptions,
    sidecar: globals::SidecarMap,
    sidecar_text: &str,
) -> Result<String> {
    Ok(emit_items(m, opts, sidecar, sidecar_text)?.render())
}

/// Like [`emit_module_extern_weights`], as up to `max_parts` modules of at
/// least `min_part_bytes` of function text each, to be compiled separately
/// and linked together (see `parts`).
pub fn emit_module_parts(
    m: &Module,
    opts: &EmitOptions,
    max_parts: usize,
    min_part_bytes: usize,
) -> Result<(Vec<String>, WeightLayout)> {
    let (map, layout) = globals::plan_weights(m);
    let text = globals::weights_decl(&layout, None);
    let e = emit_items(m, opts, map, &text)?;
    Ok((e.render_parts(max_parts, min_part_bytes), layout))
}

fn emit_items(
    m: &Module,
    opts: &EmitOptions,
    sidecar: globals::SidecarMap,
    sidecar_text: &str,
) -> Result<parts::Emitted> {
    let mut mcx = ModuleCx {
        sidecar,
        ..ModuleCx::default()
    };
    for op in m.block_ops(m.body()) {
        if m.is(op, FuncOp::Func) {
            if let Some(name) = ir::dialects::func::sym_name(m, op) {
                mcx.user_syms.insert(name.to_string());
                let memref_args: Vec<usize> = crate::noalias::noalias_args(m, op)
                    .into_iter()
                    .filter(|&i| {
                        ir::dialects::func::function_type(m, op)
                            .and_then(|t| t.inputs.get(i))
                            .is_some_and(|t| t.as_memref().is_some())
                    })
                    .collect();
                // Only internal functions: public signatures stay as declared.
                let private =
                    m.attr(op, "sym_visibility").and_then(ir::Attribute::as_str) == Some("private");
                if private && !memref_args.is_empty() && !ir::dialects::func::is_declaration(m, op)
                {
                    mcx.noalias.insert(name.to_string(), memref_args);
                }
            }
        }
    }
    let mut e = parts::Emitted::default();
    for op in m.block_ops(m.body()) {
        ir::cancel::check()?;
        match CoreOp::of(m, op) {
            Some(CoreOp::Func(FuncOp::Func)) => {
                e.funcs.extend(control::emit_func(m, op, &mut mcx)?);
                if m.attr(op, crate::parallel::BODY_ATTR).is_some() {
                    e.funcs.push(parallel::trampoline(m, op, &mut mcx)?);
                }
            }
            Some(CoreOp::Memref(MemrefOp::Global)) => {
                e.globals.extend(globals::emit_global(m, op, &mcx.sidecar)?)
            }
            _ => {
                return Err(op_error(
                    m,
                    op,
                    "is not supported at module level by the LLVM IR emitter",
                ));
            }
        }
    }
    let out = &mut e.header;
    out.push_str("; generated by onnxc\nsource_filename = \"onnxc\"\n");
    if let Some(t) = &opts.target_triple {
        let _ = writeln!(
            out,
            "target triple = \"{}\"",
            types::escape_bytes(t.as_bytes())
        );
    }
    out.push('\n');
    if !sidecar_text.is_empty() {
        out.push_str(sidecar_text);
        out.push('\n');
    }
    for s in &mcx.strings {
        e.shared.push_str(s);
        e.shared.push('\n');
    }
    if !e.globals.is_empty() || !mcx.strings.is_empty() {
        e.shared.push('\n');
    }
    let out = &mut e.trailer;
    for h in &mcx.helpers {
        out.push_str(h);
        out.push('\n');
    }
    for d in mcx.decls.values() {
        out.push_str(d);
        out.push('\n');
    }
    if !mcx.metadata.is_empty() {
        out.push('\n');
        for (i, md) in mcx.metadata.iter().enumerate() {
            let _ = writeln!(out, "!{i} = {md}");
        }
    }
    Ok(e)
}

/// Module-wide state: declarations the functions need, string constants and
/// helper definitions.
#[derive(Default)]
pub(crate) struct ModuleCx {
    /// Functions the module itself declares or defines.
    user_syms: BTreeSet<String>,
    decls: BTreeMap<String, String>,
    strings: Vec<String>,
    string_names: HashMap<Vec<u8>, String>,
    helpers: Vec<String>,
    /// Globals whose bytes live in the weights sidecar.
    pub(crate) sidecar: globals::SidecarMap,
    /// Metadata nodes, `!0`, `!1`, ... in order.
    metadata: Vec<String>,
    /// The thread-count helper of `parallel` is defined.
    team_helper: bool,
    /// The heap block cache's helpers are defined (`alloc_cache`).
    alloc_cache: bool,
    /// Per defined function: its `llvm.noalias` memref arguments.
    pub(crate) noalias: HashMap<String, Vec<usize>>,
    /// The spelling of each IR value of the function being emitted.
    /// Module-wide so that a function does not pay for a table over all
    /// ids; each function clears the entries it set.
    names: SecondaryMap<ValueId, Option<String>>,
    /// Per target block of the function being emitted: (predecessor
    /// label, argument values) per edge; taken when its phis are written.
    incoming: SecondaryMap<BlockId, Vec<(String, Vec<String>)>>,
}

impl ModuleCx {
    /// Declares an external symbol once, unless the module declares it.
    pub(crate) fn declare(&mut self, sym: &str, decl: &str) {
        if !self.user_syms.contains(sym) {
            self.decls
                .entry(sym.to_string())
                .or_insert_with(|| decl.to_string());
        }
    }
    /// A fresh loop id asking LLVM to vectorize (one per loop, as LLVM
    /// requires distinct loop ids); returns `!N`.
    pub(crate) fn loop_vectorize_md(&mut self) -> String {
        if self.metadata.is_empty() {
            // Vectorize without interleaving: inner loops are short tiles,
            // and a wide interleaved body would leave them to the scalar
            // epilogue.
            self.metadata
                .push("!{!\"llvm.loop.vectorize.enable\", i1 true}".to_string());
            self.metadata
                .push("!{!\"llvm.loop.interleave.count\", i32 1}".to_string());
        }
        let id = self.metadata.len();
        self.metadata.push(format!("distinct !{{!{id}, !0, !1}}"));
        format!("!{id}")
    }
    /// A private NUL-terminated string constant; returns its `@name`.
    pub(crate) fn string(&mut self, bytes: &[u8]) -> String {
        if let Some(n) = self.string_names.get(bytes) {
            return n.clone();
        }
        let name = format!("@.str.{}", self.strings.len());
        self.strings.push(format!(
            "{name} = private unnamed_addr constant [{} x i8] c\"{}\\00\", align 1",
            bytes.len() + 1,
            types::escape_bytes(bytes)
        ));
        self.string_names.insert(bytes.to_vec(), name.clone());
        name
    }
}

/// One LLVM basic block being built.
struct LBlock {
    label: String,
    /// The IR block whose arguments become this block's phis.
    phis_of: Option<BlockId>,
    lines: Vec<String>,
}

/// Per-function emission state.
pub(crate) struct FnCx<'a> {
    pub(crate) m: &'a Module,
    pub(crate) mcx: &'a mut ModuleCx,
    /// The values named in `mcx.names` by this function.
    named: Vec<ValueId>,
    ntmp: u32,
    nlabel: u32,
    done: Vec<LBlock>,
    cur: Option<LBlock>,
    /// `main` declared `() -> ()`, emitted as `i32 @main()` returning 0.
    pub(crate) main_void: bool,
    /// Lines at the top of the entry block.
    pub(crate) prologue: Vec<String>,
}

impl<'a> FnCx<'a> {
    fn new(m: &'a Module, mcx: &'a mut ModuleCx, main_void: bool) -> Self {
        FnCx {
            m,
            mcx,
            named: Vec::new(),
            ntmp: 0,
            nlabel: 0,
            done: Vec::new(),
            cur: None,
            main_void,
            prologue: Vec::new(),
        }
    }

    /// The operand text of an IR value.
    pub(crate) fn val(&self, v: ValueId) -> Result<String> {
        self.mcx.names[v].clone().ok_or_else(|| {
            Diagnostic::error(format!(
                "value {v} is used before its definition was emitted"
            ))
        })
    }
    /// The LLVM type of an IR type, errors naming `op`.
    pub(crate) fn ty(&self, op: OpId, t: &Type) -> Result<String> {
        types::llvm_type(t).map_err(|e| op_error(self.m, op, e))
    }
    pub(crate) fn vty(&self, op: OpId, v: ValueId) -> Result<String> {
        self.ty(op, self.m.value_type(v))
    }
    /// `T %v` for an operand.
    pub(crate) fn tv(&self, op: OpId, v: ValueId) -> Result<String> {
        Ok(format!("{} {}", self.vty(op, v)?, self.val(v)?))
    }
    pub(crate) fn operand(&self, op: OpId, i: usize) -> Result<ValueId> {
        self.m
            .operand(op, i)
            .ok_or_else(|| op_error(self.m, op, format!("missing operand #{i}")))
    }
    pub(crate) fn result(&self, op: OpId, i: usize) -> Result<ValueId> {
        self.m
            .result(op, i)
            .ok_or_else(|| op_error(self.m, op, format!("missing result #{i}")))
    }

    pub(crate) fn tmp(&mut self) -> String {
        let t = format!("%t{}", self.ntmp);
        self.ntmp += 1;
        t
    }
    pub(crate) fn label(&mut self) -> String {
        let l = format!("L{}", self.nlabel);
        self.nlabel += 1;
        l
    }
    pub(crate) fn line(&mut self, s: impl Into<String>) {
        let s = s.into();
        match &mut self.cur {
            Some(b) => b.lines.push(s),
            None => {
                self.cur = Some(LBlock {
                    label: String::from("entry"),
                    phis_of: None,
                    lines: vec![s],
                })
            }
        }
    }
    /// Emits `%tN = rhs` and returns `%tN`.
    pub(crate) fn assign(&mut self, rhs: impl AsRef<str>) -> String {
        let t = self.tmp();
        self.line(format!("{t} = {}", rhs.as_ref()));
        t
    }
    /// Emits `%vN = rhs` for the IR value `v`.
    pub(crate) fn define(&mut self, v: ValueId, rhs: impl AsRef<str>) {
        let name = v.to_string();
        self.line(format!("{name} = {}", rhs.as_ref()));
        self.name(v, name);
    }
    /// `v` is spelled `text` (a literal or another value's name).
    pub(crate) fn alias(&mut self, v: ValueId, text: String) {
        self.name(v, text);
    }
    fn name(&mut self, v: ValueId, text: String) {
        self.mcx.names[v] = Some(text);
        self.named.push(v);
    }
    /// Ends the current LLVM block and starts one labelled `label`.
    pub(crate) fn start_block(&mut self, label: String) {
        self.start(label, None);
    }
    fn start(&mut self, label: String, phis_of: Option<BlockId>) {
        if let Some(b) = self.cur.take() {
            self.done.push(b);
        }
        self.cur = Some(LBlock {
            label,
            phis_of,
            lines: Vec::new(),
        });
    }
    pub(crate) fn cur_label(&self) -> String {
        self.cur
            .as_ref()
            .map_or_else(|| String::from("entry"), |b| b.label.clone())
    }
    /// Records an edge from the current LLVM block to IR block `target`
    /// carrying `args`; returns the label operand `%bbN`.
    pub(crate) fn edge(&mut self, target: BlockId, args: &[ValueId]) -> Result<String> {
        let texts = args
            .iter()
            .map(|&a| self.val(a))
            .collect::<Result<Vec<_>>>()?;
        let from = self.cur_label();
        self.mcx.incoming[target].push((from, texts));
        Ok(format!("%{}", block_label(target)))
    }

    fn emit_op(&mut self, op: OpId) -> Result<()> {
        let Some(which) = CoreOp::of(self.m, op) else {
            return Err(unsupported(self.m, op));
        };
        match which {
            CoreOp::Arith(a) => arith::emit(self, op, a),
            CoreOp::Math(a) => math::emit(self, op, a),
            CoreOp::Memref(a) => memref::emit(self, op, a),
            CoreOp::Vector(a) => vector::emit(self, op, a),
            CoreOp::X86Vector(X86VectorOp::Vpdpbusd) => vector::vpdpbusd(self, op),
            CoreOp::X86Vector(X86VectorOp::Pmaddwd) => vector::pmaddwd(self, op),
            CoreOp::Func(a) => control::emit_func_op(self, op, a),
            CoreOp::Cf(a) => control::emit_cf(self, op, a),
            CoreOp::Scf(_) => Err(unsupported(self.m, op).note("run convert-scf-to-cf first")),
            CoreOp::Bufferization(_) => {
                Err(unsupported(self.m, op).note("lower deallocations first"))
            }
            CoreOp::Builtin(_) => Err(unsupported(self.m, op)),
        }
    }

    /// Emits the blocks of a function body; returns the body text.
    fn emit_body(mut self, region: RegionId) -> Result<String> {
        let m = self.m;
        for &b in m.region_blocks(region) {
            for &a in m.block_args(b) {
                self.name(a, a.to_string());
            }
        }
        let order = reverse_post_order(m, region);
        let Some(&entry) = order.first() else {
            return Ok(String::new());
        };
        for &b in &order {
            self.start(block_label(b), (b != entry).then_some(b));
            for op in m.block_ops(b) {
                ir::cancel::check()?;
                self.emit_op(op)?;
            }
            if !m.last_op(b).is_some_and(|t| m.is_terminator(t)) {
                return Err(Diagnostic::error(format!(
                    "block {} does not end with a terminator",
                    block_label(b)
                )));
            }
        }
        if !self.mcx.incoming[entry].is_empty() {
            return Err(Diagnostic::error(
                "the entry block of a function may not have predecessors",
            ));
        }
        if let Some(b) = self.cur.take() {
            self.done.push(b);
        }
        let mut out = String::new();
        let done = std::mem::take(&mut self.done);
        for (i, blk) in done.iter().enumerate() {
            let _ = writeln!(out, "{}:", blk.label);
            if i == 0 {
                for l in &self.prologue {
                    let _ = writeln!(out, "  {l}");
                }
            }
            if let Some(b) = blk.phis_of {
                self.write_phis(&mut out, b)?;
            }
            for l in &blk.lines {
                let _ = writeln!(out, "  {l}");
            }
        }
        for v in std::mem::take(&mut self.named) {
            self.mcx.names[v] = None;
        }
        Ok(out)
    }

    /// The phis of block `b`, from the edges recorded into it (taken).
    fn write_phis(&mut self, out: &mut String, b: BlockId) -> Result<()> {
        let edges = std::mem::take(&mut self.mcx.incoming[b]);
        for (i, &a) in self.m.block_args(b).iter().enumerate() {
            let ty = types::llvm_type(self.m.value_type(a)).map_err(Diagnostic::error)?;
            let _ = write!(out, "  {a} = phi {ty} ");
            for (k, (pred, args)) in edges.iter().enumerate() {
                let v = args.get(i).ok_or_else(|| {
                    Diagnostic::error(format!(
                        "branch to {} has too few arguments",
                        block_label(b)
                    ))
                })?;
                let sep = if k > 0 { ", " } else { "" };
                let _ = write!(out, "{sep}[ {v}, %{pred} ]");
            }
            out.push('\n');
        }
        Ok(())
    }
}

pub(crate) fn block_label(b: BlockId) -> String {
    format!("bb{}", b.index())
}

/// The error for an op the emitter does not handle, with a hint.
pub(crate) fn unsupported(m: &Module, op: OpId) -> Diagnostic {
    let d = op_error(m, op, "is not supported by the LLVM IR emitter");
    if m.name(op).dialect() == "onnx" {
        return d.note("bufferize first");
    }
    d
}

/// Successors of a block (through its terminator).
fn successors(m: &Module, b: BlockId) -> Vec<BlockId> {
    m.last_op(b)
        .map(|t| m.successors(t).collect())
        .unwrap_or_default()
}

/// Blocks reachable from the entry, in reverse post-order (successors are
/// explored last-first so a branch's first target tends to follow it).
fn reverse_post_order(m: &Module, region: RegionId) -> Vec<BlockId> {
    let Some(entry) = m.entry_block(region) else {
        return Vec::new();
    };
    let mut seen = EntitySet::new();
    seen.insert(entry);
    let mut post = Vec::new();
    let mut stack = vec![(entry, successors(m, entry))];
    while let Some((b, succs)) = stack.last_mut() {
        match succs.pop() {
            Some(s) => {
                if seen.insert(s) {
                    let next = successors(m, s);
                    stack.push((s, next));
                }
            }
            None => {
                post.push(*b);
                stack.pop();
            }
        }
    }
    post.reverse();
    post
}
