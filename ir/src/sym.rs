//! Interned names: op names and attribute keys compare as integers.
//!
//! The table holds the fixed vocabulary of the compiler only: names that
//! are `&'static str` in onnxc itself (op names of the registered
//! dialects, attribute names of the ONNX op table and of the builtin
//! dialects, onnxc's own `onnx.*` attributes). `Sym::new` takes a
//! `&'static str`, so a name read from a model cannot be interned: the
//! importer keeps attribute names outside the vocabulary in a module-local
//! attribute (see `frontend::import`), which dies with the module. The
//! table thus stays bounded whatever a long-running process is fed.
//!
//! The one exception is the textual IR parser (`onnxc opt`, tests), which
//! may meet arbitrary names in developer-written IR; it interns them
//! through the crate-private [`Sym::intern_text`].

use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Sym(&'static str);

fn table() -> &'static RwLock<HashMap<&'static str, Sym>> {
    static TABLE: OnceLock<RwLock<HashMap<&'static str, Sym>>> = OnceLock::new();
    TABLE.get_or_init(|| RwLock::new(HashMap::new()))
}

impl Sym {
    /// The symbol of a vocabulary name (a string of onnxc itself).
    pub fn new(s: &'static str) -> Sym {
        Sym::intern(s, |s| s)
    }

    /// The symbol of `s` when it has been interned already; never grows
    /// the table.
    pub fn lookup(s: &str) -> Option<Sym> {
        match table().read() {
            Ok(t) => t.get(s).copied(),
            Err(p) => p.into_inner().get(s).copied(),
        }
    }

    /// Interns a name found in textual IR, copying it once. Only the text
    /// parser may: it reads developer input, never a model.
    pub(crate) fn intern_text(s: &str) -> Sym {
        Sym::intern(s, |s| Box::leak(s.to_owned().into_boxed_str()))
    }

    fn intern<'a>(s: &'a str, to_static: impl FnOnce(&'a str) -> &'static str) -> Sym {
        if let Some(sym) = Sym::lookup(s) {
            return sym;
        }
        let mut t = match table().write() {
            Ok(t) => t,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(&sym) = t.get(s) {
            return sym;
        }
        let name = to_static(s);
        let sym = Sym(name);
        t.insert(name, sym);
        sym
    }

    /// Names in the table (for tests that check it stays bounded).
    pub fn table_len() -> usize {
        match table().read() {
            Ok(t) => t.len(),
            Err(p) => p.into_inner().len(),
        }
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }
    /// The dialect prefix of an op name (`arith` for `arith.addf`).
    pub fn dialect(self) -> &'static str {
        self.0.split_once('.').map_or("", |(d, _)| d)
    }
}

// One string per name: the table hands out the first one interned.
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
impl From<&'static str> for Sym {
    fn from(s: &'static str) -> Sym {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_string_per_name() {
        let a = Sym::new("sym.test.a");
        let owned = String::from("sym.test.a");
        assert_eq!(Sym::lookup(&owned), Some(a));
        assert_eq!(
            Sym::lookup(&owned).unwrap().as_str().as_ptr(),
            a.as_str().as_ptr()
        );
        assert_eq!(Sym::lookup("sym.test.never"), None);
        let t = Sym::intern_text(&String::from("sym.test.text"));
        assert_eq!(Sym::new("sym.test.text"), t);
    }
}
