//! Ownership across the blocks of a function body: `cf.br`, `cf.cond_br`
//! and loops built from back edges.
//!
//! Every memref argument of a non-entry block gets an `i1` companion
//! argument; every branch to the block passes one. A buffer owned in a block
//! (allocated there, or a flagged argument, or live into it) dies after its
//! last use in the block unless it is live out; a live-out buffer dies on
//! each edge whose successor does not need it, in a dealloc placed before
//! the branch whose conditions are anded with the edge condition and whose
//! `retain` list is the edge's memref operands: the retained results are the
//! successor's flags, so ownership moves with the value.
//!
//! A block argument points into its own buffer (freed under its flag) and
//! into the buffers of incoming values defined in a strict dominator of the
//! block: those stay owned where they are and alive as long as the argument
//! (their edge flag is false), unless the branch is their last use in a
//! block that makes no alias of them (a loop init). Buffers from blocks that
//! do not dominate (the previous iteration's, on a back edge) cannot be live
//! in the block, so their ownership always moves into the argument.

use crate::alias::{AliasInfo, Origin, Origins};
use crate::ownership::is_owned_allocation;
use crate::regions::{self, Flagged};
use ir::analysis::dominance::{reverse_post_order, DomTree};
use ir::dialects::{is_memref, op_error};
use ir::entity::{EntitySet, SecondaryMap};
use ir::CfOp;
use ir::{BlockId, Builder, InsertPoint, Module, OpId, RegionId, Result, Type, ValueDef, ValueId};
use smallvec::SmallVec;
use std::collections::{HashMap, HashSet};

/// Where a group of buffers dies (see `ownership::place`).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Debug)]
pub enum Death {
    After(OpId),
    Start(BlockId),
    /// On successor `k` of a branch: freed before it under the edge condition.
    Edge(OpId, usize),
}

/// A branch edge: terminator, successor index, successor block.
#[derive(Copy, Clone)]
struct Edge {
    term: OpId,
    k: usize,
    to: BlockId,
}

/// Flagged block → (number of arguments before the flags, memref positions).
type FlaggedBlocks = SecondaryMap<BlockId, Option<(usize, Vec<usize>)>>;

pub struct Cfg {
    body: RegionId,
    in_body: EntitySet<BlockId>,
    dom: DomTree,
    edges: Vec<Edge>,
    flagged: FlaggedBlocks,
    /// (root, body block) → the last op of the block using the root: a
    /// pair key, sparse in (values × blocks), so a hash map.
    uses: HashMap<(ValueId, BlockId), OpId>,
    /// The roots live into / out of each body block: few of all the
    /// values, so hash sets.
    live_in: SecondaryMap<BlockId, HashSet<ValueId>>,
    live_out: SecondaryMap<BlockId, HashSet<ValueId>>,
}

fn is_branch(m: &Module, op: OpId) -> bool {
    m.is(op, CfOp::Br) || m.is(op, CfOp::CondBr)
}

impl Cfg {
    /// Adds the flag arguments and branch operands (all `placeholder`).
    pub fn new(
        m: &mut Module,
        body: RegionId,
        placeholder: ValueId,
        fl: &mut Flagged,
    ) -> Result<Cfg> {
        let blocks = m.region_blocks(body).to_vec();
        let mut flagged = FlaggedBlocks::default();
        for &b in blocks.iter().skip(1) {
            let args = m.block_args(b).to_vec();
            let mem: Vec<usize> = (0..args.len())
                .filter(|&i| args.get(i).is_some_and(|&a| is_memref(m.value_type(a))))
                .collect();
            if mem.is_empty() {
                continue;
            }
            for &i in &mem {
                let f = m.add_block_arg(b, Type::i1());
                if let Some(&a) = args.get(i) {
                    fl.flag[a] = Some(f);
                }
            }
            flagged[b] = Some((args.len(), mem));
        }
        let mut edges = Vec::new();
        for &b in &blocks {
            let Some(t) = m.last_op(b) else { continue };
            for k in 0..m.num_successors(t) {
                let Some((to, _)) = m.successor(t, k) else {
                    continue;
                };
                edges.push(Edge { term: t, k, to });
                let Some((_, mem)) = &flagged[to] else {
                    continue;
                };
                if !is_branch(m, t) {
                    let name = m.name(t).as_str().to_string();
                    return Err(op_error(
                        m,
                        t,
                        format!("passing memrefs through '{name}' to another block is not supported (only cf.br and cf.cond_br)"),
                    ));
                }
                for _ in 0..mem.len() {
                    m.push_successor_arg(t, k, placeholder);
                }
            }
        }
        Ok(Cfg {
            body,
            in_body: blocks.iter().copied().collect(),
            dom: DomTree::new(m, body),
            edges,
            flagged,
            uses: HashMap::new(),
            live_in: SecondaryMap::default(),
            live_out: SecondaryMap::default(),
        })
    }

