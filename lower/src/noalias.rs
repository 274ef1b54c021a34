//! `mark-noalias`: memref arguments of private functions get MLIR's
//! `llvm.noalias` argument attribute when, at every call site in the
//! module, the buffer passed is provably distinct from the buffers passed
//! in the function's other memref arguments. The LLVM emitter turns it
//! into a `noalias` aligned pointer (see `llvm::control`), so LLVM
//! vectorizes the kernels without runtime alias checks.
//!
//! A buffer is traced through view ops (the `VIEW` trait) to
//! its root: an allocation in the caller (distinct from every other
//! allocation and from anything that existed before it), a constant
//! global (distinct from other globals and allocations; only read), an
//! argument of the calling function, or unknown. Two arguments of the
//! caller are distinct only if the caller's own flags say so for both
//! (kernels calling GEMM helpers); anything unknown may alias.

use ir::dialects::func;
use ir::pass::{Pass, PassContext, PassInfo};
use ir::registry::Traits;
use ir::{Attribute, Module, OpId, Result, Sym, ValueDef, ValueId};
use ir::{FuncOp, MemrefOp};
use std::collections::HashMap;

/// The argument attribute (MLIR's LLVM dialect spelling).
pub const NOALIAS: &str = "llvm.noalias";

pub struct MarkNoalias;

impl Pass for MarkNoalias {
    fn name(&self) -> &'static str {
        "mark-noalias"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        cx.bump("mark-noalias.arguments", mark_noalias(m) as u64);
        Ok(())
    }
}

pub fn pass_info() -> PassInfo {
    PassInfo {
        name: "mark-noalias",
        summary: "llvm.noalias on memref arguments of private functions that are distinct buffers at every call",
        create: |_| Ok(Box::new(MarkNoalias)),
    }
}

#[derive(Clone, PartialEq, Eq)]
enum Root {
    Alloc(OpId),
    ConstGlobal(String),
    /// Argument `i` of the calling function.
    Param(usize),
    Unknown,
}

fn root(m: &Module, mut v: ValueId) -> Root {
    loop {
        let Some(d) = m.defining_op(v) else {
            let ValueDef::BlockArg(b, i) = m.value_def(v) else {
                return Root::Unknown;
            };
            let is_entry = m
                .block_parent_op(b)
                .filter(|&f| m.is(f, FuncOp::Func))
                .and_then(|f| m.region(f, 0))
                .and_then(|r| m.entry_block(r))
                == Some(b);
            return if is_entry {
                Root::Param(i as usize)
            } else {
                Root::Unknown
            };
        };
        if m.has_trait(d, Traits::ALLOCATES) {
            return Root::Alloc(d);
        }
        if m.has_trait(d, Traits::VIEW) {
            match m.operand(d, 0) {
                Some(src) => v = src,
                None => return Root::Unknown,
            }
            continue;
        }
        if !m.is(d, MemrefOp::GetGlobal) {
            return Root::Unknown;
        }
        let name = m.attr(d, "name").and_then(Attribute::as_symbol);
        let constant = name
            .and_then(|n| m.lookup_symbol(n))
            .is_some_and(|g| m.attr(g, "constant").is_some());
        return match name {
            Some(n) if constant => Root::ConstGlobal(n.to_string()),
            _ => Root::Unknown,
        };
    }
}

/// True if the buffers are provably distinct; `params[i]`: the caller's
/// argument `i` is itself a distinct buffer at every call of the caller.
fn distinct(a: &Root, b: &Root, params: &[bool]) -> bool {
    use Root::*;
    let marked = |i: &usize| params.get(*i).copied().unwrap_or(false);
    match (a, b) {
        (Alloc(x), Alloc(y)) => x != y,
        (ConstGlobal(x), ConstGlobal(y)) => x != y,
        (Param(i), Param(j)) => i != j && marked(i) && marked(j),
        // A fresh allocation is none of the buffers that existed before;
        // a constant global is only read (and the module's own).
        (Alloc(_), ConstGlobal(_) | Param(_)) | (ConstGlobal(_) | Param(_), Alloc(_)) => true,
        (ConstGlobal(_), Param(_)) | (Param(_), ConstGlobal(_)) => true,
        _ => false,
    }
}

