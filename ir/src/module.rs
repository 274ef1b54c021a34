//! Arena storage of a module: ops, values, blocks and regions as `u32` ids.
//!
//! Data lives in primary maps; the order of ops in a block is a doubly linked
//! list (layout apart from data), so inserting and erasing are O(1). Erasing
//! leaves a tombstone; `compact()` rebuilds the arenas without them, which
//! is where attributes (and the constant buffers they share) are dropped.

use crate::attr::Attribute;
use crate::diag::Location;
use crate::entity::{EntityRef, PrimaryMap, SecondaryMap};
use crate::sym::Sym;
use crate::types::Type;
use smallvec::SmallVec;

crate::entity!(
    /// An operation.
    OpId,
    "op"
);
crate::entity!(
    /// An SSA value: an op result or a block argument.
    ValueId,
    "%v"
);
crate::entity!(
    /// A basic block.
    BlockId,
    "^bb"
);
crate::entity!(
    /// A region: the blocks nested under one op.
    RegionId,
    "region"
);

/// One use of a value: operand `index` of `op`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Use {
    pub op: OpId,
    pub index: u32,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ValueDef {
    Result(OpId, u32),
    BlockArg(BlockId, u32),
    Erased,
}

#[derive(Clone, Debug)]
pub struct ValueData {
    pub ty: Type,
    pub def: ValueDef,
    uses: SmallVec<[Use; 2]>,
}

#[derive(Clone, Debug)]
pub struct OpData {
    pub name: Sym,
    /// Regular operands, then the arguments of each successor in order.
    operands: SmallVec<[ValueId; 4]>,
    results: SmallVec<[ValueId; 2]>,
    /// Sorted by key.
    attrs: Vec<(Sym, Attribute)>,
    regions: SmallVec<[RegionId; 1]>,
    successors: SmallVec<[(BlockId, u32); 2]>,
    pub loc: Location,
    parent: Option<BlockId>,
    prev: Option<OpId>,
    next: Option<OpId>,
    erased: bool,
}

#[derive(Clone, Debug, Default)]
pub struct BlockData {
    args: SmallVec<[ValueId; 4]>,
    first: Option<OpId>,
    last: Option<OpId>,
    parent: Option<RegionId>,
    erased: bool,
}

#[derive(Clone, Debug, Default)]
pub struct RegionData {
    blocks: Vec<BlockId>,
    parent: Option<OpId>,
}

/// Where a new op goes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum InsertPoint {
    Start(BlockId),
    End(BlockId),
    Before(OpId),
    After(OpId),
}

/// Everything needed to create an op.
#[derive(Clone, Debug, Default)]
pub struct OpSpec {
    pub operands: Vec<ValueId>,
    pub result_types: Vec<Type>,
    pub attrs: Vec<(Sym, Attribute)>,
    pub regions: usize,
    /// Successor blocks with their argument values.
    pub successors: Vec<(BlockId, Vec<ValueId>)>,
    pub loc: Location,
}

/// A module: a `builtin.module` op and everything nested in it.
#[derive(Clone, Debug)]
pub struct Module {
    ops: PrimaryMap<OpId, OpData>,
    values: PrimaryMap<ValueId, ValueData>,
    blocks: PrimaryMap<BlockId, BlockData>,
    regions: PrimaryMap<RegionId, RegionData>,
    top: OpId,
}

impl Default for Module {
    fn default() -> Self {
        Self::new()
    }
}

impl Module {
    /// An empty `builtin.module` with one block.
    pub fn new() -> Module {
        let mut m = Module {
            ops: PrimaryMap::new(),
            values: PrimaryMap::new(),
            blocks: PrimaryMap::new(),
            regions: PrimaryMap::new(),
            top: OpId::new(0),
        };
        let top = m.create_op(
            Sym::new("builtin.module"),
            OpSpec {
                regions: 1,
                ..OpSpec::default()
            },
        );
        m.top = top;
        let region = m.ops[top].regions[0];
        m.append_block(region, &[]);
        m
    }

    pub fn top(&self) -> OpId {
        self.top
    }
    /// The block holding the module's top-level ops (functions, globals).
    pub fn body(&self) -> BlockId {
        let region = self.ops[self.top].regions[0];
        self.regions[region].blocks[0]
    }

    // ---- ops ----