    /// The flagged memref arguments of the body blocks, in block order.
    pub fn flagged_args(&self, m: &Module) -> Vec<ValueId> {
        let mut out = Vec::new();
        for &b in m.region_blocks(self.body) {
            if let Some((_, mem)) = &self.flagged[b] {
                out.extend(mem.iter().filter_map(|&i| m.block_args(b).get(i).copied()));
            }
        }
        out
    }

    /// The body block holding `op` (or an op nested in it) and that ancestor.
    fn top(&self, m: &Module, mut op: OpId) -> Option<(BlockId, OpId)> {
        loop {
            let b = m.op_block(op)?;
            if self.in_body.contains(b) {
                return Some((b, op));
            }
            op = m.block_parent_op(b)?;
        }
    }

    /// The body block defining `v`, if any.
    fn home(&self, m: &Module, v: ValueId) -> Option<BlockId> {
        match m.value_def(v) {
            ValueDef::Result(op, _) => self.top(m, op).map(|t| t.0),
            ValueDef::BlockArg(b, _) => self.in_body.contains(b).then_some(b),
            ValueDef::Erased => None,
        }
    }

    /// True for a root defined directly in a body block.
    pub fn is_cfg_root(&self, m: &Module, r: ValueId) -> bool {
        let b = match m.value_def(r) {
            ValueDef::Result(op, _) => m.op_block(op),
            ValueDef::BlockArg(b, _) => Some(b),
            ValueDef::Erased => None,
        };
        b.is_some_and(|b| self.in_body.contains(b))
    }

    pub fn record_use(&mut self, m: &Module, r: ValueId, op: OpId) {
        if let Some((b, anc)) = self.top(m, op) {
            self.uses.insert((r, b), anc);
        }
    }

    /// True if `op` is the last use of `r` in its block and `r` is not live out.
    pub fn is_final_use(&self, m: &Module, r: ValueId, op: OpId) -> bool {
        let Some((b, anc)) = self.top(m, op) else {
            return false;
        };
        self.uses.get(&(r, b)) == Some(&anc) && !self.live_out[b].contains(&r)
    }

    /// True if the ownership of `w`, passed on edge `e`, moves into the
    /// successor's argument instead of staying with `w`.
    fn droppable(&self, m: &Module, fl: &Flagged, w: ValueId, e: &Edge) -> bool {
        let root = is_owned_allocation(m, w) || fl.flag[w].is_some();
        let dominates = self
            .home(m, w)
            .is_some_and(|h| h != e.to && self.dom.dominates(h, e.to));
        root && (!dominates || self.dies_at(m, fl, w, e.term))
    }

    /// True if `w` owns its buffer alone and is used only in the block of
    /// `term`, by ops that make no alias of it: it cannot be live after
    /// `term` except through the branch operands.
    fn dies_at(&self, m: &Module, fl: &Flagged, w: ValueId, term: OpId) -> bool {
        let exclusive = is_owned_allocation(m, w) || crate::ownership::group_size(m, fl, w) == 1;
        let block = m.op_block(term);
        exclusive
            && m.uses(w).iter().all(|u| {
                let local = self.top(m, u.op).map(|t| t.0) == block;
                let no_alias = u.op == term
                    || (!m.is_terminator(u.op)
                        && !m.results(u.op).iter().any(|&r| is_memref(m.value_type(r))));
                local && no_alias
            })
    }

