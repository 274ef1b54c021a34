//! Shape and type inference for `onnx.*` ops: result types from operand
//! types, attributes, and the values of `onnx.Constant` operands.

pub mod control;
mod ctx;
mod data_ops;
pub mod dims;
mod elementwise;
mod misc;
mod ml;
mod nn;
mod reduce;
mod rules;
mod sequence;
mod shape_ops;
mod signal;
mod tensor_ops;
mod vision;

pub(crate) use ctx::Ctx;
use ir::dialects::op_error;
use ir::entity::SecondaryMap;
use ir::{Diagnostic, Module, OpId, Type, ValueId, DYN};
use onnx::{branches, OpKind};

/// A rule's answer: the result types, or `None` when the rule cannot tell
/// (the declared types stay).
pub(crate) type Inferred = Result<Option<Vec<Type>>, Diagnostic>;

/// Declared types of values (`None`: the value's current type counts as
/// declared).
pub type Declared = SecondaryMap<ValueId, Option<Type>>;

/// Inferred result types of `op`, or `None` for ops inference does not know
/// (their declared types stay).
pub fn infer_op(m: &Module, op: OpId) -> Result<Option<Vec<Type>>, Diagnostic> {
    infer_op_with(m, op, None)
}

/// [`infer_op`] recording the equalities between sizes the op requires.
fn infer_op_with(
    m: &Module,
    op: OpId,
    unify: Option<&dims::Unifier>,
) -> Result<Option<Vec<Type>>, Diagnostic> {
    let Some(kind) = OpKind::of(m, op) else {
        return Ok(None);
    };
    // Nothing is known of a value onnxc does not know, nor of what it feeds.
    let operand_types = m.operands(op).iter().map(|&v| m.value_type(v));
    if operand_types.into_iter().any(crate::foreign::is_foreign) {
        return Ok(None);
    }
    let cx = Ctx { m, op, unify };
    Ok(rules::infer(&cx, kind)?.map(|tys| cx.fit(tys)))
}

/// One result of `shape` and `elem`.
fn one(shape: Option<Vec<i64>>, elem: Type) -> Inferred {
    Ok(Some(vec![tensor(shape, elem)]))
}

/// Infers every op of `func`'s body in order (regions included), sets the
/// result types, then the function type from the arguments and the
/// returned values.
pub fn infer_function(m: &mut Module, func: OpId) -> Result<(), Diagnostic> {
    infer_function_with(m, func, &Declared::default())
}

/// [`infer_function`] with the declared types of values given apart (the
/// importer's, before it inferred on the fly); values missing from
/// `given` count as declared with their current type.
pub fn infer_function_with(m: &mut Module, func: OpId, given: &Declared) -> Result<(), Diagnostic> {
    let Some(entry) = m.region(func, 0).and_then(|r| m.entry_block(r)) else {
        return Ok(());
    };
    // Declared types, kept apart so that re-inferring a loop body refines
    // from the declarations, not from the previous round.
    let mut declared = given.clone();
    let mut declare = |v: ValueId, m: &Module| {
        let d = declared.entry(v);
        if d.is_none() {
            *d = Some(m.value_type(v).clone());
        }
    };
    for op in m.collect_ops(func) {
        for &r in m.results(op) {
            declare(r, m);
        }
        for &reg in m.regions(op) {
            for &b in m.region_blocks(reg) {
                for &a in m.block_args(b) {
                    declare(a, m);
                }
            }
        }
    }
    let ops = m.collect_ops(func).len();
    let unify = dims::Unifier::for_function(m, func);
    let mut walk = Walk {
        declared: &declared,
        budget: ops.saturating_mul(16).saturating_add(4096),
        unify: &unify,
    };
    walk.block(m, entry)?;
    let keep = symbol_ranks(m, func);
    let subst = unify.solve(&|s| keep.get(s).copied().unwrap_or(2));
    dims::rewrite_types(m, func, &subst);
    // A body without its return yet keeps the declared signature.
    ir::dialects::func::refresh_signature(m, func);
    Ok(())
}

