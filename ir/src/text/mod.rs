//! The MLIR text format: printer and parser, round-trip exact.
//!
//! Registered ops print in the pretty form mlir-opt 19 uses (`forms`),
//! everything else in the generic form `"d.op"(%a) ({...}) {attrs} : (T) -> U`.
//! What is printed parses back to the same module, and memref-level IR is
//! accepted by upstream `mlir-opt` unchanged.

mod dense;
mod format;
mod forms;
mod lexer;
mod parse_attr;
mod parse_type;
mod parser;
mod printer;
mod region;
mod scope;
#[cfg(test)]
mod tests;

use crate::diag::Diagnostic;
use crate::module::{Module, OpId};

/// How to print.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PrintOptions {
    /// Print `loc(...)` after every op.
    pub debug_info: bool,
    /// Print every op in the generic form.
    pub generic: bool,
}

/// The whole module as `module {...}`, ending with a newline.
pub fn print_module(m: &Module, opts: &PrintOptions) -> String {
    let mut p = printer::Printer::new(m, opts.generic, opts.debug_info);
    p.number(m.top());
    p.op(m.top());
    p.out.push('\n');
    p.out
}

/// One op with its regions, named as in `print_module` of its module (values
/// defined outside it keep their names). No trailing newline.
pub fn print_op(m: &Module, op: OpId, opts: &PrintOptions) -> String {
    let mut p = printer::Printer::new(m, opts.generic, opts.debug_info);
    p.number(printer::root_of(m, op));
    p.op(op);
    p.out
}

/// Parses a file; a top level `module {...}` becomes the module itself,
/// a bare list of ops its body. Errors carry `file:line:col`.
pub fn parse_module(src: &str, file_name: &str) -> Result<Module, Diagnostic> {
    parser::Parser::new(src, file_name)
        .parse_file()
        .map_err(|e| *e)
}
