//! Symbolic sizes in shape inference.
//!
//! A dim is `Some(expr)`: a constant, a named symbol (a model's
//! `dim_param`, a generated name for another dynamic input dim, or a fresh
//! symbol for a size an op makes up, like NonZero's count) or an
//! expression of symbols (`(H - 1) floordiv 2 + 1`); `None` only where
//! nothing is known. Ops that require two sizes to be equal (broadcasts,
//! MatMul's inner dims, Concat's other axes, the branches of an If) record
//! the equality with the [`Unifier`]; after the function is inferred the
//! equalities are solved and every type rewritten, so sizes known to be
//! equal carry one name. An equality it cannot solve (two expressions)
//! stays a runtime check in the generated code.

use ir::dim::DimExpr;
use ir::types::TensorType;
use ir::{Module, OpId, Type, ValueId};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

pub type Dim = Option<DimExpr>;
pub type Dims = Vec<Dim>;

pub fn c(v: i64) -> Dim {
    Some(DimExpr::constant(v))
}

/// The static size of `d`.
pub fn value(d: &Dim) -> Option<i64> {
    d.as_ref()?.as_const()
}

pub fn add(a: &Dim, b: &Dim) -> Dim {
    Some(a.as_ref()?.add(b.as_ref()?))
}
pub fn sub(a: &Dim, b: &Dim) -> Dim {
    Some(a.as_ref()?.sub(b.as_ref()?))
}
pub fn mul(a: &Dim, b: &Dim) -> Dim {
    Some(a.as_ref()?.mul(b.as_ref()?))
}
pub fn add_const(a: &Dim, k: i64) -> Dim {
    Some(a.as_ref()?.add_const(k))
}
pub fn scale(a: &Dim, k: i64) -> Dim {
    Some(a.as_ref()?.scale(k))
}
pub fn floordiv(a: &Dim, k: i64) -> Dim {
    a.as_ref()?.floordiv(k)
}
pub fn ceildiv(a: &Dim, k: i64) -> Dim {
    a.as_ref()?.ceildiv(k)
}
/// `a / b` when it divides exactly.
pub fn exact_div(a: &Dim, b: &Dim) -> Dim {
    a.as_ref()?.exact_div(b.as_ref()?)
}

/// The product of `dims` (1 for none).
pub fn product(dims: &[Dim]) -> Dim {
    dims.iter()
        .try_fold(DimExpr::constant(1), |acc, d| Some(acc.mul(d.as_ref()?)))
}

/// The dims of a tensor type; `None` when unranked or not a tensor.
pub fn of_type(t: &Type) -> Option<Dims> {
    t.as_tensor().and_then(TensorType::sym_dims)
}

/// `tensor<dims x elem>`, unranked for `None`.
pub fn to_type(dims: Option<Dims>, elem: Type) -> Type {
    match dims {
        Some(d) => Type::tensor_dims(d, elem),
        None => Type::unranked_tensor(elem),
    }
}

/// Static dims as symbolic ones (`DYN` unknown).
pub fn from_static(shape: &[i64]) -> Dims {
    shape
        .iter()
        .map(|&d| (d != ir::DYN).then(|| DimExpr::constant(d)))
        .collect()
}

/// Equalities between sizes that ops require, collected while a function
/// is inferred, and the fresh symbols made for sizes nothing determines.
#[derive(Default)]
pub struct Unifier {
    pairs: RefCell<Vec<(DimExpr, DimExpr)>>,
    used: RefCell<HashSet<Arc<str>>>,
    made: RefCell<HashSet<Arc<str>>>,
    next: RefCell<usize>,
}

impl Unifier {
    /// A unifier that knows the symbols already in `func`'s types.
    pub fn for_function(m: &Module, func: OpId) -> Unifier {
        let u = Unifier::default();
        let mut used = u.used.borrow_mut();
        for v in function_values(m, func) {
            for d in of_type(m.value_type(v))
                .unwrap_or_default()
                .into_iter()
                .flatten()
            {
                used.extend(d.symbols());
            }
        }
        drop(used);
        u
    }

    /// Records that `a` and `b` are one size.
    pub fn equal(&self, a: &DimExpr, b: &DimExpr) {
        if a != b {
            self.pairs.borrow_mut().push((a.clone(), b.clone()));
        }
    }

    /// A symbol no type of the function uses yet.
    pub fn fresh(&self) -> DimExpr {
        let mut used = self.used.borrow_mut();
        let mut next = self.next.borrow_mut();
        loop {
            let name: Arc<str> = Arc::from(format!("d{}", *next).as_str());
            *next += 1;
            if used.insert(name.clone()) {
                self.made.borrow_mut().insert(name.clone());
                return DimExpr::sym(&name);
            }
        }
    }

