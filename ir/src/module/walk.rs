//! Walking the op tree, symbol lookup, and `compact()`.

use super::*;

impl Module {
    /// Visits `op` and every op nested in it, parents first.
    pub fn walk_pre(&mut self, op: OpId, f: &mut dyn FnMut(&mut Module, OpId)) {
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
    pub fn collect_ops(&self, root: OpId) -> Vec<OpId> {
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(op) = stack.pop() {
            out.push(op);
            let mut nested = Vec::new();
            for &r in &self.ops[op].regions {
                for &b in &self.regions[r].blocks {
                    nested.extend(self.block_ops(b));
                }
            }
            stack.extend(nested.into_iter().rev());
        }
        out
    }

    /// Top-level ops named `name` (e.g. every `func.func`).
    pub fn top_level_ops(&self, name: &str) -> Vec<OpId> {
        self.block_ops(self.body())
            .filter(|&o| self.is(o, name))
            .collect()
    }

    /// Finds a top-level op by its `sym_name`.
    pub fn lookup_symbol(&self, sym: &str) -> Option<OpId> {
        self.block_ops(self.body())
            .find(|&o| self.attr(o, "sym_name").and_then(Attribute::as_str) == Some(sym))
    }

    /// Number of live ops (tombstones excluded).
    pub fn num_ops(&self) -> usize {
        self.ops.values().filter(|o| !o.erased).count()
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
    pub fn compact(&mut self) {
        let mut new = Module {
            ops: PrimaryMap::with_capacity(self.ops.len()),
            values: PrimaryMap::with_capacity(self.values.len()),
            blocks: PrimaryMap::with_capacity(self.blocks.len()),
            regions: PrimaryMap::with_capacity(self.regions.len()),
            top: OpId::new(0),
        };
        let mut op_map: SecondaryMap<OpId, Option<OpId>> = SecondaryMap::default();
        let mut val_map: SecondaryMap<ValueId, Option<ValueId>> = SecondaryMap::default();
        let mut block_map: SecondaryMap<BlockId, Option<BlockId>> = SecondaryMap::default();

        // Pass 1: allocate ids for ops, results, blocks, block args in walk order.
        let order = self.collect_ops(self.top);
        for &op in &order {
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
        for &op in &order {
            let Some(nop) = op_map[op] else { continue };
            let d = &self.ops[op];
            for (i, &v) in d.operands.iter().enumerate() {
                if let Some(nv) = val_map[v] {
                    new.ops[nop].operands.push(nv);
                    new.push_use(nv, nop, i);
                }
            }
            for &(b, n) in &d.successors {
                if let Some(nb) = block_map[b] {
                    new.ops[nop].successors.push((nb, n));
                }
            }
            for (i, &r) in new.ops[nop].results.clone().iter().enumerate() {
                new.values[r].def = ValueDef::Result(nop, i as u32);
            }
            for &r in &d.regions {
                for &b in &self.regions[r].blocks {
                    let Some(nb) = block_map[b] else { continue };
                    for (i, &a) in new.blocks[nb].args.clone().iter().enumerate() {
                        new.values[a].def = ValueDef::BlockArg(nb, i as u32);
                    }
                    let ops: Vec<OpId> = self.block_ops(b).collect();
                    for o in ops {
                        if let Some(no) = op_map[o] {
                            new.insert(no, InsertPoint::End(nb));
                        }
                    }
                }
            }
        }
        new.top = op_map[self.top].unwrap_or(OpId::new(0));
        *self = new;
    }
}
