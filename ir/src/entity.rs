//! Typed `u32` handles and the maps keyed by them (cranelift-entity style).
//!
//! A `PrimaryMap` owns the data and hands out keys; a `SecondaryMap` stores a
//! side table (liveness, ownership, ...) keyed by the same ids, with a default
//! for keys it has not seen.

use std::marker::PhantomData;
use std::ops::{Index, IndexMut};

/// A dense `u32` handle.
pub trait EntityRef: Copy + Eq + Ord + std::hash::Hash + std::fmt::Debug {
    fn new(index: usize) -> Self;
    fn index(self) -> usize;
}

/// Declares a `u32` newtype handle with a printed prefix.
#[macro_export]
macro_rules! entity {
    ($(#[$m:meta])* $name:ident, $prefix:literal) => {
        $(#[$m])*
        #[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(u32);
        impl $crate::entity::EntityRef for $name {
            #[inline]
            fn new(index: usize) -> Self {
                debug_assert!(index < u32::MAX as usize);
                $name(index as u32)
            }
            #[inline]
            fn index(self) -> usize {
                self.0 as usize
            }
        }
        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

/// Owns values and allocates their keys.
#[derive(Clone, Debug)]
pub struct PrimaryMap<K: EntityRef, V> {
    elems: Vec<V>,
    _key: PhantomData<K>,
}

impl<K: EntityRef, V> Default for PrimaryMap<K, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: EntityRef, V> PrimaryMap<K, V> {
    pub fn new() -> Self {
        PrimaryMap {
            elems: Vec::new(),
            _key: PhantomData,
        }
    }
    pub fn with_capacity(n: usize) -> Self {
        PrimaryMap {
            elems: Vec::with_capacity(n),
            _key: PhantomData,
        }
    }
    pub fn push(&mut self, v: V) -> K {
        let k = K::new(self.elems.len());
        self.elems.push(v);
        k
    }
    pub fn len(&self) -> usize {
        self.elems.len()
    }
    pub fn is_empty(&self) -> bool {
        self.elems.is_empty()
    }
    pub fn is_valid(&self, k: K) -> bool {
        k.index() < self.elems.len()
    }
    pub fn get(&self, k: K) -> Option<&V> {
        self.elems.get(k.index())
    }
    pub fn get_mut(&mut self, k: K) -> Option<&mut V> {
        self.elems.get_mut(k.index())
    }
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = K> + ExactSizeIterator {
        (0..self.elems.len()).map(K::new)
    }
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (K, &V)> {
        self.elems.iter().enumerate().map(|(i, v)| (K::new(i), v))
    }
    pub fn values(&self) -> std::slice::Iter<'_, V> {
        self.elems.iter()
    }
}

impl<K: EntityRef, V> Index<K> for PrimaryMap<K, V> {
    type Output = V;
    #[inline]
    fn index(&self, k: K) -> &V {
        &self.elems[k.index()]
    }
}

impl<K: EntityRef, V> IndexMut<K> for PrimaryMap<K, V> {
    #[inline]
    fn index_mut(&mut self, k: K) -> &mut V {
        &mut self.elems[k.index()]
    }
}

/// A side table keyed by entities of a primary map; missing keys read as the default.
#[derive(Clone, Debug)]
pub struct SecondaryMap<K: EntityRef, V: Clone> {
    elems: Vec<V>,
    default: V,
    _key: PhantomData<K>,
}

impl<K: EntityRef, V: Clone + Default> Default for SecondaryMap<K, V> {
    fn default() -> Self {
        Self::with_default(V::default())
    }
}

impl<K: EntityRef, V: Clone> SecondaryMap<K, V> {
    pub fn with_default(default: V) -> Self {
        SecondaryMap {
            elems: Vec::new(),
            default,
            _key: PhantomData,
        }
    }
    pub fn get(&self, k: K) -> &V {
        self.elems.get(k.index()).unwrap_or(&self.default)
    }
    pub fn set(&mut self, k: K, v: V) {
        *self.entry(k) = v;
    }
    pub fn entry(&mut self, k: K) -> &mut V {
        let i = k.index();
        if i >= self.elems.len() {
            self.elems.resize(i + 1, self.default.clone());
        }
        &mut self.elems[i]
    }
    pub fn clear(&mut self) {
        self.elems.clear();
    }
}

impl<K: EntityRef, V: Clone> Index<K> for SecondaryMap<K, V> {
    type Output = V;
    #[inline]
    fn index(&self, k: K) -> &V {
        self.get(k)
    }
}

impl<K: EntityRef, V: Clone> IndexMut<K> for SecondaryMap<K, V> {
    #[inline]
    fn index_mut(&mut self, k: K) -> &mut V {
        self.entry(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    entity!(Thing, "t");

    #[test]
    fn primary_and_secondary() {
        let mut p: PrimaryMap<Thing, &str> = PrimaryMap::new();
        let a = p.push("a");
        let b = p.push("b");
        assert_eq!(p[b], "b");
        let mut s: SecondaryMap<Thing, u32> = SecondaryMap::default();
        assert_eq!(s[a], 0);
        s[b] = 7;
        assert_eq!(s[b], 7);
        assert_eq!(s[a], 0);
        assert_eq!(format!("{a}"), "t0");
    }
}
