//! `symbol-dce`: private `memref.global`s that no op references are
//! erased. A kernel that computes its own form of a constant (Winograd's
//! transformed weights) leaves the original unreferenced, and the LLVM
//! emitter would otherwise still write it out.

use crate::diag::Result;
use crate::module::Module;
use crate::ops::MemrefOp;
use crate::pass::{Pass, PassContext, PassInfo};
use std::collections::HashSet;

pub struct SymbolDce;

impl Pass for SymbolDce {
    fn name(&self) -> &'static str {
        "symbol-dce"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        cx.bump("symbol-dce.erased", symbol_dce(m) as u64);
        Ok(())
    }
}

pub fn pass_info() -> PassInfo {
    PassInfo {
        name: "symbol-dce",
        summary: "erase private memref.globals nothing references",
        create: |_| Ok(Box::new(SymbolDce)),
    }
}

/// Erases the unreferenced private globals; returns how many.
pub fn symbol_dce(m: &mut Module) -> usize {
    let top = m.top();
    let used: HashSet<String> = m
        .collect_ops(top)
        .into_iter()
        .flat_map(|op| m.attrs(op).iter())
        .filter_map(|(_, a)| a.as_symbol())
        .map(str::to_string)
        .collect();
    let dead: Vec<_> = m
        .top_level_ops(MemrefOp::Global)
        .into_iter()
        .filter(|&g| {
            let private = m.attr(g, "sym_visibility").and_then(|a| a.as_str()) == Some("private");
            let name = m.attr(g, "sym_name").and_then(|a| a.as_str());
            private && name.is_some_and(|n| !used.contains(n))
        })
        .collect();
    for &g in &dead {
        m.erase_op(g);
    }
    dead.len()
}