    /// Creates a detached op; place it with `insert`.
    pub fn create_op(&mut self, name: Sym, spec: OpSpec) -> OpId {
        let OpSpec {
            mut operands,
            result_types,
            mut attrs,
            regions,
            successors,
            loc,
        } = spec;
        attrs.sort_by_key(|a| a.0);
        attrs.dedup_by(|a, b| a.0 == b.0);
        let mut succs = SmallVec::new();
        for (block, args) in successors {
            succs.push((block, args.len() as u32));
            operands.extend(args);
        }
        let op = self.ops.push(OpData {
            name,
            operands: SmallVec::from_vec(operands),
            results: SmallVec::new(),
            attrs,
            regions: SmallVec::new(),
            successors: succs,
            loc,
            parent: None,
            prev: None,
            next: None,
            erased: false,
        });
        for (i, &v) in self.ops[op].operands.clone().iter().enumerate() {
            self.values[v].uses.push(Use {
                op,
                index: i as u32,
            });
        }
        for (i, ty) in result_types.into_iter().enumerate() {
            let v = self.values.push(ValueData {
                ty,
                def: ValueDef::Result(op, i as u32),
                uses: SmallVec::new(),
            });
            self.ops[op].results.push(v);
        }
        for _ in 0..regions {
            let r = self.regions.push(RegionData {
                blocks: Vec::new(),
                parent: Some(op),
            });
            self.ops[op].regions.push(r);
        }
        op
    }

    /// Links a detached op at `ip`.
    pub fn insert(&mut self, op: OpId, ip: InsertPoint) {
        debug_assert!(self.ops[op].parent.is_none(), "op already placed");
        let (block, prev, next) = match ip {
            InsertPoint::Start(b) => (b, None, self.blocks[b].first),
            InsertPoint::End(b) => (b, self.blocks[b].last, None),
            InsertPoint::Before(o) => (self.parent_block_or_panic(o), self.ops[o].prev, Some(o)),
            InsertPoint::After(o) => (self.parent_block_or_panic(o), Some(o), self.ops[o].next),
        };
        self.ops[op].parent = Some(block);
        self.ops[op].prev = prev;
        self.ops[op].next = next;
        match prev {
            Some(p) => self.ops[p].next = Some(op),
            None => self.blocks[block].first = Some(op),
        }
        match next {
            Some(n) => self.ops[n].prev = Some(op),
            None => self.blocks[block].last = Some(op),
        }
    }

    fn parent_block_or_panic(&self, op: OpId) -> BlockId {
        match self.ops[op].parent {
            Some(b) => b,
            None => unreachable_detached(op),
        }
    }

    /// Unlinks an op from its block, keeping it alive (to move it).
    pub fn detach(&mut self, op: OpId) {
        let Some(block) = self.ops[op].parent else {
            return;
        };
        let (prev, next) = (self.ops[op].prev, self.ops[op].next);
        match prev {
            Some(p) => self.ops[p].next = next,
            None => self.blocks[block].first = next,
        }
        match next {
            Some(n) => self.ops[n].prev = prev,
            None => self.blocks[block].last = prev,
        }
        let data = &mut self.ops[op];
        data.parent = None;
        data.prev = None;
        data.next = None;
    }

    pub fn move_to(&mut self, op: OpId, ip: InsertPoint) {
        self.detach(op);
        self.insert(op, ip);
    }

    /// Erases an op and everything nested in it. Its results must be unused
    /// outside of it (replace them first).
    pub fn erase_op(&mut self, op: OpId) {
        if self.ops[op].erased {
            return;
        }
        self.detach(op);
        for r in self.ops[op].regions.clone() {
            for b in self.regions[r].blocks.clone() {
                self.erase_block_contents(b);
            }
        }
        self.drop_operands(op);
        let data = &mut self.ops[op];
        data.erased = true;
        data.attrs = Vec::new();
        for &v in &self.ops[op].results.clone() {
            self.values[v].def = ValueDef::Erased;
        }
    }

    fn erase_block_contents(&mut self, b: BlockId) {
        // Drop all operand links first so nested ops may use each other.
        let ops: Vec<OpId> = self.block_ops(b).collect();
        for &o in &ops {
            self.walk_pre(o, &mut |m, inner| m.drop_operands(inner));
        }
        for &o in ops.iter().rev() {
            self.erase_op(o);
        }
        for &a in &self.blocks[b].args.clone() {
            self.values[a].def = ValueDef::Erased;
        }
        self.blocks[b].erased = true;
    }

