//! `multiversion`: the portable build's kernels in a variant per x86-64
//! level. Every private function without results that holds a loop or
//! vector code (an outlined kernel, a parallel loop's body; LLVM
//! vectorizes scalar loops for the CPU it builds for) and is not already
//! built for one CPU (`func::TARGET_CPU`)
//! keeps its body as `NAME_v2` and gets copies `NAME_v3` and `NAME_v4`
//! compiled for x86-64-v3 and v4; `NAME` itself becomes a dispatcher
//! calling the one the running CPU has (`func::CPU_LEVEL_FN`, read once).
//!
//! The vector code is written once, for the module's vector width: at
//! v4 the same 256-bit operations get AVX-512's masked loads and stores
//! (which SSE lacks: there each masked lane is a branch), three-operand
//! forms and FMA; the GEMM family is written per level by bufferize
//! (`x86-levels`), since its register tiles depend on the register file.

use ir::dialects::func;
use ir::pass::{Pass, PassContext, PassInfo};
use ir::{Attribute, Builder, InsertPoint, Module, OpId, Result};
use ir::{CoreOp, FuncOp, ScfOp};

pub struct Multiversion;

impl Pass for Multiversion {
    fn name(&self) -> &'static str {
        "multiversion"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let n = multiversion(m);
        cx.bump("multiversion.functions", n as u64);
        Ok(())
    }
}

pub fn pass_info() -> PassInfo {
    PassInfo {
        name: "multiversion",
        summary: "private vector functions in a variant per x86-64 level, chosen at run time",
        create: |_| Ok(Box::new(Multiversion)),
    }
}

/// Multiversions every eligible function; returns how many.
pub fn multiversion(m: &mut Module) -> usize {
    let funcs: Vec<OpId> = m.block_ops(m.body()).filter(|&f| eligible(m, f)).collect();
    let mut copies = Vec::new();
    for &f in &funcs {
        copies.extend(versions(m, f));
    }
    for (copy, level) in copies {
        call_variants_directly(m, copy, level);
    }
    funcs.len()
}

/// In a copy for `level`, a call of a function that has a variant for the
/// same level (`NAME_vL`: a GEMM or another copied kernel) calls it
/// directly: no dispatch, and LLVM may inline a callee built for the
/// caller's CPU. A parallel loop's call stays: its trampoline belongs to
/// the dispatcher.
fn call_variants_directly(m: &mut Module, copy: OpId, level: i64) {
    for op in m.collect_ops(copy) {
        if !m.is(op, FuncOp::Call) || m.attr(op, ir::dialects::scf::PARALLEL).is_some() {
            continue;
        }
        let Some(callee) = m.attr(op, "callee").and_then(Attribute::as_symbol) else {
            continue;
        };
        let direct = func::level_variant(callee, level);
        if m.lookup_symbol(&direct).is_some() {
            m.set_attr(op, "callee", Attribute::symbol(&direct));
        }
    }
}

fn eligible(m: &Module, f: OpId) -> bool {
    m.is(f, FuncOp::Func)
        && !func::is_declaration(m, f)
        && m.attr(f, "sym_visibility").and_then(Attribute::as_str) == Some("private")
        && m.attr(f, func::TARGET_CPU).is_none()
        // A vector argument would be passed in SSE registers by the
        // dispatcher and read from AVX ones by the variant.
        && func::function_type(m, f).is_some_and(|t| {
            t.results.is_empty() && !t.inputs.iter().any(|t| t.as_vector().is_some())
        })
        && m.collect_ops(f).iter().any(|&op| {
            matches!(
                CoreOp::of(m, op),
                Some(CoreOp::Vector(_) | CoreOp::Scf(ScfOp::For))
            )
        })
}

/// `f`'s body to `NAME_v2`, copies for the levels, `f` the dispatcher;
/// returns the copies and their levels.
fn versions(m: &mut Module, f: OpId) -> Vec<(OpId, i64)> {
    let Some(name) = func::sym_name(m, f).map(str::to_string) else {
        return Vec::new();
    };
    let mut variants = Vec::new();
    let mut copies = Vec::new();
    // The baseline's copy keeps the module's CPU.
    let Some((baseline, wider)) = func::X86_LEVELS.split_last() else {
        return copies;
    };
    for l in wider.iter().chain([baseline]) {
        let vname = func::level_variant(&name, l.level);
        let copy = copy_as(m, f, &vname);
        if l != baseline {
            m.set_attr(copy, func::TARGET_CPU, Attribute::string(l.cpu));
        }
        variants.push((l.level, vname));
        copies.push((copy, l.level));
    }
    let Some(entry) = m.region(f, 0).and_then(|r| m.entry_block(r)) else {
        return copies;
    };
    let ops: Vec<OpId> = m.block_ops(entry).collect();
    for op in ops.into_iter().rev() {
        m.erase_op(op);
    }
    let args = m.block_args(entry).to_vec();
    let mut b = Builder::at_end(m, entry);
    b.call_for_cpu_level(&variants, &args);
    b.ret(&[]);
    // The dispatcher is a few instructions: callers may inline it.
    m.remove_attr(f, crate::outline::KERNEL_ATTR);
    copies
}

/// A copy of `f` named `name`, after it; a parallel loop's trampoline
/// calls only the dispatcher.
fn copy_as(m: &mut Module, f: OpId, name: &str) -> OpId {
    let copy = m.clone_op(f, InsertPoint::After(f), &mut Default::default());
    m.set_attr(copy, "sym_name", Attribute::string(name));
    m.remove_attr(copy, crate::parallel::BODY_ATTR);
    copy
}
