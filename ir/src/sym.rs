//! Interned names: op names and attribute keys compare as integers.
//!
//! Names live for the whole process. The set is bounded in practice (op
//! names of the registered dialects, ONNX attribute names), so leaking the
//! few distinct strings is cheaper than reference counting every compare.

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Sym(&'static str);

fn table() -> &'static RwLock<HashMap<&'static str, Sym>> {
    static TABLE: OnceLock<RwLock<HashMap<&'static str, Sym>>> = OnceLock::new();
    TABLE.get_or_init(|| RwLock::new(HashMap::new()))
}

impl Sym {
    pub fn new(s: &str) -> Sym {
        if let Ok(t) = table().read() {
            if let Some(&sym) = t.get(s) {
                return sym;
            }
        }
        let mut t = match table().write() {
            Ok(t) => t,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(&sym) = t.get(s) {
            return sym;
        }
        let leaked: &'static str = Box::leak(s.to_owned().into_boxed_str());
        let sym = Sym(leaked);
        t.insert(leaked, sym);
        sym
    }
    pub fn as_str(self) -> &'static str {
        self.0
    }
    /// The dialect prefix of an op name (`arith` for `arith.addf`).
    pub fn dialect(self) -> &'static str {
        self.0.split_once('.').map_or("", |(d, _)| d)
    }
}

// Pointer identity is name identity: each string is leaked exactly once.
impl PartialOrd for Sym {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Sym {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.cmp(other.0)
    }
}

impl std::fmt::Debug for Sym {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}
impl std::fmt::Display for Sym {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}
impl From<&str> for Sym {
    fn from(s: &str) -> Sym {
        Sym::new(s)
    }
}
impl PartialEq<str> for Sym {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}
impl PartialEq<&str> for Sym {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}
