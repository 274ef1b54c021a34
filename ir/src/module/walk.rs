//! Walking the op tree, symbol lookup, and `compact()`.

use super::*;

impl Module {
    /// Visits `op` and every op nested in it, parents first.
    pub fn walk_pre(&mut self, op: OpId, f: &mut dyn FnMut(&mut Module, OpId)) {
        crate::cancel::poll();
        f(self, op);
        for r in self.ops[op].regions.clone() {
            for b in self.regions[r].blocks.clone() {
                let ops: Vec<OpId> = self.block_ops(b).collect();
                for o in ops {
                    if !self.ops[o].erased {
                        self.walk_pre(o, f);
                    }
                }
            }
        }
    }

    /// Every op nested in `root` (and `root`), parents first, as a list.
    /// Each op's regions are entered when the op is reached, so its data
    /// is read once while still in cache (this walk runs over the whole
    /// module in most passes).
    pub fn collect_ops(&self, root: OpId) -> Vec<OpId> {
        let mut out = vec![root];
        // Per nesting level: the blocks still to visit (reversed) and the
        // next op of the current block.
        let mut stack: Vec<(SmallVec<[BlockId; 2]>, Option<OpId>)> = Vec::new();
        let blocks_of = |op: OpId| -> SmallVec<[BlockId; 2]> {
            let mut bs: SmallVec<[BlockId; 2]> = self.ops[op]
                .regions
                .iter()
                .flat_map(|&r| self.regions[r].blocks.iter().copied())
                .collect();
            bs.reverse();
            bs
        };
        if !self.ops[root].regions.is_empty() {
            stack.push((blocks_of(root), None));
        }
        while let Some((blocks, cursor)) = stack.last_mut() {
            let Some(op) = *cursor else {
                match blocks.pop() {
                    Some(b) => *cursor = self.blocks[b].first,
                    None => {
                        stack.pop();
                    }
                }
                continue;
            };
            let d = &self.ops[op];
            *cursor = d.next;
            out.push(op);
            if out.len().is_multiple_of(1024) {
                crate::cancel::poll();
            }
            if !d.regions.is_empty() {
                stack.push((blocks_of(op), None));
            }
        }
        out
    }

    /// Top-level ops named `name` (e.g. every `func.func`).
    pub fn top_level_ops(&self, name: impl crate::ops::OpName) -> Vec<OpId> {
        self.block_ops(self.body())
            .filter(|&o| self.is(o, name))
            .collect()
    }

    /// Number of live ops (tombstones excluded).
    pub fn num_ops(&self) -> usize {
        self.ops.values().filter(|o| !o.erased).count()
    }
    /// Erased ops still taking arena slots (until `compact`), in O(1).
    pub fn erased_ops(&self) -> usize {
        self.erased_ops
    }
    /// Arena sizes including tombstones: (ops, values, blocks, regions).
    pub fn arena_sizes(&self) -> (usize, usize, usize, usize) {
        (
            self.ops.len(),
            self.values.len(),
            self.blocks.len(),
            self.regions.len(),
        )
    }

