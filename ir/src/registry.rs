//! Op definitions: traits, pretty-syntax class and verifier per op name.
//!
//! Dialects register `&'static [OpDef]` tables once; lookups are by the
//! interned name. Unregistered ops are allowed in the generic form (like
//! MLIR's `--allow-unregistered-dialect`) but get no custom verification.

use crate::diag::Result;
use crate::module::{Module, OpId};
use crate::sym::Sym;
use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

/// Op properties the generic machinery needs.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Default)]
pub struct Traits(u32);

impl Traits {
    pub const NONE: Traits = Traits(0);
    /// Ends a block.
    pub const TERMINATOR: Traits = Traits(1);
    /// No side effects: may be removed when unused, moved, folded.
    pub const PURE: Traits = Traits(1 << 1);
    /// Regions cannot see values defined outside (functions, modules).
    pub const ISOLATED: Traits = Traits(1 << 2);
    /// Regions have a single block without a terminator.
    pub const NO_TERMINATOR: Traits = Traits(1 << 3);
    /// Returns from the enclosing region's op (func.return, scf.yield).
    pub const RETURN_LIKE: Traits = Traits(1 << 4);
    pub const COMMUTATIVE: Traits = Traits(1 << 5);
    /// Operands and results all have one type.
    pub const SAME_TYPE: Traits = Traits(1 << 6);
    /// Allocates memory (memref.alloc, memref.alloca, memref.realloc).
    pub const ALLOCATES: Traits = Traits(1 << 7);
    /// Result aliases operand 0 (views and casts of a memref).
    pub const VIEW: Traits = Traits(1 << 8);
    /// Defines a symbol (`sym_name`).
    pub const SYMBOL: Traits = Traits(1 << 9);

    pub const fn union(self, other: Traits) -> Traits {
        Traits(self.0 | other.0)
    }
    pub const fn contains(self, other: Traits) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for Traits {
    type Output = Traits;
    fn bitor(self, rhs: Traits) -> Traits {
        self.union(rhs)
    }
}

/// The pretty form an op prints and parses in. Ops whose syntax fits no
/// class use `Custom` and are handled by name in `text`.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Syntax {
    /// `"dialect.op"(%a) ({...}) {attrs} : (T) -> U` only.
    Generic,
    /// `%r = op %a, %b attr-dict : T` (operands and result share `T`).
    SameType,
    /// `%r = op %a attr-dict : T to U`.
    Cast,
    /// Op-specific form.
    Custom,
    /// A declarative format from the op's table row (`text::format`).
    Format(&'static str),
}

pub type VerifyFn = fn(&Module, OpId) -> Result<()>;

#[derive(Debug)]
pub struct OpDef {
    pub name: &'static str,
    pub traits: Traits,
    pub syntax: Syntax,
    /// Op-specific checks beyond the generic structural ones.
    pub verify: Option<VerifyFn>,
}

impl OpDef {
    pub const fn new(name: &'static str, traits: Traits, syntax: Syntax) -> OpDef {
        OpDef {
            name,
            traits,
            syntax,
            verify: None,
        }
    }
    pub const fn verified(mut self, f: VerifyFn) -> OpDef {
        self.verify = Some(f);
        self
    }
}

type Table = HashMap<Sym, &'static OpDef>;

fn table() -> &'static RwLock<Table> {
    static TABLE: OnceLock<RwLock<Table>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = HashMap::new();
        for def in crate::dialects::builtin_ops() {
            t.insert(Sym::new(def.name), def);
        }
        RwLock::new(t)
    })
}

/// Registers a dialect's ops (idempotent; later definitions win).
pub fn register(defs: &'static [OpDef]) {
    let mut t = match table().write() {
        Ok(t) => t,
        Err(p) => p.into_inner(),
    };
    for def in defs {
        t.insert(Sym::new(def.name), def);
    }
}

/// The definition of the op spelled `name`, without interning it. The
/// table is read first: building it interns the builtin ops' names, which
/// `Sym::lookup` would otherwise not find yet in a fresh process.
pub fn lookup_name(name: &str) -> Option<&'static OpDef> {
    let t = match table().read() {
        Ok(t) => t,
        Err(p) => p.into_inner(),
    };
    t.get(&Sym::lookup(name)?).copied()
}

pub fn lookup(name: Sym) -> Option<&'static OpDef> {
    let t = match table().read() {
        Ok(t) => t,
        Err(p) => p.into_inner(),
    };
    t.get(&name).copied()
}

pub fn traits(name: Sym) -> Traits {
    lookup(name).map_or(Traits::NONE, |d| d.traits)
}

impl Module {
    pub fn has_trait(&self, op: OpId, t: Traits) -> bool {
        traits(self.name(op)).contains(t)
    }
    pub fn is_terminator(&self, op: OpId) -> bool {
        self.has_trait(op, Traits::TERMINATOR)
    }
    pub fn is_pure(&self, op: OpId) -> bool {
        self.has_trait(op, Traits::PURE)
    }
}
