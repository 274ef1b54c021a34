//! Where the memory of a memref value comes from: its *origins*.
//!
//! Views (`Traits::VIEW`, operand 0) and `arith.select` pass memory through;
//! everything else starts a new origin. A value may point into any of its
//! origins and into nothing else, so two values whose origins cannot overlap
//! never alias.

use ir::registry::Traits;
use ir::{ArithOp, FuncOp, MemrefOp};
use ir::{Attribute, Module, OpId, ValueDef, ValueId};
use smallvec::SmallVec;
use std::collections::HashMap;

/// One place memory can come from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// The result of an allocating op (`memref.alloc`, `alloca`, `realloc`,
    /// `bufferization.clone`) or of a call to a function of the module:
    /// fresh memory nobody else can name.
    Alloc(ValueId),
    /// An argument of the enclosing function: the caller's buffer.
    Arg(ValueId),
    /// `memref.get_global @name`.
    Global(String),
    /// Anything else (nested block arguments, results of unknown ops).
    Unknown(ValueId),
}

/// The origins of one value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origins {
    pub list: SmallVec<[Origin; 1]>,
    /// True if the value is always exactly the start of one of its origins
    /// (no view in between), so its pointer equals that origin's pointer.
    pub exact: bool,
}

impl Origins {
    fn leaf(o: Origin) -> Origins {
        let mut list = SmallVec::new();
        list.push(o);
        Origins { list, exact: true }
    }
    /// Allocation results among the origins.
    pub fn allocs(&self) -> impl Iterator<Item = ValueId> + '_ {
        self.list.iter().filter_map(|o| match o {
            Origin::Alloc(v) => Some(*v),
            _ => None,
        })
    }
}

/// True if memory from `a` and memory from `b` may be the same.
pub fn may_overlap(a: &Origin, b: &Origin) -> bool {
    use Origin::{Alloc, Global, Unknown};
    match (a, b) {
        (Unknown(_), _) | (_, Unknown(_)) => true,
        (Alloc(x), Alloc(y)) => x == y,
        // Fresh memory is never an argument or a global.
        (Alloc(_), _) | (_, Alloc(_)) => false,
        (Global(x), Global(y)) => x == y,
        // The caller may pass the same buffer (or a global) twice.
        _ => true,
    }
}

/// True if two values may point into the same memory.
pub fn may_alias(a: &Origins, b: &Origins) -> bool {
    a.list
        .iter()
        .any(|x| b.list.iter().any(|y| may_overlap(x, y)))
}

/// `may_alias` for two values both in use at one program point: memory
/// allocated inside a block cannot be the memory of that block's arguments,
/// which stay alive across the allocation.
pub fn may_alias_live(m: &Module, a: &Origins, b: &Origins) -> bool {
    let fresh_after = |x: &Origin, y: &Origin| match (x, y) {
        (Origin::Alloc(n), Origin::Unknown(arg)) => match m.value_def(*arg) {
            ValueDef::BlockArg(blk, _) => m
                .defining_op(*n)
                .is_some_and(|d| m.ancestor_in_block(blk, d).is_some()),
            _ => false,
        },
        _ => false,
    };
    a.list.iter().any(|x| {
        b.list
            .iter()
            .any(|y| may_overlap(x, y) && !fresh_after(x, y) && !fresh_after(y, x))
    })
}

/// The value a chain of views starts from (`v` itself if it is no view).
/// Views keep their source's aligned pointer, so two values with the same
/// base always have the same base pointer: they must alias.
pub fn view_base(m: &Module, mut v: ValueId) -> ValueId {
    while let Some(d) = m.defining_op(v).filter(|&d| m.has_trait(d, Traits::VIEW)) {
        match m.operand(d, 0) {
            Some(src) => v = src,
            None => break,
        }
    }
    v
}

/// True if `a` and `b` always have the same base pointer.
pub fn must_alias(m: &Module, a: ValueId, b: ValueId) -> bool {
    a == b || view_base(m, a) == view_base(m, b)
}

/// True for a call to a function of this module with a body: by the
/// function boundary ABI its memref results are fresh and caller-owned.
pub fn returns_fresh(m: &Module, op: OpId) -> bool {
    if !m.is(op, FuncOp::Call) {
        return false;
    }
    let callee = m.attr(op, "callee").and_then(Attribute::as_symbol);
    callee.and_then(|c| m.lookup_symbol(c)).is_some_and(|f| {
        m.is(f, FuncOp::Func)
            && !ir::dialects::func::is_declaration(m, f)
            && m.attr(f, crate::dynamic::DYNAMIC_OWNERSHIP).is_none()
    })
}