/// Which symbols should survive unification: the model's dim_params (0),
/// other symbols of the function's inputs (1); fresh ones rank 2.
fn symbol_ranks(m: &Module, func: OpId) -> std::collections::HashMap<String, u8> {
    let mut ranks = std::collections::HashMap::new();
    if let Some(entry) = m.region(func, 0).and_then(|r| m.entry_block(r)) {
        for &a in m.block_args(entry) {
            for d in dims::of_type(m.value_type(a))
                .unwrap_or_default()
                .into_iter()
                .flatten()
            {
                for s in d.symbols() {
                    ranks.insert(s.to_string(), 1);
                }
            }
        }
    }
    let params = m
        .attr(func, crate::dialect::DIM_PARAMS_IN)
        .and_then(ir::Attribute::as_array)
        .unwrap_or(&[]);
    for names in params.iter().filter_map(ir::Attribute::as_array) {
        for n in names.iter().filter_map(ir::Attribute::as_str) {
            if !n.is_empty() {
                ranks.insert(n.to_string(), 0);
            }
        }
    }
    ranks
}

/// The declared type of `v`: given apart, else its current one.
fn declared_type(m: &Module, v: ValueId, declared: &Declared) -> Type {
    declared
        .get(v)
        .clone()
        .unwrap_or_else(|| m.value_type(v).clone())
}

/// Infers one op now, leaving its types as they are when inference fails
/// (the final pass reports it): the importer's on-the-fly inference, so
/// that later nodes see real operand types.
pub fn infer_now(m: &mut Module, op: OpId, declared: &Declared) {
    if let Ok(Some(types)) = infer_op(m, op) {
        for (r, inferred) in m.results(op).to_vec().into_iter().zip(types) {
            let decl = declared_type(m, r, declared);
            m.set_value_type(r, refine(&decl, inferred).0);
        }
    }
}

/// Sets `v`'s type to `inferred` refined by its declaration; with a
/// unifier, a dynamic dim nothing determines gets a symbol (the one it had,
/// else a fresh one).
fn assign(
    m: &mut Module,
    op: OpId,
    v: ValueId,
    inferred: Type,
    declared: &Declared,
    unify: Option<&dims::Unifier>,
) {
    let decl = declared_type(m, v, declared);
    let (ty, conflict) = refine(&decl, inferred);
    let ty = match unify {
        Some(u) => name_unknown_dims(ty, m.value_type(v), u),
        None => ty,
    };
    if conflict {
        tracing::warn!(
            "{}: declared type {decl} of a value of '{}' contradicts the inferred {ty}; using the inferred type",
            m.loc(op),
            m.name(op)
        );
    }
    m.set_value_type(v, ty);
}

/// `ty` with each unknown dynamic dim named: `before`'s symbol at that
/// position if it had one, else a fresh symbol.
fn name_unknown_dims(ty: Type, before: &Type, u: &dims::Unifier) -> Type {
    let Some(d) = dims::of_type(&ty) else {
        return ty;
    };
    if d.iter().all(Option::is_some) {
        return ty;
    }
    let old = dims::of_type(before).filter(|o| o.len() == d.len());
    let named = d
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            e.or_else(|| {
                old.as_ref()
                    .and_then(|o| o[i].clone())
                    .filter(|x| x.as_const().is_none())
            })
            .or_else(|| Some(u.fresh()))
        })
        .collect();
    Type::tensor_dims(named, ty.element_type().clone())
}

/// Walks blocks in order; `budget` bounds the op inferences of loop-body
/// rounds, so nested loops cannot multiply their rounds without limit.
struct Walk<'d> {
    declared: &'d Declared,
    budget: usize,
    unify: &'d dims::Unifier,
}

