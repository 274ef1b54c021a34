//! Block dominance inside one region (Cooper, Harvey & Kennedy's iterative
//! algorithm over reverse post-order), plus op order within blocks.

use crate::entity::{EntitySet, SecondaryMap};
use crate::module::{BlockId, Module, OpId, RegionId};
use std::collections::HashMap;

/// Dominator tree of the blocks of one region.
#[derive(Debug)]
pub struct DomTree {
    /// Immediate dominator; the entry block maps to itself.
    idom: SecondaryMap<BlockId, Option<BlockId>>,
    /// Position in reverse post-order; `None`: unreachable (or another
    /// region's block).
    rpo_index: SecondaryMap<BlockId, Option<u32>>,
}

/// Successor blocks of `b` (from its terminator).
pub fn block_successors(m: &Module, b: BlockId) -> Vec<BlockId> {
    m.last_op(b)
        .map(|t| m.successors(t).collect())
        .unwrap_or_default()
}

/// Reverse post-order of the blocks reachable from the region's entry.
pub fn reverse_post_order(m: &Module, r: RegionId) -> Vec<BlockId> {
    let Some(entry) = m.entry_block(r) else {
        return Vec::new();
    };
    let mut order = Vec::new();
    let mut seen = EntitySet::new();
    // Iterative DFS: (block, next successor index).
    let mut stack = vec![(entry, 0usize)];
    seen.insert(entry);
    while let Some(&mut (b, ref mut i)) = stack.last_mut() {
        let succs = block_successors(m, b);
        if let Some(&s) = succs.get(*i) {
            *i += 1;
            if seen.insert(s) {
                stack.push((s, 0));
            }
        } else {
            order.push(b);
            stack.pop();
        }
    }
    order.reverse();
    order
}

impl DomTree {
    pub fn new(m: &Module, r: RegionId) -> DomTree {
        let rpo = reverse_post_order(m, r);
        let mut rpo_index = SecondaryMap::default();
        for (i, &b) in rpo.iter().enumerate() {
            rpo_index[b] = Some(i as u32);
        }
        let mut preds: SecondaryMap<BlockId, Vec<BlockId>> = SecondaryMap::default();
        for &b in &rpo {
            for s in block_successors(m, b) {
                preds[s].push(b);
            }
        }
        let mut idom: SecondaryMap<BlockId, Option<BlockId>> = SecondaryMap::default();
        if let Some(&entry) = rpo.first() {
            idom[entry] = Some(entry);
        }
        let mut changed = true;
        while changed {
            changed = false;
            for &b in rpo.iter().skip(1) {
                let mut new_idom: Option<BlockId> = None;
                for &p in &preds[b] {
                    if idom[p].is_none() {
                        continue;
                    }
                    new_idom = Some(match new_idom {
                        None => p,
                        Some(cur) => intersect(&idom, &rpo_index, p, cur),
                    });
                }
                if let Some(n) = new_idom {
                    if idom[b] != Some(n) {
                        idom[b] = Some(n);
                        changed = true;
                    }
                }
            }
        }
        DomTree { idom, rpo_index }
    }

    pub fn is_reachable(&self, b: BlockId) -> bool {
        self.rpo_index[b].is_some()
    }

    /// True if `a` dominates `b`. Unreachable blocks are dominated by all.
    pub fn dominates(&self, a: BlockId, mut b: BlockId) -> bool {
        if !self.is_reachable(b) {
            return true;
        }
        loop {
            if a == b {
                return true;
            }
            match self.idom[b] {
                Some(p) if p != b => b = p,
                _ => return false,
            }
        }
    }

    pub fn idom(&self, b: BlockId) -> Option<BlockId> {
        self.idom[b].filter(|&p| p != b)
    }
}

fn intersect(
    idom: &SecondaryMap<BlockId, Option<BlockId>>,
    rpo: &SecondaryMap<BlockId, Option<u32>>,
    mut a: BlockId,
    mut b: BlockId,
) -> BlockId {
    let pos = |x: BlockId| rpo[x].unwrap_or(u32::MAX);
    while a != b {
        while pos(a) > pos(b) {
            match idom[a] {
                Some(p) => a = p,
                None => return b,
            }
        }
        while pos(b) > pos(a) {
            match idom[b] {
                Some(p) => b = p,
                None => return a,
            }
        }
    }
    a
}

/// Position of every op within its block, for O(1) "is before" queries.
#[derive(Debug, Default)]
pub struct OpOrder {
    pos: SecondaryMap<OpId, u32>,
}

impl OpOrder {
    pub fn new(m: &Module) -> OpOrder {
        let mut pos = SecondaryMap::default();
        for op in m.collect_ops(m.top()) {
            for &r in m.regions(op) {
                for &b in m.region_blocks(r) {
                    for (i, o) in m.block_ops(b).enumerate() {
                        pos[o] = i as u32;
                    }
                }
            }
        }
        OpOrder { pos }
    }
    /// For two ops of one block: is `a` strictly before `b`?
    pub fn is_before(&self, a: OpId, b: OpId) -> bool {
        self.pos[a] < self.pos[b]
    }
}

/// Dominance queries over a whole module, computing region trees on demand.
#[derive(Default)]
pub struct Dominance {
    /// A cache of the few multi-block regions a cross-block use reached:
    /// sparse among all regions, so a hash map.
    trees: HashMap<RegionId, DomTree>,
}

impl Dominance {
    pub fn tree(&mut self, m: &Module, r: RegionId) -> &DomTree {
        self.trees.entry(r).or_insert_with(|| DomTree::new(m, r))
    }
}