    /// Whether `name` is a symbol [`Unifier::fresh`] made.
    pub fn is_fresh(&self, name: &str) -> bool {
        self.made.borrow().contains(name)
    }

    /// Solves the recorded equalities: each symbol that can be expressed
    /// by the others gets a replacement. `keep` ranks the symbols that
    /// should survive (lower first: the model's dim_params, then input
    /// dims, then fresh ones).
    pub fn solve(&self, keep: &dyn Fn(&str) -> u8) -> HashMap<Arc<str>, DimExpr> {
        let mut subst: HashMap<Arc<str>, DimExpr> = HashMap::new();
        for (a, b) in self.pairs.borrow().iter() {
            let (a, b) = (apply(a, &subst), apply(b, &subst));
            if a == b {
                continue;
            }
            let bind = match (a.as_sym(), b.as_sym()) {
                (Some(x), Some(y)) => {
                    // The lower-ranked name survives; ties: the smaller.
                    if (keep(x), x) > (keep(y), y) {
                        Some((x.to_string(), b.clone()))
                    } else {
                        Some((y.to_string(), a.clone()))
                    }
                }
                (Some(x), None) if !b.symbols().iter().any(|s| &**s == x) => {
                    Some((x.to_string(), b.clone()))
                }
                (None, Some(y)) if !a.symbols().iter().any(|s| &**s == y) => {
                    Some((y.to_string(), a.clone()))
                }
                _ => None,
            };
            let Some((name, to)) = bind else {
                continue;
            };
            let one: HashMap<Arc<str>, DimExpr> =
                std::iter::once((Arc::from(name.as_str()), to)).collect();
            for v in subst.values_mut() {
                *v = apply(v, &one);
            }
            subst.extend(one);
        }
        subst
    }
}

/// `e` with the substitution applied.
pub fn apply(e: &DimExpr, subst: &HashMap<Arc<str>, DimExpr>) -> DimExpr {
    if subst.is_empty() {
        return e.clone();
    }
    e.substitute(&|s| subst.get(s).cloned())
}

/// `t` with the substitution applied to its symbolic dims.
pub fn apply_type(t: &Type, subst: &HashMap<Arc<str>, DimExpr>) -> Type {
    let Some(tt) = t.as_tensor() else {
        return t.clone();
    };
    if tt.dims.is_none() || subst.is_empty() {
        return t.clone();
    }
    let dims = tt.sym_dims().unwrap_or_default();
    let dims = dims
        .into_iter()
        .map(|d| d.map(|e| apply(&e, subst)))
        .collect();
    Type::tensor_dims(dims, tt.elem.clone())
}

/// Every value defined in `func`: block arguments and op results, regions
/// included.
pub fn function_values(m: &Module, func: OpId) -> Vec<ValueId> {
    let mut out = Vec::new();
    for op in m.collect_ops(func) {
        for &reg in m.regions(op) {
            for &b in m.region_blocks(reg) {
                out.extend_from_slice(m.block_args(b));
            }
        }
        if op != func {
            out.extend_from_slice(m.results(op));
        }
    }
    out
}

/// Rewrites every type in `func` with the solved substitution.
pub fn rewrite_types(m: &mut Module, func: OpId, subst: &HashMap<Arc<str>, DimExpr>) {
    if subst.is_empty() {
        return;
    }
    for v in function_values(m, func) {
        let t = apply_type(m.value_type(v), subst);
        m.set_value_type(v, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equalities_bind_the_worse_name() {
        let u = Unifier::default();
        let (n, b, d0) = (DimExpr::sym("N"), DimExpr::sym("batch"), DimExpr::sym("d0"));
        u.equal(&d0, &n);
        u.equal(&n, &b);
        u.equal(&DimExpr::sym("d1"), &n.scale(2));
        let keep = |s: &str| match s {
            "batch" => 0,
            "N" => 1,
            _ => 2,
        };
        let s = u.solve(&keep);
        assert_eq!(apply(&d0, &s), b);
        assert_eq!(apply(&n, &s), b);
        assert_eq!(apply(&DimExpr::sym("d1"), &s), b.scale(2));
        // Two expressions cannot be solved: nothing is bound.
        let u = Unifier::default();
        u.equal(&n.scale(2), &b.add_const(1));
        assert!(u.solve(&keep).is_empty());
    }

    #[test]
    fn fresh_symbols_avoid_names_in_use() {
        let u = Unifier::default();
        u.used.borrow_mut().insert(Arc::from("d0"));
        assert_eq!(u.fresh().to_string(), "d1");
        assert_eq!(u.fresh().to_string(), "d2");
    }
}
