//! `cse`: common-subexpression elimination. A pure op without regions
//! that repeats an op dominating it (same name, operands, attributes and
//! result types) is replaced by it. Ops with side effects (loads, stores,
//! allocations, calls) and region ops are never merged. Dominance: within a
//! block, earlier ops; nested regions see their enclosing blocks' ops
//! (isolated ops such as `func.func` start afresh); in a region of several
//! blocks, a block sees the ops of the blocks dominating it.

use crate::analysis::dominance::DomTree;
use crate::attr::Attribute;
use crate::diag::Result;
use crate::module::{BlockId, Module, OpId, RegionId, ValueId};
use crate::pass::{Pass, PassContext, PassInfo};
use crate::registry::Traits;
use crate::sym::Sym;
use std::collections::HashMap;

pub struct Cse;

impl Pass for Cse {
    fn name(&self) -> &'static str {
        "cse"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        cx.bump("cse.eliminated", cse(m) as u64);
        Ok(())
    }
}

pub fn pass_info() -> PassInfo {
    PassInfo {
        name: "cse",
        summary: "replace a pure op repeating a dominating one by it",
        create: |_| Ok(Box::new(Cse)),
    }
}

/// Constants up to this size are compared element by element; larger ones
/// only when stored as plain bytes, and after a fingerprint (see
/// `large_elements_fingerprint`).
const MAX_COMPARED_ELEMENTS: usize = 64;

/// Name, operands and the fingerprint of large constants: the hashed part
/// of an op's identity.
type Key = (Sym, Vec<ValueId>, u64);

/// The ops visible at the current point, by key, with an undo log.
#[derive(Default)]
struct Scope {
    map: HashMap<Key, Vec<OpId>>,
    log: Vec<Key>,
}

impl Scope {
    fn mark(&self) -> usize {
        self.log.len()
    }
    fn undo(&mut self, mark: usize) {
        while self.log.len() > mark {
            let Some(k) = self.log.pop() else { break };
            if let Some(v) = self.map.get_mut(&k) {
                v.pop();
            }
        }
    }
    fn find(&self, m: &Module, op: OpId, k: &Key, rules: &Rules<'_>) -> Option<OpId> {
        let same_types = |o: OpId| {
            m.results(o)
                .iter()
                .map(|&r| m.value_type(r))
                .eq(m.results(op).iter().map(|&r| m.value_type(r)))
        };
        self.map
            .get(k)?
            .iter()
            .rev()
            .copied()
            .find(|&o| rules.same_attrs(m, o, op) && same_types(o))
    }
    fn insert(&mut self, k: Key, op: OpId) {
        self.map.entry(k.clone()).or_default().push(op);
        self.log.push(k);
    }
}

/// What a dialect adds to the rule: which of its pure ops must still not
/// merge (random ones it models as pure), and which attributes are
/// metadata two equal ops may differ in (names kept for export).
pub struct Rules<'a> {
    pub keep: &'a dyn Fn(&Module, OpId) -> bool,
    pub metadata: &'a dyn Fn(&str) -> bool,
}

impl Rules<'_> {
    fn same_attrs(&self, m: &Module, a: OpId, b: OpId) -> bool {
        let kept = |o: OpId| {
            m.attrs(o)
                .iter()
                .filter(|(k, _)| !(self.metadata)(k.as_str()))
        };
        kept(a).eq(kept(b))
    }
}

const PLAIN: Rules<'static> = Rules {
    keep: &|_, _| true,
    metadata: &|_| false,
};

/// The key of `op` if it may merge with an equal one.
fn candidate(m: &Module, op: OpId, rules: &Rules<'_>) -> Option<Key> {
    let mergeable = m.is_pure(op)
        && m.regions(op).is_empty()
        && !m.is_terminator(op)
        && m.num_successors(op) == 0
        && !m.results(op).is_empty()
        && (rules.keep)(m, op);
    match mergeable {
        true => Some((
            m.name(op),
            m.operands(op).to_vec(),
            large_elements_fingerprint(m, op)?,
        )),
        false => None,
    }
}

