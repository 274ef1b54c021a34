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
    /// Every entry stored so far, in key order: the keys written and the
    /// keys below them, which read as the default unless written.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (K, &V)> {
        self.elems.iter().enumerate().map(|(i, v)| (K::new(i), v))
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

/// A set of entities as a bit vector: O(1) insert and lookup, sized by the
/// largest key inserted.
#[derive(Clone, Debug)]
pub struct EntitySet<K: EntityRef> {
    words: Vec<u64>,
    len: usize,
    _key: PhantomData<K>,
}

impl<K: EntityRef> Default for EntitySet<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: EntityRef> EntitySet<K> {
    pub fn new() -> Self {
        EntitySet {
            words: Vec::new(),
            len: 0,
            _key: PhantomData,
        }
    }
    pub fn contains(&self, k: K) -> bool {
        let i = k.index();
        self.words
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
    /// Adds `k`; true when it was not in the set.
    pub fn insert(&mut self, k: K) -> bool {
        let i = k.index();
        if i / 64 >= self.words.len() {
            self.words.resize(i / 64 + 1, 0);
        }
        let w = &mut self.words[i / 64];
        let bit = 1 << (i % 64);
        let fresh = *w & bit == 0;
        *w |= bit;
        self.len += usize::from(fresh);
        fresh
    }
    /// Removes `k`; true when it was in the set.
    pub fn remove(&mut self, k: K) -> bool {
        let i = k.index();
        let Some(w) = self.words.get_mut(i / 64) else {
            return false;
        };
        let bit = 1 << (i % 64);
        let had = *w & bit != 0;
        *w &= !bit;
        self.len -= usize::from(had);
        had
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn clear(&mut self) {
        self.words.clear();
        self.len = 0;
    }
    /// The members in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = K> + '_ {
        self.words.iter().enumerate().flat_map(|(wi, &w)| {
            (0..64)
                .filter(move |b| w & (1u64 << b) != 0)
                .map(move |b| K::new(wi * 64 + b))
        })
    }
}

impl<K: EntityRef> FromIterator<K> for EntitySet<K> {
    fn from_iter<I: IntoIterator<Item = K>>(iter: I) -> Self {
        let mut s = EntitySet::new();
        for k in iter {
            s.insert(k);
        }
        s
    }
}

impl<K: EntityRef> Extend<K> for EntitySet<K> {
    fn extend<I: IntoIterator<Item = K>>(&mut self, iter: I) {
        for k in iter {
            self.insert(k);
        }
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
        let set: Vec<(Thing, u32)> = s.iter().map(|(k, &v)| (k, v)).collect();
        assert_eq!(set, vec![(a, 0), (b, 7)]);
    }

    #[test]
    fn entity_set() {
        let mut s: EntitySet<Thing> = EntitySet::new();
        assert!(s.insert(Thing::new(3)));
        assert!(!s.insert(Thing::new(3)));
        assert!(s.insert(Thing::new(200)));
        assert!(s.contains(Thing::new(200)) && !s.contains(Thing::new(4)));
        assert_eq!(
            s.iter().collect::<Vec<_>>(),
            vec![Thing::new(3), Thing::new(200)]
        );
        assert!(s.remove(Thing::new(3)) && !s.remove(Thing::new(3)));
        assert_eq!(s.len(), 1);
    }
}