impl Walk<'_> {
    fn block(&mut self, m: &mut Module, block: ir::BlockId) -> Result<(), Diagnostic> {
        let ops: Vec<OpId> = m.block_ops(block).collect();
        for op in ops {
            self.budget = self.budget.saturating_sub(1);
            if !m.regions(op).is_empty() {
                self.regions(m, op)?;
            }
            let Some(types) = infer_op_with(m, op, Some(self.unify))? else {
                continue;
            };
            for (r, inferred) in m.results(op).to_vec().into_iter().zip(types) {
                assign(m, op, r, inferred, self.declared, Some(self.unify));
            }
        }
        Ok(())
    }

    /// Infers nested regions; loop bodies get their argument types from
    /// the operands, generalized until the carried types the body yields
    /// fit (or made unranked after a few rounds or when over budget).
    fn regions(&mut self, m: &mut Module, op: OpId) -> Result<(), Diagnostic> {
        let blocks: Vec<ir::BlockId> = m
            .regions(op)
            .iter()
            .filter_map(|&r| m.entry_block(r))
            .collect();
        let Some(mut carried) = control::initial_carried(m, op) else {
            return self.branches(m, op, &blocks);
        };
        let Some(&body) = blocks.first() else {
            return Ok(());
        };
        // A fresh symbol says no more than an unknown dim, and starting
        // from it would cost nested loops a second round each.
        carried = carried
            .iter()
            .map(|t| forget_fresh(t, self.unify))
            .collect();
        // Over budget: one round with unranked carried values, no more.
        let mut last = self.budget == 0;
        if last {
            carried = carried.iter().map(unranked).collect();
        }
        for round in 0..MAX_BODY_ROUNDS {
            let Some(args) = control::body_arg_types(m, op, &carried) else {
                break;
            };
            let block_args = m.block_args(body).to_vec();
            if block_args.len() != args.len() {
                return Err(op_error(
                    m,
                    op,
                    format!(
                        "body has {} arguments, the operands need {}",
                        block_args.len(),
                        args.len()
                    ),
                ));
            }
            for (a, t) in block_args.into_iter().zip(args) {
                assign(m, op, a, t, self.declared, Some(self.unify));
            }
            self.block(m, body)?;
            if last {
                break;
            }
            let Some(yielded) = control::yielded_carried(m, op, carried.len()) else {
                break;
            };
            let joined: Vec<Type> = carried
                .iter()
                .zip(&yielded)
                .map(|(c, y)| control::join(c, y))
                .collect();
            if joined == carried {
                break;
            }
            last = round + 2 >= MAX_BODY_ROUNDS || self.budget == 0;
            carried = if last {
                joined.iter().map(unranked).collect()
            } else {
                joined
            };
        }
        Ok(())
    }
}

