//! Where a view lies in its buffer, read off the ops that made it: its
//! offset as a sum of products of index values, its sizes and strides as
//! products. Products are normalized (constants multiplied out, `muli`
//! trees unfolded, factors sorted), so a dynamic stride computed as the
//! product of the sizes inside it compares equal to those sizes: a view
//! is contiguous when every non-unit dim strides over the ones inside it.

use crate::builder::Builder;
use crate::dialects::memref::static_list;
use crate::module::{Module, OpId, ValueId};
use crate::ops::{ArithOp, MemrefOp};
use crate::types::DYN;

/// `coef` times the product of `values` (sorted); `origin` is the value
/// it was read from, reused when it is built again.
#[derive(Clone, Debug)]
pub struct Product {
    coef: i64,
    values: Vec<ValueId>,
    origin: Option<ValueId>,
}

impl PartialEq for Product {
    fn eq(&self, other: &Product) -> bool {
        self.coef == other.coef && self.values == other.values
    }
}

impl Product {
    fn constant(c: i64) -> Product {
        Product {
            coef: c,
            values: Vec::new(),
            origin: None,
        }
    }

    /// `v` unfolded: constants and `arith.muli` trees (a few levels).
    fn of_value(m: &Module, v: ValueId) -> Option<Product> {
        fn go(m: &Module, v: ValueId, depth: usize, acc: &mut Product) -> Option<()> {
            let def = m.defining_op(v);
            if let Some(c) = def
                .filter(|&o| m.is(o, ArithOp::Constant))
                .and_then(|o| m.attr(o, "value")?.as_int())
            {
                acc.coef = acc.coef.checked_mul(c)?;
                return Some(());
            }
            match def.filter(|&o| depth < 8 && m.is(o, ArithOp::Muli)) {
                Some(o) => {
                    for &x in m.operands(o) {
                        go(m, x, depth + 1, acc)?;
                    }
                }
                None => acc.values.push(v),
            }
            Some(())
        }
        let mut p = Product::constant(1);
        go(m, v, 0, &mut p)?;
        p.values.sort();
        p.origin = Some(v);
        Some(p)
    }

    fn times(&self, other: &Product) -> Option<Product> {
        let mut values = self.values.clone();
        values.extend_from_slice(&other.values);
        values.sort();
        Some(Product {
            coef: self.coef.checked_mul(other.coef)?,
            values,
            origin: None,
        })
    }

    fn is_one(&self) -> bool {
        self.coef == 1 && self.values.is_empty()
    }
}

/// A sum of products.
#[derive(Clone, Debug, Default)]
pub struct Linear(Vec<Product>);

impl Linear {
    fn plus(mut self, p: Product) -> Linear {
        if p.coef != 0 {
            self.0.push(p);
        }
        self
    }

    /// The value when it has no dynamic term.
    pub fn as_static(&self) -> Option<i64> {
        self.0.iter().try_fold(0i64, |acc, p| {
            p.values
                .is_empty()
                .then(|| acc.checked_add(p.coef))
                .flatten()
        })
    }

    /// The index value, built at `b`.
    pub fn build(&self, b: &mut Builder<'_>) -> ValueId {
        let mut terms = self.0.iter().map(|p| match p.origin {
            Some(v) => v,
            None => {
                let c = b.const_index(p.coef);
                p.values.iter().fold(c, |t, &v| b.muli(t, v))
            }
        });
        let first = terms.next();
        let rest: Vec<ValueId> = terms.collect();
        let first = first.unwrap_or_else(|| b.const_index(0));
        rest.into_iter().fold(first, |sum, t| b.addi(sum, t))
    }
}

impl Product {
    /// The one value this product is, if it is one: the value it was read
    /// from, or its only factor.
    pub fn as_value(&self) -> Option<ValueId> {
        match self.values.as_slice() {
            _ if self.origin.is_some() => self.origin,
            [v] if self.coef == 1 => Some(*v),
            _ => None,
        }
    }
}

/// A view's place in its buffer.
pub struct Layout {
    pub offset: Linear,
    pub sizes: Vec<Product>,
    pub strides: Vec<Product>,
}

impl Layout {
    /// Row-major without gaps: unit dims aside, each dim's stride is the
    /// product of the sizes inside it.
    pub fn contiguous(&self) -> bool {
        let mut inside = Product::constant(1);
        for (size, stride) in self.sizes.iter().zip(&self.strides).rev() {
            if size.is_one() {
                continue;
            }
            if *stride != inside {
                return false;
            }
            match inside.times(size) {
                Some(p) => inside = p,
                None => return false,
            }
        }
        true
    }

    /// The number of elements.
    pub fn elements(&self) -> Option<Product> {
        self.sizes
            .iter()
            .try_fold(Product::constant(1), |acc, s| acc.times(s))
    }
}