/// One call of a private function.
struct Site {
    callee: String,
    caller: Option<String>,
    roots: Vec<Root>,
    /// Which arguments are memrefs.
    memref: Vec<bool>,
}

/// Marks the arguments; returns how many.
pub fn mark_noalias(m: &mut Module) -> usize {
    // Per private function: per argument, distinct at every call. Flags
    // only go from true to false, and a caller's flags decide its callees'
    // (through `Param` roots), so iterate to the fixpoint.
    let mut flags: HashMap<String, Vec<bool>> = HashMap::new();
    for f in m.top_level_ops(FuncOp::Func) {
        let private = m.attr(f, "sym_visibility").and_then(Attribute::as_str) == Some("private");
        // Existing argument attributes are left alone.
        if !private || func::is_declaration(m, f) || m.attr(f, "arg_attrs").is_some() {
            continue;
        }
        let (Some(name), Some(fty)) = (func::sym_name(m, f), func::function_type(m, f)) else {
            continue;
        };
        let memrefs = fty.inputs.iter().map(|t| t.as_memref().is_some()).collect();
        flags.insert(name.to_string(), memrefs);
    }
    let mut sites: Vec<Site> = Vec::new();
    for op in m.collect_ops(m.top()) {
        let Some(callee) = m
            .attr(op, "callee")
            .and_then(Attribute::as_symbol)
            .filter(|c| m.is(op, FuncOp::Call) && flags.contains_key(*c))
        else {
            continue;
        };
        let mut caller = op;
        while let Some(p) = m.parent_op(caller) {
            caller = p;
            if m.is(p, FuncOp::Func) {
                break;
            }
        }
        let caller = func::sym_name(m, caller).map(str::to_string);
        let args = m.operands(op);
        let roots = args.iter().map(|&v| root(m, v)).collect();
        let memref = args
            .iter()
            .map(|&v| m.value_type(v).as_memref().is_some())
            .collect();
        sites.push(Site {
            callee: callee.to_string(),
            caller,
            roots,
            memref,
        });
    }
    loop {
        let mut changed = false;
        for Site {
            callee,
            caller,
            roots,
            memref,
        } in &sites
        {
            let params = caller
                .as_ref()
                .and_then(|c| flags.get(c))
                .cloned()
                .unwrap_or_default();
            let Some(f) = flags.get_mut(callee) else {
                continue;
            };
            for (i, flag) in f.iter_mut().enumerate() {
                let ok = roots.get(i).is_some_and(|ri| {
                    *ri != Root::Unknown
                        && roots
                            .iter()
                            .zip(memref)
                            .enumerate()
                            .all(|(j, (rj, &is_memref))| {
                                j == i || !is_memref || distinct(ri, rj, &params)
                            })
                });
                if *flag && !ok {
                    *flag = false;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    let called: std::collections::HashSet<&str> = sites.iter().map(|s| s.callee.as_str()).collect();
    let mut marked = 0;
    for f in m.top_level_ops(FuncOp::Func) {
        let Some(name) = func::sym_name(m, f).map(str::to_string) else {
            continue;
        };
        let (Some(fl), true) = (flags.get(&name), called.contains(name.as_str())) else {
            continue;
        };
        if !fl.iter().any(|&b| b) {
            continue;
        }
        let dicts: Vec<Attribute> = fl
            .iter()
            .map(|&b| {
                let entries: Vec<(Sym, Attribute)> = if b {
                    vec![(Sym::new(NOALIAS), Attribute::Unit)]
                } else {
                    Vec::new()
                };
                Attribute::Dict(entries.into())
            })
            .collect();
        marked += fl.iter().filter(|&&b| b).count();
        m.set_attr(f, "arg_attrs", Attribute::Array(dicts.into()));
    }
    marked
}

/// Indices of the arguments of `f` marked `llvm.noalias`.
pub fn noalias_args(m: &Module, f: OpId) -> Vec<usize> {
    let Some(items) = m.attr(f, "arg_attrs").and_then(Attribute::as_array) else {
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .filter(|(_, d)| match d {
            Attribute::Dict(e) => e.iter().any(|(k, _)| k.as_str() == NOALIAS),
            _ => false,
        })
        .map(|(i, _)| i)
        .collect()
}
