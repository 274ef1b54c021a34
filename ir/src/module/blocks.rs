//! Blocks and regions: creation, arguments, layout queries, splicing.

use super::*;

impl Module {
    pub fn append_block(&mut self, region: RegionId, arg_types: &[Type]) -> BlockId {
        let b = self.blocks.push(BlockData {
            parent: Some(region),
            ..BlockData::default()
        });
        for ty in arg_types {
            self.add_block_arg(b, ty.clone());
        }
        self.regions[region].blocks.push(b);
        b
    }
    /// Creates a block in `region` right after `after`.
    pub fn insert_block_after(
        &mut self,
        region: RegionId,
        after: BlockId,
        arg_types: &[Type],
    ) -> BlockId {
        let b = self.append_block(region, arg_types);
        let blocks = &mut self.regions[region].blocks;
        blocks.pop();
        let pos = blocks
            .iter()
            .position(|&x| x == after)
            .map_or(blocks.len(), |p| p + 1);
        blocks.insert(pos, b);
        b
    }
    pub fn add_block_arg(&mut self, b: BlockId, ty: Type) -> ValueId {
        let idx = self.blocks[b].args.len() as u32;
        let v = self.values.push(ValueData {
            ty,
            def: ValueDef::BlockArg(b, idx),
            uses: SmallVec::new(),
        });
        self.blocks[b].args.push(v);
        v
    }
    /// Removes an unused block argument, renumbering the ones after it.
    pub fn remove_block_arg(&mut self, b: BlockId, i: usize) {
        let v = self.blocks[b].args.remove(i);
        self.values[v].def = ValueDef::Erased;
        for (k, &a) in self.blocks[b].args.iter().enumerate().skip(i) {
            self.values[a].def = ValueDef::BlockArg(b, k as u32);
        }
    }
    pub fn block_args(&self, b: BlockId) -> &[ValueId] {
        &self.blocks[b].args
    }
    pub fn block_arg(&self, b: BlockId, i: usize) -> Option<ValueId> {
        self.blocks[b].args.get(i).copied()
    }
    pub fn region_blocks(&self, r: RegionId) -> &[BlockId] {
        &self.regions[r].blocks
    }
    pub fn entry_block(&self, r: RegionId) -> Option<BlockId> {
        self.regions[r].blocks.first().copied()
    }
    pub fn block_parent(&self, b: BlockId) -> Option<RegionId> {
        self.blocks[b].parent
    }
    pub fn region_parent(&self, r: RegionId) -> Option<OpId> {
        self.regions[r].parent
    }
    pub fn op_block(&self, op: OpId) -> Option<BlockId> {
        self.ops[op].parent
    }
    /// The op whose region holds the block that holds `op`.
    pub fn parent_op(&self, op: OpId) -> Option<OpId> {
        let b = self.ops[op].parent?;
        let r = self.blocks[b].parent?;
        self.regions[r].parent
    }
    pub fn block_parent_op(&self, b: BlockId) -> Option<OpId> {
        self.regions[self.blocks[b].parent?].parent
    }
    pub fn first_op(&self, b: BlockId) -> Option<OpId> {
        self.blocks[b].first
    }
    pub fn last_op(&self, b: BlockId) -> Option<OpId> {
        self.blocks[b].last
    }
    pub fn next_op(&self, op: OpId) -> Option<OpId> {
        self.ops[op].next
    }
    pub fn prev_op(&self, op: OpId) -> Option<OpId> {
        self.ops[op].prev
    }
    /// Ops of a block in order. Collect first if the block changes meanwhile.
    pub fn block_ops(&self, b: BlockId) -> BlockOps<'_> {
        BlockOps {
            m: self,
            next: self.blocks[b].first,
        }
    }
    pub fn is_block_erased(&self, b: BlockId) -> bool {
        self.blocks[b].erased
    }
    /// Erases an empty-of-uses block and its ops.
    pub fn erase_block(&mut self, b: BlockId) {
        self.erase_block_contents(b);
        if let Some(r) = self.blocks[b].parent {
            self.regions[r].blocks.retain(|&x| x != b);
        }
    }
    /// Moves all blocks of `from` to the end of `to`.
    pub fn take_blocks(&mut self, from: RegionId, to: RegionId) {
        let blocks = std::mem::take(&mut self.regions[from].blocks);
        for &b in &blocks {
            self.blocks[b].parent = Some(to);
        }
        self.regions[to].blocks.extend(blocks);
    }
    /// Moves the ops of block `from` (from `start` on, or all) to the end of `to`.
    pub fn splice_ops(&mut self, from: BlockId, start: Option<OpId>, to: BlockId) {
        let mut cur = start.or(self.blocks[from].first);
        while let Some(op) = cur {
            cur = self.ops[op].next;
            self.detach(op);
            self.insert(op, InsertPoint::End(to));
        }
    }

    /// True if `ancestor` is `op` or contains it.
    pub fn is_ancestor(&self, ancestor: OpId, mut op: OpId) -> bool {
        loop {
            if op == ancestor {
                return true;
            }
            match self.parent_op(op) {
                Some(p) => op = p,
                None => return false,
            }
        }
    }
    /// The ancestor of `op` (or `op`) that sits directly in block `b`.
    pub fn ancestor_in_block(&self, b: BlockId, mut op: OpId) -> Option<OpId> {
        loop {
            if self.ops[op].parent == Some(b) {
                return Some(op);
            }
            op = self.parent_op(op)?;
        }
    }
    /// True if `a` comes before `b` in the same block (O(distance)).
    pub fn is_before_in_block(&self, a: OpId, b: OpId) -> bool {
        let mut cur = self.ops[a].next;
        while let Some(o) = cur {
            if o == b {
                return true;
            }
            cur = self.ops[o].next;
        }
        false
    }
}