/// A hash of the large element attributes of `op` (dtype, shape, and the
/// value of a splat or 2 KiB of sampled bytes), so that two weights are compared in full only when
/// their samples agree: tied weights (an embedding and its copy) merge at
/// the cost of one `memcmp`, the others at none. `None` when a large one
/// is a lazy or strided view, whose comparison would compute it.
fn large_elements_fingerprint(m: &Module, op: OpId) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    const WINDOWS: usize = 32;
    const WINDOW: usize = 64;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (_, a) in m.attrs(op) {
        let Attribute::Elements(e) = a else { continue };
        if e.len() <= MAX_COMPARED_ELEMENTS {
            continue;
        }
        (e.dtype(), e.shape()).hash(&mut h);
        if e.is_splat() {
            e.get(0).map(|v| v.u64()).hash(&mut h);
            continue;
        }
        let bytes = e.contiguous_bytes()?;
        let step = (bytes.len() / WINDOWS).max(WINDOW);
        for at in (0..bytes.len()).step_by(step) {
            bytes.get(at..(at + WINDOW).min(bytes.len())).hash(&mut h);
        }
    }
    Some(h.finish())
}

/// Runs CSE over the module; returns how many ops it erased.
pub fn cse(m: &mut Module) -> usize {
    cse_with(m, &PLAIN)
}

/// CSE with a dialect's `rules`.
pub fn cse_with(m: &mut Module, rules: &Rules<'_>) -> usize {
    let mut n = 0;
    let top = m.top();
    for r in m.regions(top).to_vec() {
        region(m, r, &mut Scope::default(), &mut n, rules);
    }
    n
}

fn region(m: &mut Module, r: RegionId, scope: &mut Scope, n: &mut usize, rules: &Rules<'_>) {
    let blocks = m.region_blocks(r).to_vec();
    if let [b] = blocks.as_slice() {
        block(m, *b, scope, n, rules);
        return;
    }
    // Several blocks: walk the dominator tree, each block in the scope of
    // the blocks dominating it.
    let dom = DomTree::new(m, r);
    let mut kids: HashMap<BlockId, Vec<BlockId>> = HashMap::new();
    let mut roots = Vec::new();
    for &b in &blocks {
        if !dom.is_reachable(b) {
            continue;
        }
        match dom.idom(b).filter(|&d| d != b) {
            Some(d) => kids.entry(d).or_default().push(b),
            None => roots.push(b),
        }
    }
    // (block, scope mark to restore after its subtree), as an explicit stack.
    let mut stack: Vec<(BlockId, Option<usize>)> = roots.into_iter().map(|b| (b, None)).collect();
    while let Some((b, done)) = stack.pop() {
        if let Some(mark) = done {
            scope.undo(mark);
            continue;
        }
        let mark = scope.mark();
        block_ops(m, b, scope, n, rules);
        stack.push((b, Some(mark)));
        for &k in kids.get(&b).map(Vec::as_slice).unwrap_or_default() {
            stack.push((k, None));
        }
    }
}

fn block(m: &mut Module, b: BlockId, scope: &mut Scope, n: &mut usize, rules: &Rules<'_>) {
    let mark = scope.mark();
    block_ops(m, b, scope, n, rules);
    scope.undo(mark);
}

/// The ops of `b` in order, leaving their entries in `scope`.
fn block_ops(m: &mut Module, b: BlockId, scope: &mut Scope, n: &mut usize, rules: &Rules<'_>) {
    let ops: Vec<OpId> = m.block_ops(b).collect();
    for op in ops {
        if let Some(k) = candidate(m, op, rules) {
            if let Some(prev) = scope.find(m, op, &k, rules) {
                let new = m.results(prev).to_vec();
                m.replace_op(op, &new);
                *n += 1;
                continue;
            }
            scope.insert(k, op);
        }
        let isolated = m.has_trait(op, Traits::ISOLATED);
        for r in m.regions(op).to_vec() {
            if isolated {
                region(m, r, &mut Scope::default(), n, rules);
            } else {
                region(m, r, scope, n, rules);
            }
        }
    }
}
