//! Index arithmetic the kernels share: integers to and from `index`,
//! negative indices wrapped, products of sizes.

use ir::builder::CmpI;
use ir::{Builder, Type, ValueId};

/// Element `j` of a 1-D (or 0-D) integer memref as an `index`.
pub fn index_at(b: &mut Builder<'_>, m: ValueId, j: Option<i64>) -> ValueId {
    let idx: Vec<ValueId> = j.map(|j| b.const_index(j)).into_iter().collect();
    let v = b.load(m, &idx);
    to_index(b, v)
}

/// An integer or float scalar as an `index`.
pub fn to_index(b: &mut Builder<'_>, v: ValueId) -> ValueId {
    let t = b.m.value_type(v).clone();
    if t == Type::Index {
        return v;
    }
    let v = if t.is_float() {
        b.fptosi(v, Type::i64())
    } else {
        v
    };
    b.index_cast(v, Type::Index)
}

/// An `index` as a scalar of type `t`.
pub fn from_index(b: &mut Builder<'_>, v: ValueId, t: &Type) -> ValueId {
    let i = b.index_cast(v, Type::i64());
    if *t == Type::i64() {
        return i;
    }
    if t.is_float() {
        return b.sitofp(i, t.clone());
    }
    if t.int_width().is_some_and(|w| w < 64) {
        return b.trunci(i, t.clone());
    }
    i
}

/// A possibly negative index made non-negative: `i < 0 ? i + d : i`.
pub fn wrap(b: &mut Builder<'_>, i: ValueId, d: ValueId, zero: ValueId) -> ValueId {
    let neg = b.cmpi(CmpI::Slt, i, zero);
    let w = b.addi(i, d);
    b.select(neg, w, i)
}

/// The product of `ds` (1 for none).
pub fn product(b: &mut Builder<'_>, ds: &[ValueId]) -> ValueId {
    let mut acc = b.const_index(1);
    for &d in ds {
        acc = b.muli(acc, d);
    }
    acc
}