    fn drop_operands(&mut self, op: OpId) {
        let operands = std::mem::take(&mut self.ops[op].operands);
        for (i, v) in operands.iter().enumerate() {
            self.remove_use(
                *v,
                Use {
                    op,
                    index: i as u32,
                },
            );
        }
        self.ops[op].successors.clear();
    }

    fn remove_use(&mut self, v: ValueId, u: Use) {
        let uses = &mut self.values[v].uses;
        if let Some(pos) = uses.iter().position(|x| *x == u) {
            uses.swap_remove(pos);
        }
    }

    pub fn is_erased(&self, op: OpId) -> bool {
        self.ops[op].erased
    }
    pub fn name(&self, op: OpId) -> Sym {
        self.ops[op].name
    }
    pub fn is(&self, op: OpId, name: &str) -> bool {
        self.ops[op].name.as_str() == name
    }
    pub fn loc(&self, op: OpId) -> &Location {
        &self.ops[op].loc
    }
    pub fn set_loc(&mut self, op: OpId, loc: Location) {
        self.ops[op].loc = loc;
    }
    /// All operands, successor arguments included.
    pub fn operands(&self, op: OpId) -> &[ValueId] {
        &self.ops[op].operands
    }
    pub fn operand(&self, op: OpId, i: usize) -> Option<ValueId> {
        self.ops[op].operands.get(i).copied()
    }
    /// Operands that are not successor arguments.
    pub fn regular_operands(&self, op: OpId) -> &[ValueId] {
        let d = &self.ops[op];
        let n: u32 = d.successors.iter().map(|s| s.1).sum();
        &d.operands[..d.operands.len() - n as usize]
    }
    pub fn results(&self, op: OpId) -> &[ValueId] {
        &self.ops[op].results
    }
    pub fn result(&self, op: OpId, i: usize) -> Option<ValueId> {
        self.ops[op].results.get(i).copied()
    }
    pub fn regions(&self, op: OpId) -> &[RegionId] {
        &self.ops[op].regions
    }
    pub fn region(&self, op: OpId, i: usize) -> Option<RegionId> {
        self.ops[op].regions.get(i).copied()
    }
    pub fn num_successors(&self, op: OpId) -> usize {
        self.ops[op].successors.len()
    }
    pub fn successors(&self, op: OpId) -> impl Iterator<Item = BlockId> + '_ {
        self.ops[op].successors.iter().map(|s| s.0)
    }
    /// Successor `i` and the range of operand indices holding its arguments.
    pub fn successor(&self, op: OpId, i: usize) -> Option<(BlockId, std::ops::Range<usize>)> {
        let d = &self.ops[op];
        let n: u32 = d.successors.iter().map(|s| s.1).sum();
        let mut start = d.operands.len() - n as usize;
        for (k, &(b, cnt)) in d.successors.iter().enumerate() {
            if k == i {
                return Some((b, start..start + cnt as usize));
            }
            start += cnt as usize;
        }
        None
    }
    pub fn successor_args(&self, op: OpId, i: usize) -> &[ValueId] {
        match self.successor(op, i) {
            Some((_, r)) => &self.ops[op].operands[r],
            None => &[],
        }
    }
    pub fn set_successor(&mut self, op: OpId, i: usize, block: BlockId) {
        if let Some(s) = self.ops[op].successors.get_mut(i) {
            s.0 = block;
        }
    }

    pub fn set_operand(&mut self, op: OpId, i: usize, v: ValueId) {
        let old = self.ops[op].operands[i];
        if old == v {
            return;
        }
        let u = Use {
            op,
            index: i as u32,
        };
        self.remove_use(old, u);
        self.ops[op].operands[i] = v;
        self.values[v].uses.push(u);
    }

    /// Replaces the regular operands (successor arguments stay).
    pub fn set_operands(&mut self, op: OpId, new: &[ValueId]) {
        let tail: Vec<ValueId> = {
            let d = &self.ops[op];
            let n: u32 = d.successors.iter().map(|s| s.1).sum();
            d.operands[d.operands.len() - n as usize..].to_vec()
        };
        let succs = self.ops[op].successors.clone();
        self.drop_operands(op);
        self.ops[op].successors = succs;
        let mut all: SmallVec<[ValueId; 4]> = SmallVec::from_slice(new);
        all.extend(tail);
        for (i, &v) in all.iter().enumerate() {
            self.values[v].uses.push(Use {
                op,
                index: i as u32,
            });
        }
        self.ops[op].operands = all;
    }

    /// Appends an argument to successor `i` of a branch.
    pub fn push_successor_arg(&mut self, op: OpId, i: usize, v: ValueId) {
        let Some((_, range)) = self.successor(op, i) else {
            return;
        };
        let mut operands: Vec<ValueId> = self.ops[op].operands.to_vec();
        operands.insert(range.end, v);
        let succs = self.ops[op].successors.clone();
        self.drop_operands(op);
        let mut succs = succs;
        succs[i].1 += 1;
        self.ops[op].successors = succs;
        for (k, &val) in operands.iter().enumerate() {
            self.values[val].uses.push(Use {
                op,
                index: k as u32,
            });
        }
        self.ops[op].operands = SmallVec::from_vec(operands);
    }

    // ---- attributes ----

    pub fn attrs(&self, op: OpId) -> &[(Sym, Attribute)] {
        &self.ops[op].attrs
    }
    pub fn attr(&self, op: OpId, name: &str) -> Option<&Attribute> {
        let attrs = &self.ops[op].attrs;
        attrs
            .binary_search_by(|(k, _)| k.as_str().cmp(name))
            .ok()
            .map(|i| &attrs[i].1)
    }
    pub fn set_attr(&mut self, op: OpId, name: &str, value: Attribute) {
        let key = Sym::new(name);
        let attrs = &mut self.ops[op].attrs;
        match attrs.binary_search_by(|(k, _)| k.as_str().cmp(name)) {
            Ok(i) => attrs[i].1 = value,
            Err(i) => attrs.insert(i, (key, value)),
        }
    }
    pub fn remove_attr(&mut self, op: OpId, name: &str) -> Option<Attribute> {
        let attrs = &mut self.ops[op].attrs;
        let i = attrs.binary_search_by(|(k, _)| k.as_str().cmp(name)).ok()?;
        Some(attrs.remove(i).1)
    }

    // ---- values ----

    pub fn value_type(&self, v: ValueId) -> &Type {
        &self.values[v].ty
    }
    pub fn set_value_type(&mut self, v: ValueId, ty: Type) {
        self.values[v].ty = ty;
    }
    pub fn value_def(&self, v: ValueId) -> ValueDef {
        self.values[v].def
    }
    /// The op that defines `v`, if it is an op result.
    pub fn defining_op(&self, v: ValueId) -> Option<OpId> {
        match self.values[v].def {
            ValueDef::Result(op, _) => Some(op),
            _ => None,
        }
    }
    pub fn uses(&self, v: ValueId) -> &[Use] {
        &self.values[v].uses
    }
    pub fn has_uses(&self, v: ValueId) -> bool {
        !self.values[v].uses.is_empty()
    }
    /// Distinct ops using `v`.
    pub fn users(&self, v: ValueId) -> Vec<OpId> {
        let mut out: Vec<OpId> = self.values[v].uses.iter().map(|u| u.op).collect();
        out.sort_unstable();
        out.dedup();
        out
    }
    pub fn replace_all_uses(&mut self, old: ValueId, new: ValueId) {
        if old == new {
            return;
        }
        let uses = std::mem::take(&mut self.values[old].uses);
        for u in &uses {
            self.ops[u.op].operands[u.index as usize] = new;
        }
        self.values[new].uses.extend(uses);
    }
    /// Replaces uses of `old` for which `keep` says false... i.e. where `pred` holds.
    pub fn replace_uses_where(
        &mut self,
        old: ValueId,
        new: ValueId,
        pred: impl Fn(&Module, Use) -> bool,
    ) {
        let uses: Vec<Use> = self.values[old].uses.to_vec();
        for u in uses {
            if pred(self, u) {
                self.set_operand(u.op, u.index as usize, new);
            }
        }
    }
    /// Replaces every result of `op` with the given values, then erases it.
    pub fn replace_op(&mut self, op: OpId, new_values: &[ValueId]) {
        for (i, &r) in self.ops[op].results.clone().iter().enumerate() {
            if let Some(&n) = new_values.get(i) {
                self.replace_all_uses(r, n);
            }
        }
        self.erase_op(op);
    }

    // ---- blocks and regions ----

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

    // ---- walking ----

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
                    new.values[nv].uses.push(Use {
                        op: nop,
                        index: i as u32,
                    });
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