/// The layout of memref `v`, from its type when that fixes everything,
/// else from the op that made it: an allocation (row-major), a
/// reinterpret_cast, a unit-step subview of the same rank, a cast.
pub fn layout_of(m: &Module, v: ValueId) -> Option<Layout> {
    layout_at(m, v, 0)
}

fn layout_at(m: &Module, v: ValueId, depth: usize) -> Option<Layout> {
    let mt = m.value_type(v).as_memref()?;
    let (strides, offset) = mt.strides_and_offset();
    let known = |xs: &[i64]| !xs.contains(&DYN);
    if known(&mt.shape) && known(&strides) && offset != DYN {
        return Some(Layout {
            offset: Linear::default().plus(Product::constant(offset)),
            sizes: mt.shape.iter().map(|&d| Product::constant(d)).collect(),
            strides: strides.iter().map(|&s| Product::constant(s)).collect(),
        });
    }
    let def = m.defining_op(v).filter(|_| depth < 8)?;
    if m.is(def, MemrefOp::Alloc) && mt.is_identity_layout() {
        let sizes = mixed(m, &mt.shape, m.operands(def))?;
        let mut strides = vec![Product::constant(1); sizes.len()];
        for k in (0..sizes.len().saturating_sub(1)).rev() {
            strides[k] = strides[k + 1].times(&sizes[k + 1])?;
        }
        return Some(Layout {
            offset: Linear::default(),
            sizes,
            strides,
        });
    }
    if m.is(def, MemrefOp::ReinterpretCast) {
        return reinterpret_layout(m, def);
    }
    if m.is(def, MemrefOp::Cast) {
        return layout_at(m, m.operand(def, 0)?, depth + 1);
    }
    if m.is(def, MemrefOp::Subview) {
        return subview_layout(m, def, depth);
    }
    None
}

fn reinterpret_layout(m: &Module, cast: OpId) -> Option<Layout> {
    let segments = static_list(m, cast, "operandSegmentSizes");
    let count = |i: usize| segments.get(i).and_then(|&n| usize::try_from(n).ok());
    let (n_off, n_sizes) = (count(1)?, count(2)?);
    let operands = m.operands(cast);
    let offsets = mixed(
        m,
        &static_list(m, cast, "static_offsets"),
        operands.get(1..)?,
    )?;
    let sizes_at = 1 + n_off;
    let sizes = mixed(
        m,
        &static_list(m, cast, "static_sizes"),
        operands.get(sizes_at..)?,
    )?;
    let strides = mixed(
        m,
        &static_list(m, cast, "static_strides"),
        operands.get(sizes_at + n_sizes..)?,
    )?;
    let offset = offsets.into_iter().next()?;
    (sizes.len() == strides.len()).then(|| Layout {
        offset: Linear::default().plus(offset),
        sizes,
        strides,
    })
}

/// A unit-step subview of the same rank: the source's strides, its offset
/// moved by the subview's offsets along them.
fn subview_layout(m: &Module, view: OpId, depth: usize) -> Option<Layout> {
    if static_list(m, view, "static_strides")
        .iter()
        .any(|&s| s != 1)
    {
        return None;
    }
    let source = layout_at(m, m.operand(view, 0)?, depth + 1)?;
    let statics = static_list(m, view, "static_offsets");
    let n_dyn = statics.iter().filter(|&&o| o == DYN).count();
    let operands = m.operands(view).get(1..)?;
    let offsets = mixed(m, &statics, operands)?;
    let sizes = mixed(
        m,
        &static_list(m, view, "static_sizes"),
        operands.get(n_dyn..)?,
    )?;
    let result = m.result(view, 0)?;
    let rank = m.value_type(result).shape()?.len();
    if rank != sizes.len() || rank != source.strides.len() {
        return None;
    }
    let mut offset = source.offset;
    for (o, s) in offsets.iter().zip(&source.strides) {
        offset = offset.plus(o.times(s)?);
    }
    Some(Layout {
        offset,
        sizes,
        strides: source.strides,
    })
}

/// Static entries as constants, `DYN` ones from `dynamic` in order.
fn mixed(m: &Module, statics: &[i64], dynamic: &[ValueId]) -> Option<Vec<Product>> {
    let mut dynamic = dynamic.iter();
    statics
        .iter()
        .map(|&s| match s {
            DYN => Product::of_value(m, *dynamic.next()?),
            s => Some(Product::constant(s)),
        })
        .collect()
}

/// The buffer under a chain of views: what a reinterpret_cast of the
/// view would address from.
pub fn root(m: &Module, mut v: ValueId) -> ValueId {
    for _ in 0..16 {
        match m.defining_op(v) {
            Some(d)
                if [MemrefOp::Subview, MemrefOp::ReinterpretCast, MemrefOp::Cast]
                    .iter()
                    .any(|&n| m.is(d, n)) =>
            {
                match m.operand(d, 0) {
                    Some(s) => v = s,
                    None => return v,
                }
            }
            _ => return v,
        }
    }
    v
}