/// How a value gets its memory: from itself, or from other values.
enum Source {
    Leaf(Origin),
    Derived {
        inputs: SmallVec<[ValueId; 2]>,
        view: bool,
    },
}

fn source(m: &Module, v: ValueId) -> Source {
    let op = match m.value_def(v) {
        ValueDef::Result(op, _) => op,
        ValueDef::BlockArg(b, _) => {
            let entry_of_func = m
                .block_parent_op(b)
                .filter(|&p| m.is(p, FuncOp::Func))
                .and_then(|p| m.region(p, 0))
                .and_then(|r| m.entry_block(r))
                == Some(b);
            return Source::Leaf(if entry_of_func {
                Origin::Arg(v)
            } else {
                Origin::Unknown(v)
            });
        }
        ValueDef::Erased => return Source::Leaf(Origin::Unknown(v)),
    };
    if m.has_trait(op, Traits::ALLOCATES) || returns_fresh(m, op) {
        return Source::Leaf(Origin::Alloc(v));
    }
    if m.has_trait(op, Traits::VIEW) {
        if let Some(src) = m.operand(op, 0) {
            return Source::Derived {
                inputs: SmallVec::from_slice(&[src]),
                view: true,
            };
        }
    }
    if m.is(op, ArithOp::Select) {
        if let (Some(a), Some(b)) = (m.operand(op, 1), m.operand(op, 2)) {
            return Source::Derived {
                inputs: SmallVec::from_slice(&[a, b]),
                view: false,
            };
        }
    }
    if m.is(op, MemrefOp::GetGlobal) {
        if let Some(name) = m.attr(op, "name").and_then(Attribute::as_symbol) {
            return Source::Leaf(Origin::Global(name.to_string()));
        }
    }
    Source::Leaf(Origin::Unknown(v))
}

/// Memoized origins of memref values.
#[derive(Default)]
pub struct AliasInfo {
    /// A hash map, not a table over all value ids: `dealloc-simplification`
    /// makes one `AliasInfo` per dealloc it rewrites, for a few values each,
    /// and a dense table per instance would be quadratic in the function.
    cache: HashMap<ValueId, Origins>,
}

impl AliasInfo {
    pub fn new() -> AliasInfo {
        AliasInfo::default()
    }

    /// Fixes the origins of `v` (values the local rules cannot see through).
    pub fn set(&mut self, v: ValueId, o: Origins) {
        self.cache.insert(v, o);
    }

    /// The origins of `v` (computed without recursion: view chains can be long).
    pub fn origins(&mut self, m: &Module, v: ValueId) -> &Origins {
        if !self.cache.contains_key(&v) {
            self.compute(m, v);
        }
        // `compute` always fills the entry for `v`.
        self.cache.entry(v).or_default()
    }

    fn compute(&mut self, m: &Module, v: ValueId) {
        let mut stack = vec![(v, false)];
        // The values of one view chain: a few, so a hash set.
        let mut open = std::collections::HashSet::new();
        while let Some((w, expanded)) = stack.pop() {
            if self.cache.contains_key(&w) || (!expanded && !open.insert(w)) {
                continue;
            }
            match source(m, w) {
                Source::Leaf(o) => {
                    self.cache.insert(w, Origins::leaf(o));
                }
                Source::Derived { inputs, view } if expanded => {
                    let mut out = Origins {
                        list: SmallVec::new(),
                        exact: !view,
                    };
                    for i in inputs {
                        // SSA values defined by ops cannot form cycles; a
                        // missing entry would be one, so stay conservative.
                        let Some(o) = self.cache.get(&i) else {
                            out.list.push(Origin::Unknown(i));
                            out.exact = false;
                            continue;
                        };
                        out.exact &= o.exact;
                        for x in &o.list {
                            if !out.list.contains(x) {
                                out.list.push(x.clone());
                            }
                        }
                    }
                    self.cache.insert(w, out);
                }
                Source::Derived { inputs, .. } => {
                    stack.push((w, true));
                    for i in inputs {
                        if !self.cache.contains_key(&i) {
                            stack.push((i, false));
                        }
                    }
                }
            }
        }
    }
}