    /// Rebuilds the arenas with only what is reachable from the top op,
    /// dropping tombstones (and the attributes they held). Ids change.
    /// A cancelled compile (crate::cancel) stops it early and leaves the
    /// module as it was: the new arenas are only swapped in at the end.
    pub fn compact(&mut self) {
        let mut new = Module {
            ops: PrimaryMap::with_capacity(self.ops.len()),
            values: PrimaryMap::with_capacity(self.values.len()),
            blocks: PrimaryMap::with_capacity(self.blocks.len()),
            regions: PrimaryMap::with_capacity(self.regions.len()),
            top: OpId::new(0),
            erased_ops: 0,
            sym_gen: 0,
            symbols: Default::default(),
        };
        let mut op_map: SecondaryMap<OpId, Option<OpId>> = SecondaryMap::default();
        let mut val_map: SecondaryMap<ValueId, Option<ValueId>> = SecondaryMap::default();
        let mut block_map: SecondaryMap<BlockId, Option<BlockId>> = SecondaryMap::default();

        // Pass 1: allocate ids for ops, results, blocks, block args in walk order.
        let order = self.collect_ops(self.top);
        // Checked every few thousand ops: the flag is a thread-local read.
        let cancelled = |i: usize| i.is_multiple_of(4096) && crate::cancel::cancelled();
        for (i, &op) in order.iter().enumerate() {
            if cancelled(i) {
                return;
            }
            let d = &self.ops[op];
            let nop = new.ops.push(OpData {
                name: d.name,
                operands: SmallVec::new(),
                use_pos: SmallVec::new(),
                results: SmallVec::new(),
                attrs: d.attrs.clone(),
                regions: SmallVec::new(),
                successors: SmallVec::new(),
                loc: d.loc.clone(),
                parent: None,
                prev: None,
                next: None,
                erased: false,
            });
            op_map[op] = Some(nop);
            for &r in &d.results {
                let nv = new.values.push(ValueData {
                    ty: self.values[r].ty.clone(),
                    def: self.values[r].def,
                    uses: SmallVec::new(),
                });
                val_map[r] = Some(nv);
                new.ops[nop].results.push(nv);
            }
            for &r in &d.regions {
                let nr = new.regions.push(RegionData {
                    blocks: Vec::new(),
                    parent: Some(nop),
                });
                new.ops[nop].regions.push(nr);
                for &b in &self.regions[r].blocks {
                    let nb = new.blocks.push(BlockData {
                        parent: Some(nr),
                        ..BlockData::default()
                    });
                    block_map[b] = Some(nb);
                    new.regions[nr].blocks.push(nb);
                    for &a in &self.blocks[b].args {
                        let nv = new.values.push(ValueData {
                            ty: self.values[a].ty.clone(),
                            def: ValueDef::Erased,
                            uses: SmallVec::new(),
                        });
                        val_map[a] = Some(nv);
                        new.blocks[nb].args.push(nv);
                    }
                }
            }
        }
        // Pass 2: operands, successors, layout, defs.
        let map = Remap {
            ops: op_map,
            values: val_map,
            blocks: block_map,
        };
        for (i, &op) in order.iter().enumerate() {
            if cancelled(i) {
                return;
            }
            self.link_compacted(&mut new, op, &map);
        }
        let op_map = map.ops;
        new.top = op_map[self.top].unwrap_or(OpId::new(0));
        *self = new;
    }
}

/// Old ids → new ids during `compact` (None: not reachable).
struct Remap {
    ops: SecondaryMap<OpId, Option<OpId>>,
    values: SecondaryMap<ValueId, Option<ValueId>>,
    blocks: SecondaryMap<BlockId, Option<BlockId>>,
}

impl Module {
    /// Pass 2 of `compact` for one op: its operands, successors, result
    /// definitions, and the ops of its blocks, in `new`.
    fn link_compacted(&self, new: &mut Module, op: OpId, map: &Remap) {
        let Some(nop) = map.ops[op] else { return };
        let d = &self.ops[op];
        for (i, &v) in d.operands.iter().enumerate() {
            if let Some(nv) = map.values[v] {
                new.ops[nop].operands.push(nv);
                new.push_use(nv, nop, i);
            }
        }
        for &(b, n) in &d.successors {
            if let Some(nb) = map.blocks[b] {
                new.ops[nop].successors.push((nb, n));
            }
        }
        for (i, &r) in new.ops[nop].results.clone().iter().enumerate() {
            new.values[r].def = ValueDef::Result(nop, i as u32);
        }
        for &r in &d.regions {
            for &b in &self.regions[r].blocks {
                let Some(nb) = map.blocks[b] else { continue };
                for (i, &a) in new.blocks[nb].args.clone().iter().enumerate() {
                    new.values[a].def = ValueDef::BlockArg(nb, i as u32);
                }
                for o in self.block_ops(b) {
                    if let Some(no) = map.ops[o] {
                        new.insert(no, InsertPoint::End(nb));
                    }
                }
            }
        }
    }
}
