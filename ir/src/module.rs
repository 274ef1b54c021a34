//! Arena storage of a module: ops, values, blocks and regions as `u32` ids.
//!
//! Data lives in primary maps; the order of ops in a block is a doubly linked
//! list (layout apart from data), so inserting and erasing are O(1). Erasing
//! leaves a tombstone; `compact()` rebuilds the arenas without them, which
//! is where attributes (and the constant buffers they share) are dropped.

use crate::attr::Attribute;
use crate::diag::Location;
use crate::entity::{EntityRef, PrimaryMap, SecondaryMap};
use crate::ops::BuiltinOp;
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

const SYM_NAME: &str = "sym_name";

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
    /// Per operand, the position of its `Use` in the value's use list, so
    /// removing a use is O(1) (a value used by thousands of ops, like a
    /// loop bound constant, made erasing them one by one quadratic).
    use_pos: SmallVec<[u32; 4]>,
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
    /// Tombstones in `ops` (erased since the last compaction).
    erased_ops: usize,
    /// Bumped when the top-level ops or a `sym_name` change: the
    /// generation `symbols` was built at tells whether it is current.
    sym_gen: u64,
    symbols: SymbolIndex,
}

/// `sym_name` → top-level op, built on the first lookup after a change
/// (a linear scan per lookup made passes that resolve every call
/// quadratic in the number of functions and globals).
#[derive(Default)]
struct SymbolIndex(std::sync::Mutex<Option<(u64, std::collections::HashMap<String, OpId>)>>);

impl Clone for SymbolIndex {
    fn clone(&self) -> Self {
        SymbolIndex::default()
    }
}

impl std::fmt::Debug for SymbolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SymbolIndex")
    }
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
            erased_ops: 0,
            sym_gen: 0,
            symbols: SymbolIndex::default(),
        };
        let top = m.create_op(
            Sym::new(BuiltinOp::Module.name()),
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
        crate::cancel::poll();
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
            use_pos: SmallVec::new(),
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
            self.push_use(v, op, i);
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
        self.symbol_inserted(block, op);
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
        self.touch_symbols(block);
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

    fn is_top_block(&self, block: BlockId) -> bool {
        let top = self.ops.get(self.top).and_then(|t| t.regions.first());
        top.and_then(|&r| self.regions[r].blocks.first()) == Some(&block)
    }

    /// A change in `block`: the symbol index is stale if it is the top one.
    fn touch_symbols(&mut self, block: BlockId) {
        if self.is_top_block(block) {
            self.sym_gen += 1;
        }
    }

    /// `op` goes into `block`: a new symbol is added to a current index
    /// (passes that add globals between lookups would rebuild it each
    /// time); a name already there makes the index stale.
    fn symbol_inserted(&mut self, block: BlockId, op: OpId) {
        if !self.is_top_block(block) {
            return;
        }
        // Fields borrowed apart: the name lives in `ops`, the index beside.
        let attrs = &self.ops[op].attrs;
        let name = attrs
            .binary_search_by(|(k, _)| k.as_str().cmp(SYM_NAME))
            .ok()
            .and_then(|i| attrs[i].1.as_str());
        let Some(name) = name else {
            return;
        };
        let index = match self.symbols.0.get_mut() {
            Ok(i) => i,
            Err(p) => p.into_inner(),
        };
        match index {
            Some((gen, map)) if *gen == self.sym_gen && !map.contains_key(name) => {
                map.insert(name.to_string(), op);
            }
            _ => self.sym_gen += 1,
        }
    }

    /// Finds a top-level op by its `sym_name` (the first, like a scan).
    pub fn lookup_symbol(&self, sym: &str) -> Option<OpId> {
        let mut index = match self.symbols.0.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if let Some((gen, map)) = index.as_ref() {
            if *gen == self.sym_gen {
                return map.get(sym).copied();
            }
        }
        let mut map = std::collections::HashMap::new();
        for o in self.block_ops(self.body()) {
            if let Some(name) = self.attr(o, SYM_NAME).and_then(Attribute::as_str) {
                map.entry(name.to_string()).or_insert(o);
            }
        }
        let found = map.get(sym).copied();
        *index = Some((self.sym_gen, map));
        found
    }

    pub fn move_to(&mut self, op: OpId, ip: InsertPoint) {
        self.detach(op);
        self.insert(op, ip);
    }

    /// Erases an op and everything nested in it. Its results must be unused
    /// outside of it (replace them first).
    pub fn erase_op(&mut self, op: OpId) {
        crate::cancel::poll();
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
        self.erased_ops += 1;
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
        self.ops[op].use_pos.clear();
        self.ops[op].successors.clear();
    }

    /// Records that operand `index` of `op` (already set to `v`) uses `v`.
    pub(crate) fn push_use(&mut self, v: ValueId, op: OpId, index: usize) {
        let uses = &mut self.values[v].uses;
        let pos = uses.len() as u32;
        uses.push(Use {
            op,
            index: index as u32,
        });
        let slots = &mut self.ops[op].use_pos;
        if slots.len() <= index {
            slots.resize(index + 1, 0);
        }
        slots[index] = pos;
    }

    /// Removes `u` from the uses of `v`, in O(1) through the operand's
    /// recorded position (a search only if that were ever stale).
    fn remove_use(&mut self, v: ValueId, u: Use) {
        let hint = self.ops[u.op].use_pos.get(u.index as usize).copied();
        let uses = &mut self.values[v].uses;
        let pos = match hint {
            Some(p) if uses.get(p as usize) == Some(&u) => p as usize,
            _ => match uses.iter().position(|x| *x == u) {
                Some(p) => p,
                None => return,
            },
        };
        uses.swap_remove(pos);
        if let Some(&moved) = uses.get(pos) {
            if let Some(slot) = self.ops[moved.op].use_pos.get_mut(moved.index as usize) {
                *slot = pos as u32;
            }
        }
    }

    pub fn is_erased(&self, op: OpId) -> bool {
        self.ops[op].erased
    }
    pub fn name(&self, op: OpId) -> Sym {
        self.ops[op].name
    }
    pub fn is(&self, op: OpId, name: impl crate::ops::OpName) -> bool {
        self.ops[op].name.as_str() == name.op_name()
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
        self.push_use(v, op, i);
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
        self.ops[op].operands = all.clone();
        for (i, &v) in all.iter().enumerate() {
            self.push_use(v, op, i);
        }
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
        self.ops[op].operands = SmallVec::from_slice(&operands);
        for (k, &val) in operands.iter().enumerate() {
            self.push_use(val, op, k);
        }
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
    pub fn set_attr(&mut self, op: OpId, name: &'static str, value: Attribute) {
        crate::cancel::poll();
        if name == SYM_NAME {
            self.sym_gen += 1;
        }
        let key = Sym::new(name);
        let attrs = &mut self.ops[op].attrs;
        match attrs.binary_search_by(|(k, _)| k.as_str().cmp(name)) {
            Ok(i) => attrs[i].1 = value,
            Err(i) => attrs.insert(i, (key, value)),
        }
    }
    pub fn remove_attr(&mut self, op: OpId, name: &str) -> Option<Attribute> {
        if name == SYM_NAME {
            self.sym_gen += 1;
        }
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
        for u in uses {
            self.ops[u.op].operands[u.index as usize] = new;
            self.push_use(new, u.op, u.index as usize);
        }
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

mod blocks;
mod clone;
mod walk;

pub use clone::ValueMap;

#[cfg(test)]
mod tests;