    /// Origins of every value, with block arguments seeded to a fixpoint.
    pub fn seed(&self, m: &Module, f: OpId, fl: &Flagged, moved: &EntitySet<ValueId>) -> AliasInfo {
        // Per flagged block: the external origins of its arguments, exact?
        let mut ext: SecondaryMap<BlockId, (Vec<Origin>, bool)> =
            SecondaryMap::with_default((Vec::new(), true));
        loop {
            let mut alias = AliasInfo::new();
            for (b, (_, mem)) in self.flagged_blocks() {
                let args: Vec<ValueId> = mem
                    .iter()
                    .filter_map(|&i| m.block_args(b).get(i).copied())
                    .collect();
                let mut list: SmallVec<[Origin; 1]> =
                    args.iter().map(|&a| Origin::Alloc(a)).collect();
                let (extra, exact) = ext[b].clone();
                list.extend(extra);
                for &a in &args {
                    alias.set(
                        a,
                        Origins {
                            list: list.clone(),
                            exact,
                        },
                    );
                }
            }
            regions::seed_args(m, fl, &mut alias);
            regions::seed_results(m, f, fl, &mut alias, moved);
            let mut changed = false;
            for e in &self.edges {
                let Some((_, mem)) = &self.flagged[e.to] else {
                    continue;
                };
                let incoming: Vec<ValueId> = {
                    let args = m.successor_args(e.term, e.k);
                    mem.iter().filter_map(|&i| args.get(i).copied()).collect()
                };
                let entry = &mut ext[e.to];
                for v in incoming {
                    let o = alias.origins(m, v).clone();
                    if !o.exact && entry.1 {
                        entry.1 = false;
                        changed = true;
                    }
                    for x in o.list {
                        let drop = match &x {
                            Origin::Alloc(w) => self.droppable(m, fl, *w, e),
                            _ => false,
                        };
                        if !drop && !entry.0.contains(&x) {
                            entry.0.push(x);
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                return alias;
            }
        }
    }

    /// Live-in / live-out root sets of every body block.
    pub fn solve(&mut self, m: &Module) {
        let blocks = m.region_blocks(self.body).to_vec();
        let mut gen: SecondaryMap<BlockId, HashSet<ValueId>> = SecondaryMap::default();
        for &(r, b) in self.uses.keys() {
            if self.home(m, r) != Some(b) {
                gen[b].insert(r);
            }
        }
        let mut order = reverse_post_order(m, self.body);
        order.extend(blocks.iter().filter(|b| !self.dom.is_reachable(**b)));
        order.reverse();
        let mut changed = true;
        while changed {
            changed = false;
            for &b in &order {
                let mut out: HashSet<ValueId> = HashSet::new();
                for s in ir::analysis::dominance::block_successors(m, b) {
                    out.extend(self.live_in[s].iter().copied());
                }
                let mut inn: HashSet<ValueId> = gen[b].clone();
                inn.extend(out.iter().copied().filter(|&r| self.home(m, r) != Some(b)));
                if self.live_in[b] != inn {
                    self.live_in[b] = inn;
                    changed = true;
                }
                self.live_out[b] = out;
            }
        }
    }

    /// Where root `r` dies: in each block where it is owned and not live out,
    /// and on each edge leaving its liveness.
    pub fn deaths(&self, m: &Module, r: ValueId) -> Result<Vec<Death>> {
        let mut out = Vec::new();
        let home = self.home(m, r);
        for &b in m.region_blocks(self.body) {
            let live_in = self.live_in[b].contains(&r);
            if !live_in && home != Some(b) {
                continue;
            }
            let Some(term) = m.last_op(b) else { continue };
            let live_out = self.live_out[b].contains(&r);
            let last = self.uses.get(&(r, b)).copied();
            let at_branch = live_out || (last == Some(term) && m.num_successors(term) > 0);
            if at_branch {
                if !is_branch(m, term) {
                    let name = m.name(term).as_str().to_string();
                    return Err(op_error(
                        m,
                        term,
                        format!("a buffer stays live across '{name}': only cf.br and cf.cond_br are supported"),
                    ));
                }
                for e in self.edges.iter().filter(|e| e.term == term) {
                    if !self.live_in[e.to].contains(&r) {
                        out.push(Death::Edge(term, e.k));
                    }
                }
            } else if let Some(op) = last {
                out.push(Death::After(op));
            } else if let ValueDef::Result(op, _) = m.value_def(r) {
                out.push(Death::After(op));
            } else {
                out.push(Death::Start(b));
            }
        }
        Ok(out)
    }

    /// The flag operand index of each memref operand of edge `k` of `term`.
    pub fn edge_pairs(&self, m: &Module, term: OpId, k: usize) -> Vec<(usize, usize)> {
        let Some((to, range)) = m.successor(term, k) else {
            return Vec::new();
        };
        let Some((orig, mem)) = &self.flagged[to] else {
            return Vec::new();
        };
        mem.iter()
            .enumerate()
            .map(|(j, &i)| (range.start + i, range.start + orig + j))
            .collect()
    }
}

impl Cfg {
    /// The flagged blocks, in id order, with their argument layout.
    fn flagged_blocks(&self) -> impl Iterator<Item = (BlockId, &(usize, Vec<usize>))> {
        self.flagged
            .iter()
            .filter_map(|(b, f)| f.as_ref().map(|f| (b, f)))
    }

    /// Replaces flag arguments that every edge passes the same constant
    /// (e.g. false from all predecessors) by that constant.
    pub fn fold_constant_flags(&self, m: &mut Module) {
        for (b, (orig, mem)) in self.flagged_blocks() {
            for j in 0..mem.len() {
                let Some(flag) = m.block_args(b).get(orig + j).copied() else {
                    continue;
                };
                let mut seen: Option<bool> = None;
                let mut same = true;
                for e in self.edges.iter().filter(|e| e.to == b) {
                    let v = m
                        .successor(e.term, e.k)
                        .and_then(|(_, r)| m.operands(e.term).get(r.start + orig + j).copied());
                    let c = v.and_then(|v| crate::simplify::const_bool(m, v));
                    same &= c.is_some() && (seen.is_none() || seen == c);
                    seen = c;
                }
                let (Some(c), true) = (seen, same) else {
                    continue;
                };
                if !m.has_uses(flag) {
                    continue;
                }
                let Some(first) = m.first_op(b) else { continue };
                let k = Builder::new(m, InsertPoint::Before(first)).const_bool(c);
                m.replace_all_uses(flag, k);
            }
        }
    }
}