#[cold]
fn unreachable_detached(op: OpId) -> ! {
    // Inserting relative to a detached op is a compiler bug, not an input error.
    panic!("insert point {op} is not in a block")
}

/// Iterator over the ops of a block.
pub struct BlockOps<'m> {
    m: &'m Module,
    next: Option<OpId>,
}

impl Iterator for BlockOps<'_> {
    type Item = OpId;
    fn next(&mut self) -> Option<OpId> {
        let cur = self.next?;
        self.next = self.m.ops[cur].next;
        Some(cur)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(operands: Vec<ValueId>, results: Vec<Type>) -> OpSpec {
        OpSpec {
            operands,
            result_types: results,
            ..OpSpec::default()
        }
    }

    #[test]
    fn build_replace_erase_compact() {
        let mut m = Module::new();
        let body = m.body();
        let f = m.create_op(
            Sym::new("test.func"),
            OpSpec {
                regions: 1,
                ..OpSpec::default()
            },
        );
        m.insert(f, InsertPoint::End(body));
        let r = m.region(f, 0).unwrap();
        let b = m.append_block(r, &[Type::f32()]);
        let x = m.block_arg(b, 0).unwrap();
        let a = m.create_op(Sym::new("test.a"), spec(vec![x, x], vec![Type::f32()]));
        m.insert(a, InsertPoint::End(b));
        let av = m.result(a, 0).unwrap();
        let c = m.create_op(Sym::new("test.c"), spec(vec![av], vec![]));
        m.insert(c, InsertPoint::End(b));
        assert_eq!(m.uses(x).len(), 2);
        assert_eq!(m.users(x), vec![a]);

        let n = m.create_op(Sym::new("test.n"), spec(vec![x], vec![Type::f32()]));
        m.insert(n, InsertPoint::Before(c));
        let nv = m.result(n, 0).unwrap();
        m.replace_op(a, &[nv]);
        assert_eq!(m.block_ops(b).collect::<Vec<_>>(), vec![n, c]);
        assert_eq!(m.operands(c), &[nv]);
        assert_eq!(m.uses(x).len(), 1);
        assert_eq!(m.arena_sizes().0, 5);
        m.compact();
        assert_eq!(m.arena_sizes().0, 4);
        assert_eq!(m.num_ops(), 4);
        let f = m.top_level_ops("test.func")[0];
        let b = m.entry_block(m.region(f, 0).unwrap()).unwrap();
        let ops: Vec<OpId> = m.block_ops(b).collect();
        assert_eq!(m.name(ops[0]), "test.n");
        let nres = m.result(ops[0], 0).unwrap();
        assert_eq!(m.operands(ops[1]), &[nres]);
        assert_eq!(m.uses(m.block_arg(b, 0).unwrap()).len(), 1);
    }

    #[test]
    fn successors_and_attrs() {
        let mut m = Module::new();
        let body = m.body();
        let f = m.create_op(
            Sym::new("test.func"),
            OpSpec {
                regions: 1,
                ..OpSpec::default()
            },
        );
        m.insert(f, InsertPoint::End(body));
        let r = m.region(f, 0).unwrap();
        let b0 = m.append_block(r, &[Type::i1(), Type::f32()]);
        let b1 = m.append_block(r, &[Type::f32()]);
        let c = m.block_arg(b0, 0).unwrap();
        let x = m.block_arg(b0, 1).unwrap();
        let br = m.create_op(
            Sym::new("cf.cond_br"),
            OpSpec {
                operands: vec![c],
                successors: vec![(b1, vec![x]), (b1, vec![])],
                ..OpSpec::default()
            },
        );
        m.insert(br, InsertPoint::End(b0));
        assert_eq!(m.regular_operands(br), &[c]);
        assert_eq!(m.successor_args(br, 0), &[x]);
        assert_eq!(m.successor_args(br, 1), &[] as &[ValueId]);
        m.push_successor_arg(br, 1, x);
        assert_eq!(m.successor_args(br, 1), &[x]);
        assert_eq!(m.uses(x).len(), 2);
        m.set_attr(br, "z", Attribute::Unit);
        m.set_attr(br, "a", Attribute::i64(1));
        assert_eq!(m.attrs(br)[0].0, "a");
        assert_eq!(m.attr(br, "a"), Some(&Attribute::i64(1)));
    }
}