impl Walk<'_> {
    /// Infers the branches of an If. A branch that fails is recorded on
    /// the If (`onnx::branches`): it aborts if taken, and the other branch
    /// alone types the results. Both failing is the error.
    fn branches(
        &mut self,
        m: &mut Module,
        op: OpId,
        blocks: &[ir::BlockId],
    ) -> Result<(), Diagnostic> {
        let is_if = onnx::is(m, op, OpKind::If);
        for (k, &b) in blocks.iter().enumerate() {
            match self.block(m, b) {
                Ok(()) if is_if => {
                    branches::set_branch_error(m, op, k, None);
                }
                Ok(()) => {}
                Err(e) if is_if => {
                    let first = branches::branch_error(m, op, k).is_none();
                    if !branches::set_branch_error(m, op, k, Some(&e)) {
                        return Err(e);
                    }
                    if first {
                        tracing::warn!(
                            "{}: the {} branch of '{}' fails shape inference and aborts if taken: {}",
                            m.loc(op),
                            branches::branch_name(k),
                            m.name(op),
                            branches::error_text(&e)
                        );
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// `t` with every dim that involves a fresh symbol unknown.
fn forget_fresh(t: &Type, u: &dims::Unifier) -> Type {
    let Some(d) = dims::of_type(t) else {
        return t.clone();
    };
    let fresh = |e: &ir::dim::DimExpr| e.symbols().iter().any(|s| u.is_fresh(s));
    let kept = d.into_iter().map(|e| e.filter(|e| !fresh(e))).collect();
    dims::to_type(Some(kept), t.element_type().clone())
}

fn unranked(t: &Type) -> Type {
    Type::unranked_tensor(t.element_type().clone())
}

/// Rounds of loop-body inference before carried types are given up on.
const MAX_BODY_ROUNDS: usize = 8;

/// Combines a declared type with an inferred one: the inferred wins, a
/// dim it leaves unknown is taken from the declaration (a symbolic size
/// it knows is not replaced by a declared static one: exporters record the
/// sizes they traced with). The flag reports a real contradiction (the
/// unranked `f32` placeholder contradicts nothing).
pub fn refine(declared: &Type, inferred: Type) -> (Type, bool) {
    let (Some(d), Some(i)) = (declared.as_tensor(), inferred.as_tensor()) else {
        return (inferred, false);
    };
    let Some(ddims) = d.sym_dims() else {
        return (inferred, false);
    };
    let elem_conflict = d.elem != i.elem;
    let Some(idims) = i.sym_dims() else {
        return (dims::to_type(Some(ddims), i.elem.clone()), elem_conflict);
    };
    if idims.len() != ddims.len() {
        return (inferred, true);
    }
    let mut conflict = elem_conflict;
    let merged = idims
        .into_iter()
        .zip(ddims)
        .map(|(a, b)| match (dims::value(&a), dims::value(&b)) {
            (Some(x), Some(y)) => {
                conflict |= x != y;
                a
            }
            _ if a.is_some() => a,
            _ => b,
        })
        .collect();
    (dims::to_type(Some(merged), i.elem.clone()), conflict)
}

/// Multidirectional (NumPy) broadcast of two shapes.
pub fn broadcast_shapes(a: &[i64], b: &[i64]) -> Result<Vec<i64>, String> {
    let rank = a.len().max(b.len());
    let mut out = Vec::with_capacity(rank);
    for k in 0..rank {
        let da = (k + a.len())
            .checked_sub(rank)
            .and_then(|i| a.get(i))
            .copied()
            .unwrap_or(1);
        let db = (k + b.len())
            .checked_sub(rank)
            .and_then(|i| b.get(i))
            .copied()
            .unwrap_or(1);
        out.push(match (da, db) {
            (1, d) | (d, 1) => d,
            (DYN, d) | (d, DYN) => d,
            (x, y) if x == y => x,
            (x, y) => {
                return Err(format!(
                    "shapes {a:?} and {b:?} do not broadcast ({x} vs {y})"
                ))
            }
        });
    }
    Ok(out)
}

/// Broadcast of several possibly unranked shapes; unranked if any is.
pub fn broadcast_all(shapes: &[Option<Vec<i64>>]) -> Result<Option<Vec<i64>>, String> {
    let mut acc: Vec<i64> = Vec::new();
    for s in shapes {
        let Some(s) = s else {
            return Ok(None);
        };
        acc = broadcast_shapes(&acc, s)?;
    }
    Ok(Some(acc))
}

/// `tensor<shape x elem>`, unranked for `None`.
pub fn tensor(shape: Option<Vec<i64>>, elem: Type) -> Type {
    match shape {
        Some(s) => Type::tensor(s, elem),
        None => Type::unranked_tensor(elem),
    }
}

/// Product of dims; `DYN` if any is dynamic.
pub fn product(dims: &[i64]) -> i64 {
    dims.iter()
        .try_fold(
            1i64,
            |acc, &d| if d == DYN { None } else { acc.checked_mul(d) },
        )
        .unwrap_or(DYN)
}

#[cfg(test)]
mod tests;
