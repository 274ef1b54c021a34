//! Rendering an emitted module as one LLVM module, or as several that are
//! compiled separately (in parallel) and linked together.
//!
//! Split rules: every function and global is defined in exactly one part,
//! functions balanced by estimated cost (largest first, to the lightest
//! part);
//! the first part gets the globals. Internal definitions become `hidden`
//! (visible to the other parts, not outside the link) and the other parts
//! declare them. Declarations, private strings, `linkonce_odr` helpers and
//! metadata are repeated in every part.

use std::fmt::Write as _;

/// A top-level entity of the output.
pub(crate) struct Item {
    /// The text up to the linkage (`define `, `@g = `).
    pub(crate) before: String,
    /// Internal linkage (`internal `), hidden when split.
    pub(crate) internal: bool,
    /// The text after the linkage.
    pub(crate) after: String,
    /// How other parts declare it (`None`: a declaration, repeated).
    pub(crate) decl: Option<String>,
}

impl Item {
    fn write(&self, out: &mut String, split: bool) {
        out.push_str(&self.before);
        if self.internal {
            out.push_str(if split { "hidden " } else { "internal " });
        }
        out.push_str(&self.after);
    }
    fn defines(&self) -> bool {
        self.decl.is_some()
    }
    /// Estimated optimization cost: lines, plus much more per conditional
    /// branch (loops are what LLVM spends its time on: rotation,
    /// induction variables, vectorization).
    fn cost(&self) -> usize {
        let lines = self.after.lines().count();
        let branches = self.after.matches("br i1 ").count();
        lines + 40 * branches
    }
}

/// Everything `emit_module` produces, before rendering.
#[derive(Default)]
pub(crate) struct Emitted {
    pub(crate) header: String,
    pub(crate) globals: Vec<Item>,
    /// Private strings, helpers: repeated in every part.
    pub(crate) shared: String,
    pub(crate) funcs: Vec<Item>,
    pub(crate) trailer: String,
}

impl Emitted {
    /// One module.
    pub(crate) fn render(&self) -> String {
        self.render_part(&|_| true, &|_| true, false)
    }

    /// Modules that link into one; the first defines the globals.
    /// Splits into at most `max_parts`, each with at least
    /// `min_part_bytes` of function text (a clang process costs ~30 ms).
    pub(crate) fn render_parts(&self, max_parts: usize, min_part_bytes: usize) -> Vec<String> {
        let total: usize = self.funcs.iter().map(|f| f.after.len()).sum();
        let cost: Vec<usize> = self.funcs.iter().map(|f| f.cost()).collect();
        let n = max_parts.min(total / min_part_bytes.max(1)).max(1);
        if n == 1 {
            return vec![self.render()];
        }
        let mut load = vec![0usize; n];
        let mut owner = vec![0usize; self.funcs.len()];
        let mut order: Vec<usize> = (0..self.funcs.len())
            .filter(|&i| self.funcs[i].defines())
            .collect();
        order.sort_by_key(|&i| std::cmp::Reverse(cost[i]));
        for i in order {
            let (p, _) = load
                .iter()
                .enumerate()
                .min_by_key(|&(_, l)| *l)
                .unwrap_or((0, &0));
            owner[i] = p;
            load[p] += cost[i];
        }
        (0..n)
            .map(|p| self.render_part(&|_| p == 0, &|f| owner[f] == p, true))
            .collect()
    }

    fn render_part(
        &self,
        own_global: &dyn Fn(usize) -> bool,
        own_func: &dyn Fn(usize) -> bool,
        split: bool,
    ) -> String {
        let mut out = self.header.clone();
        for (i, g) in self.globals.iter().enumerate() {
            match &g.decl {
                Some(d) if !own_global(i) => out.push_str(d),
                _ => g.write(&mut out, split),
            }
        }
        out.push_str(&self.shared);
        for (i, f) in self.funcs.iter().enumerate() {
            match &f.decl {
                Some(d) if !own_func(i) => {
                    let _ = writeln!(out, "{d}");
                }
                _ => f.write(&mut out, split),
            }
        }
        out.push_str(&self.trailer);
        out
    }
}
