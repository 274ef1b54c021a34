//! The printer core: SSA and block naming, the generic op form, regions.
//! Pretty forms live in `forms`; each checks its preconditions and the
//! printer falls back to the generic form when they do not hold, so any
//! module prints as text that parses back to the same module.

use crate::attr::{is_bare_identifier, write_escaped, Attribute};
use crate::diag::Location;
use crate::entity::SecondaryMap;
use crate::module::{BlockId, Module, OpId, RegionId, ValueId};
use crate::ops::{CfOp, CoreOp, ScfOp};
use crate::types::Type;
use std::borrow::Cow;
use std::fmt::Write;

#[derive(Clone, Copy, Debug)]
enum Name {
    /// `%argN`: an entry block argument.
    Arg(u32),
    /// `%N`, or `%N#k` for result `k` of a multi-result op.
    Num(u32, Option<u32>),
}

pub(crate) struct Printer<'m> {
    pub(crate) m: &'m Module,
    pub(crate) out: String,
    pub(crate) generic: bool,
    debug_info: bool,
    /// Indentation of the op being printed.
    indent: usize,
    names: SecondaryMap<ValueId, Option<Name>>,
    blocks: SecondaryMap<BlockId, Option<u32>>,
}

impl<'m> Printer<'m> {
    pub(crate) fn new(m: &'m Module, generic: bool, debug_info: bool) -> Printer<'m> {
        Printer {
            m,
            out: String::new(),
            generic,
            debug_info,
            indent: 0,
            names: SecondaryMap::default(),
            blocks: SecondaryMap::default(),
        }
    }

    /// Names every value and block under `root` the way MLIR does: each
    /// region starts from the counters its parent region ended with, so
    /// sibling regions reuse numbers; entry block arguments are `%argN`,
    /// other block arguments and results share the `%N` counter, and blocks
    /// are `^bbN` per region.
    pub(crate) fn number(&mut self, root: OpId) {
        let (mut nv, na) = (0u32, 0u32);
        self.number_results(root, &mut nv);
        let mut stack: Vec<(RegionId, u32, u32)> = self
            .m
            .regions(root)
            .iter()
            .rev()
            .map(|&r| (r, nv, na))
            .collect();
        while let Some((r, v0, a0)) = stack.pop() {
            let (mut nv, mut na) = (v0, a0);
            let blocks = self.m.region_blocks(r);
            for (bi, &b) in blocks.iter().enumerate() {
                self.blocks[b] = Some(bi as u32);
                for &a in self.m.block_args(b) {
                    self.names[a] = Some(if bi == 0 {
                        na += 1;
                        Name::Arg(na - 1)
                    } else {
                        nv += 1;
                        Name::Num(nv - 1, None)
                    });
                }
                for op in self.m.block_ops(b) {
                    self.number_results(op, &mut nv);
                }
            }
            let mut nested = Vec::new();
            for &b in blocks {
                for op in self.m.block_ops(b) {
                    nested.extend(self.m.regions(op).iter().map(|&r| (r, nv, na)));
                }
            }
            stack.extend(nested.into_iter().rev());
        }
    }

    fn number_results(&mut self, op: OpId, nv: &mut u32) {
        let results = self.m.results(op);
        if results.is_empty() {
            return;
        }
        let multi = results.len() > 1;
        for (k, &r) in results.iter().enumerate() {
            self.names[r] = Some(Name::Num(*nv, multi.then_some(k as u32)));
        }
        *nv += 1;
    }

    // ---- small writers ----

    pub(crate) fn w(&mut self, s: &str) {
        self.out.push_str(s);
    }
    pub(crate) fn wf(&mut self, args: std::fmt::Arguments<'_>) {
        let _ = self.out.write_fmt(args);
    }
    pub(crate) fn value(&mut self, v: ValueId) {
        match self.names[v] {
            Some(Name::Arg(n)) => self.wf(format_args!("%arg{n}")),
            Some(Name::Num(n, None)) => self.wf(format_args!("%{n}")),
            Some(Name::Num(n, Some(k))) => self.wf(format_args!("%{n}#{k}")),
            None => self.w("<<UNKNOWN SSA VALUE>>"),
        }
    }
    pub(crate) fn values(&mut self, vs: &[ValueId]) {
        for (i, &v) in vs.iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            self.value(v);
        }
    }
    pub(crate) fn ty(&mut self, t: &Type) {
        self.wf(format_args!("{t}"));
    }
    pub(crate) fn types<'t>(&mut self, ts: impl IntoIterator<Item = &'t Type>) {
        for (i, t) in ts.into_iter().enumerate() {
            if i > 0 {
                self.w(", ");
            }
            self.ty(t);
        }
    }
    pub(crate) fn value_types(&mut self, vs: &[ValueId]) {
        let m = self.m;
        self.types(vs.iter().map(|&v| m.value_type(v)));
    }
    /// `%a, %b : T, U` (nothing when empty).
    pub(crate) fn values_with_types(&mut self, vs: &[ValueId]) {
        if vs.is_empty() {
            return;
        }
        self.values(vs);
        self.w(" : ");
        self.value_types(vs);
    }
    pub(crate) fn attr(&mut self, a: &Attribute) {
        self.wf(format_args!("{a}"));
    }
    pub(crate) fn symbol(&mut self, s: &str) {
        let _ = crate::attr::write_symbol(&mut self.out, s);
    }
    pub(crate) fn string(&mut self, s: &str) {
        let _ = write_escaped(&mut self.out, s);
    }
    pub(crate) fn block_name(&mut self, b: BlockId) {
        match self.blocks[b] {
            Some(n) => self.wf(format_args!("^bb{n}")),
            None => self.w("^<<UNKNOWN BLOCK>>"),
        }
    }
    fn newline_indent(&mut self, n: usize) {
        self.out.push('\n');
        for _ in 0..n {
            self.out.push(' ');
        }
    }

    /// `{k = v, ...}` of the given entries (nothing when empty).
    pub(crate) fn dict<'a>(
        &mut self,
        entries: impl IntoIterator<Item = (&'a str, Cow<'a, Attribute>)>,
    ) {
        let mut first = true;
        for (k, v) in entries {
            self.w(if first { "{" } else { ", " });
            first = false;
            if is_bare_identifier(k) {
                self.w(k);
            } else {
                self.string(k);
            }
            if !matches!(*v, Attribute::Unit) {
                self.w(" = ");
                self.attr(&v);
            }
        }
        if !first {
            self.w("}");
        }
    }

    /// ` {attrs}` of `op` without the `elided` ones (nothing when empty).
    pub(crate) fn attr_dict(&mut self, op: OpId, elided: &[&str]) {
        if self.has_extra_attrs(op, elided) {
            self.w(" ");
            self.attr_dict_bare(op, elided);
        }
    }
    /// `{attrs}` then a space, for forms that print it before operands.
    pub(crate) fn attr_dict_prefix(&mut self, op: OpId, elided: &[&str]) {
        if self.has_extra_attrs(op, elided) {
            self.attr_dict_bare(op, elided);
            self.w(" ");
        }
    }
    /// ` attributes {attrs}` (nothing when empty).
    pub(crate) fn attr_dict_with_keyword(&mut self, op: OpId, elided: &[&str]) {
        if self.has_extra_attrs(op, elided) {
            self.w(" attributes ");
            self.attr_dict_bare(op, elided);
        }
    }
    fn has_extra_attrs(&self, op: OpId, elided: &[&str]) -> bool {
        self.m
            .attrs(op)
            .iter()
            .any(|(k, _)| !elided.contains(&k.as_str()))
    }
    fn attr_dict_bare(&mut self, op: OpId, elided: &[&str]) {
        let m = self.m;
        self.dict(
            m.attrs(op)
                .iter()
                .filter(|(k, _)| !elided.contains(&k.as_str()))
                .map(|(k, v)| (k.as_str(), Cow::Borrowed(v))),
        );
    }

    /// `^bb1(%a, %b : T, U)` for successor `i` of `op`.
    pub(crate) fn successor(&mut self, op: OpId, i: usize) {
        let m = self.m;
        let Some((b, _)) = m.successor(op, i) else {
            return;
        };
        self.block_name(b);
        let args = m.successor_args(op, i);
        if !args.is_empty() {
            self.w("(");
            self.values_with_types(args);
            self.w(")");
        }
    }

    // ---- ops and regions ----

    /// Prints one op (results, form, location) at the current indentation.
    pub(crate) fn op(&mut self, op: OpId) {
        // A cancelled compile's text is thrown away: stop printing.
        if crate::cancel::cancelled() {
            return;
        }
        let m = self.m;
        let results = m.results(op);
        if let Some(&first) = results.first() {
            match self.names[first] {
                Some(Name::Num(n, _)) => self.wf(format_args!("%{n}")),
                _ => self.w("<<UNNAMED>>"),
            }
            if results.len() > 1 {
                self.wf(format_args!(":{}", results.len()));
            }
            self.w(" = ");
        }
        let mark = self.out.len();
        let pretty = !self.generic && super::forms::print_custom(self, op).is_some();
        if !pretty {
            self.out.truncate(mark);
            self.generic_op(op);
        }
        if self.debug_info {
            self.w(" ");
            self.location(&m.loc(op).clone());
        }
    }

    pub(crate) fn location(&mut self, loc: &Location) {
        match loc {
            Location::Unknown => self.w("loc(unknown)"),
            Location::Name(n) => {
                self.w("loc(");
                self.string(n);
                self.w(")");
            }
            Location::File { file, line, col } => {
                self.w("loc(");
                self.string(file);
                self.wf(format_args!(":{line}:{col})"));
            }
        }
    }

    /// `{ blocks }`. `entry_args`: label the entry block when it has
    /// arguments; `terminators`: print an operand-less `scf.yield` ending a
    /// block (scf.for/scf.if elide it, the parser puts it back);
    /// `empty_block`: label an empty entry block so it is not read back as
    /// an empty region (generic form).
    pub(crate) fn region(
        &mut self,
        r: RegionId,
        entry_args: bool,
        terminators: bool,
        empty_block: bool,
    ) {
        let m = self.m;
        self.w("{");
        for (i, &b) in m.region_blocks(r).iter().enumerate() {
            let empty = m.first_op(b).is_none();
            let label =
                i > 0 || (entry_args && !m.block_args(b).is_empty()) || (empty_block && empty);
            if label {
                self.block_label(b);
            }
            let last = m.last_op(b);
            for o in m.block_ops(b) {
                if !terminators && Some(o) == last && is_empty_yield(m, o) {
                    continue;
                }
                self.newline_indent(self.indent + 2);
                self.indent += 2;
                self.op(o);
                self.indent -= 2;
            }
        }
        self.newline_indent(self.indent);
        self.w("}");
    }

    fn block_label(&mut self, b: BlockId) {
        let m = self.m;
        self.newline_indent(self.indent);
        self.block_name(b);
        let args = m.block_args(b);
        if !args.is_empty() {
            self.w("(");
            for (i, &a) in args.iter().enumerate() {
                if i > 0 {
                    self.w(", ");
                }
                self.value(a);
                self.w(": ");
                self.ty(m.value_type(a));
            }
            self.w(")");
        }
        self.w(":");
    }

    /// `"name"(%a)[^bb1] ({...}) {attrs} : (T) -> R`.
    pub(crate) fn generic_op(&mut self, op: OpId) {
        let m = self.m;
        let name = m.name(op).as_str();
        self.string(name);
        let inline_succ = inline_successor_operands(m, op);
        let listed: &[ValueId] = if inline_succ {
            m.operands(op)
        } else {
            m.regular_operands(op)
        };
        self.w("(");
        self.values(listed);
        self.w(")");
        if m.num_successors(op) > 0 {
            self.w("[");
            for i in 0..m.num_successors(op) {
                if i > 0 {
                    self.w(", ");
                }
                if inline_succ {
                    if let Some((b, _)) = m.successor(op, i) {
                        self.block_name(b);
                    }
                } else {
                    self.successor(op, i);
                    if m.successor_args(op, i).is_empty() && name.starts_with("cf.") {
                        // Explicit `()` keeps the branch operands out of the
                        // inline split the parser applies to cf.br/cond_br.
                        self.w("()");
                    }
                }
            }
            self.w("]");
        }
        if !m.regions(op).is_empty() {
            self.w(" (");
            for (i, &r) in m.regions(op).iter().enumerate() {
                if i > 0 {
                    self.w(", ");
                }
                self.region(r, true, true, true);
            }
            self.w(")");
        }
        let mut attrs: Vec<(&str, Cow<'_, Attribute>)> = m
            .attrs(op)
            .iter()
            .map(|(k, v)| (k.as_str(), Cow::Borrowed(v)))
            .collect();
        if let Some(seg) = super::forms::derived_segments(m, op, inline_succ) {
            attrs.retain(|(k, _)| *k != "operandSegmentSizes");
            attrs.push(("operandSegmentSizes", Cow::Owned(seg)));
            attrs.sort_by(|a, b| a.0.cmp(b.0));
        }
        if !attrs.is_empty() {
            self.w(" ");
            self.dict(attrs);
        }
        self.w(" : (");
        self.value_types(listed);
        self.w(") -> ");
        let results = m.results(op);
        let single = results.len() == 1 && !matches!(m.value_type(results[0]), Type::Function(_));
        if single {
            self.ty(m.value_type(results[0]));
        } else {
            self.w("(");
            self.value_types(results);
            self.w(")");
        }
    }
}

/// cf.br/cf.cond_br list successor operands with the others, as MLIR does
/// (the parser splits them back); other ops put them in brackets.
fn inline_successor_operands(m: &Module, op: OpId) -> bool {
    match CoreOp::of(m, op) {
        Some(CoreOp::Cf(CfOp::Br)) => {
            m.num_successors(op) == 1 && m.regular_operands(op).is_empty()
        }
        Some(CoreOp::Cf(CfOp::CondBr)) => m.num_successors(op) == 2,
        _ => false,
    }
}

fn is_empty_yield(m: &Module, op: OpId) -> bool {
    m.is(op, ScfOp::Yield) && m.operands(op).is_empty() && m.attrs(op).is_empty()
}

/// The outermost op containing `op` (the module top for attached ops).
pub(crate) fn root_of(m: &Module, mut op: OpId) -> OpId {
    while let Some(p) = m.parent_op(op) {
        op = p;
    }
    op
}
