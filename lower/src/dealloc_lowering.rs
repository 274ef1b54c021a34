//! `lower-deallocations`: `bufferization.dealloc` to `memref.dealloc`.
//!
//! Meaning of the op: each memref whose condition holds is freed, once per
//! distinct buffer, unless a retained value aliases it; retained result `j`
//! is the OR of the conditions of the memrefs that alias retained value `j`.
//! Aliasing is decided on aligned base pointers
//! (`memref.extract_aligned_pointer_as_index`).
//!
//! * no memrefs: the results are `false`;
//! * one memref, nothing retained: `scf.if %cond { memref.dealloc }`;
//! * one memref, N retained: N pointer comparisons, then one `scf.if`;
//! * otherwise: pointers and conditions go into stack arrays (allocated once
//!   at the function entry), a generated `@dealloc_helper` computes which
//!   memrefs to free and the retained ownerships (quadratic time, constant
//!   code), and the caller frees each memref under its own `scf.if`.
//!   Code size stays linear in the number of operands.
//!
//! `bufferization.clone` (inserted for function results the caller could
//! not otherwise own) becomes `memref.alloc` + `memref.copy`, then a
//! `memref.cast` when the clone's type has a (compatible) strided layout.

use ir::builder::CmpI;
use ir::dialects::bufferization::dealloc_groups;
use ir::dialects::op_error;
use ir::pass::{Pass, PassContext, PassInfo, PassRegistry};
use ir::types::{identity_strides, Layout};
use ir::{ArithOp, BufferizationOp, FuncOp};
use ir::{Attribute, Builder, Diagnostic, InsertPoint, Module, OpId, Result, Type, ValueId, DYN};

/// Name of the generated helper function.
pub const HELPER: &str = "dealloc_helper";

pub struct LowerDeallocations;

impl Pass for LowerDeallocations {
    fn name(&self) -> &'static str {
        "lower-deallocations"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let (always, guarded) = output_copies(m);
        let n = lower_deallocations(m)?;
        cx.bump("lower-deallocations.lowered", n as u64);
        cx.bump("lower-deallocations.output-copies", always as u64);
        cx.bump("lower-deallocations.output-copies-guarded", guarded as u64);
        Ok(())
    }
}

pub fn register(reg: &mut PassRegistry) {
    reg.add(PassInfo {
        name: "lower-deallocations",
        summary: "bufferization.dealloc to scf.if + memref.dealloc or a @dealloc_helper call; clones to alloc + copy",
        create: |_| Ok(Box::new(LowerDeallocations)),
    });
}

/// The clones (copies of function results: see `dealloc::ownership`) that
/// run on every call, and those nested in a region op, which run only
/// when a result's ownership flag says the function does not own it.
pub fn output_copies(m: &Module) -> (usize, usize) {
    let mut out = (0, 0);
    for op in m.collect_ops(m.top()) {
        if !m.is(op, BufferizationOp::Clone) {
            continue;
        }
        if m.parent_op(op).is_some_and(|p| m.is(p, FuncOp::Func)) {
            out.0 += 1;
        } else {
            out.1 += 1;
        }
    }
    out
}

/// Lowers every `bufferization.dealloc` and `bufferization.clone`; returns how many.
pub fn lower_deallocations(m: &mut Module) -> Result<usize> {
    let ops: Vec<OpId> = m
        .collect_ops(m.top())
        .into_iter()
        .filter(|&o| m.is(o, BufferizationOp::Dealloc) || m.is(o, BufferizationOp::Clone))
        .collect();
    for &op in &ops {
        if m.is(op, BufferizationOp::Clone) {
            lower_clone(m, op)?;
        } else {
            lower_one(m, op)?;
        }
    }
    Ok(ops.len())
}

/// True if an identity-layout buffer of `shape` may be cast to `layout`.
fn identity_casts_to(shape: &[i64], layout: &Layout) -> bool {
    match layout {
        Layout::Identity => true,
        Layout::Strided { offset, strides } => {
            let want = identity_strides(shape);
            (*offset == 0 || *offset == DYN)
                && strides.len() == want.len()
                && strides.iter().zip(&want).all(|(&s, &w)| s == DYN || s == w)
        }
    }
}

/// `clone %src : T` → a fresh identity-layout buffer, a copy, a cast to `T`.
fn lower_clone(m: &mut Module, op: OpId) -> Result<()> {
    let (Some(src), Some(res)) = (m.operand(op, 0), m.result(op, 0)) else {
        return Err(op_error(m, op, "expects one operand and one result"));
    };
    let ty = m.value_type(res).clone();
    let Some(mt) = ty.as_memref() else {
        return Err(op_error(
            m,
            op,
            format!("result must be a memref, got {ty}"),
        ));
    };
    if !identity_casts_to(&mt.shape, &mt.layout) {
        return Err(op_error(m, op, format!("cannot clone into the layout of {ty}: only offset-0 row-major layouts are supported")));
    }
    let plain = Type::memref(mt.shape.clone(), mt.elem.clone());
    let loc = m.loc(op).clone();
    let mut b = Builder::new(m, InsertPoint::Before(op)).with_loc(loc);
    let mut dyns = Vec::new();
    for (k, &d) in mt.shape.iter().enumerate() {
        if d == DYN {
            dyns.push(b.dim(src, k));
        }
    }
    let fresh = b.alloc_aligned(&plain, &dyns, 64);
    b.copy(src, fresh);
    let out = if plain == ty {
        fresh
    } else {
        b.memref_cast(fresh, ty)
    };
    m.replace_op(op, &[out]);
    Ok(())
}

fn lower_one(m: &mut Module, op: OpId) -> Result<()> {
    let Some((n, c, r)) = dealloc_groups(m, op) else {
        return Err(op_error(
            m,
            op,
            "requires operandSegmentSizes = array<i32: memrefs, conditions, retained>",
        ));
    };
    let all = m.operands(op).to_vec();
    if n != c || n + c + r != all.len() || m.results(op).len() != r {
        return Err(op_error(
            m,
            op,
            "operand segments do not match the operands and results",
        ));
    }
    let (memrefs, rest) = all.split_at(n);
    let (conds, retained) = rest.split_at(n);
    let loc = m.loc(op).clone();
    let mut b = Builder::new(m, InsertPoint::Before(op)).with_loc(loc);
    let results: Vec<ValueId> = match (memrefs, conds) {
        ([], _) => {
            let f = b.const_bool(false);
            vec![f; r]
        }
        ([mr], [cond]) => one_memref(&mut b, *mr, *cond, retained),
        _ => {
            let f = enclosing_func(b.m, op);
            general(&mut b, f, memrefs, conds, retained)?
        }
    };
    let old = m.results(op).to_vec();
    for (o, v) in old.into_iter().zip(results) {
        m.replace_all_uses(o, v);
    }
    m.erase_op(op);
    Ok(())
}

fn const_bool(m: &Module, v: ValueId) -> Option<bool> {
    let op = m.defining_op(v).filter(|&o| m.is(o, ArithOp::Constant))?;
    m.attr(op, "value")
        .and_then(Attribute::as_int)
        .map(|x| x != 0)
}

/// `scf.if %cond { memref.dealloc %v }`, folding constant conditions.
fn free_if(b: &mut Builder<'_>, cond: ValueId, v: ValueId) {
    match const_bool(b.m, cond) {
        Some(false) => {}
        Some(true) => b.dealloc(v),
        None => {
            b.scf_if(
                cond,
                &[],
                &mut |b| {
                    b.dealloc(v);
                    Vec::new()
                },
                None,
            );
        }
    }
}

/// One memref: free it unless a retained value has its base pointer;
/// retained result `j` = cond && (retained `j` is the same buffer).
fn one_memref(
    b: &mut Builder<'_>,
    mr: ValueId,
    cond: ValueId,
    retained: &[ValueId],
) -> Vec<ValueId> {
    if retained.is_empty() {
        free_if(b, cond, mr);
        return Vec::new();
    }
    let p = b.extract_aligned_pointer_as_index(mr);
    let mut should = cond;
    let mut results = Vec::with_capacity(retained.len());
    for &r in retained {
        let q = b.extract_aligned_pointer_as_index(r);
        let differs = b.cmpi(CmpI::Ne, p, q);
        should = b.andi(should, differs);
        let same = b.cmpi(CmpI::Eq, p, q);
        results.push(b.andi(same, cond));
    }
    free_if(b, should, mr);
    results
}

fn enclosing_func(m: &Module, mut op: OpId) -> Option<OpId> {
    loop {
        op = m.parent_op(op)?;
        if m.is(op, FuncOp::Func) {
            return Some(op);
        }
    }
}

fn array(len: usize, elem: Type) -> Type {
    Type::memref(vec![len as i64], elem)
}

/// Several memrefs: stack arrays, a helper call, one `scf.if` per memref.
fn general(
    b: &mut Builder<'_>,
    func: Option<OpId>,
    memrefs: &[ValueId],
    conds: &[ValueId],
    retained: &[ValueId],
) -> Result<Vec<ValueId>> {
    let helper = helper_func(b.m)?;
    let (n, r) = (memrefs.len(), retained.len());
    // Allocas at the function entry: fixed sizes, and no stack growth when
    // the dealloc sits in a loop.
    let entry = func
        .and_then(|f| b.m.region(f, 0))
        .and_then(|rg| b.m.entry_block(rg));
    let ip = entry.map_or(b.ip(), InsertPoint::Start);
    let mut stack = Builder::new(b.m, ip).with_loc(b.loc.clone());
    let ptrs = stack.alloca(&array(n, Type::Index), &[]);
    let flags = stack.alloca(&array(n, Type::i1()), &[]);
    let kept = stack.alloca(&array(r, Type::Index), &[]);
    let frees = stack.alloca(&array(n, Type::i1()), &[]);
    let owns = stack.alloca(&array(r, Type::i1()), &[]);

    let idx: Vec<ValueId> = (0..n.max(r)).map(|k| b.const_index(k as i64)).collect();
    for ((&mr, &c), &k) in memrefs.iter().zip(conds).zip(&idx) {
        let p = b.extract_aligned_pointer_as_index(mr);
        b.store(p, ptrs, &[k]);
        b.store(c, flags, &[k]);
    }
    for (&rv, &k) in retained.iter().zip(&idx) {
        let q = b.extract_aligned_pointer_as_index(rv);
        b.store(q, kept, &[k]);
    }
    let dyn_index = Type::memref(vec![DYN], Type::Index);
    let dyn_i1 = Type::memref(vec![DYN], Type::i1());
    let args = [
        b.memref_cast(ptrs, dyn_index.clone()),
        b.memref_cast(kept, dyn_index),
        b.memref_cast(flags, dyn_i1.clone()),
        b.memref_cast(frees, dyn_i1.clone()),
        b.memref_cast(owns, dyn_i1),
    ];
    b.call(helper, &args, &[]);
    for (&mr, &k) in memrefs.iter().zip(&idx) {
        let f = b.load(frees, &[k]);
        free_if(b, f, mr);
    }
    Ok(retained
        .iter()
        .zip(&idx)
        .map(|(_, &k)| b.load(owns, &[k]))
        .collect())
}

fn helper_type() -> Type {
    let dyn_index = Type::memref(vec![DYN], Type::Index);
    let dyn_i1 = Type::memref(vec![DYN], Type::i1());
    Type::function(
        vec![
            dyn_index.clone(),
            dyn_index,
            dyn_i1.clone(),
            dyn_i1.clone(),
            dyn_i1,
        ],
        vec![],
    )
}

/// The module's `@dealloc_helper`, created on first use.
fn helper_func(m: &mut Module) -> Result<&'static str> {
    if let Some(existing) = m.lookup_symbol(HELPER) {
        let ty = m
            .attr(existing, "function_type")
            .and_then(Attribute::as_type);
        if m.is(existing, FuncOp::Func) && ty == Some(&helper_type()) {
            return Ok(HELPER);
        }
        return Err(Diagnostic::error(format!(
            "symbol '@{HELPER}' is taken by an op that is not the deallocation helper"
        )));
    }
    let body = m.body();
    let mut b = Builder::at_end(m, body);
    let Some(ft) = helper_type().as_function().cloned() else {
        return Err(Diagnostic::error(
            "internal: helper type is not a function type",
        ));
    };
    let (f, entry) = b.func(HELPER, ft.inputs.clone(), ft.results.clone());
    m.set_attr(f, "sym_visibility", Attribute::string("private"));
    let args = m.block_args(entry).to_vec();
    let [ptrs, kept, flags, frees, owns] = args.as_slice() else {
        return Err(Diagnostic::error("internal: helper has the wrong arity"));
    };
    helper_body(
        &mut Builder::at_end(m, entry),
        [*ptrs, *kept, *flags, *frees, *owns],
    );
    Ok(HELPER)
}

/// For each memref `i`: it is freed iff it is the first entry with its base
/// pointer, some entry with that pointer has its condition set, and no
/// retained value has that pointer. Retained ownership `j` is the OR of the
/// conditions of the entries with retained `j`'s pointer.
fn helper_body(b: &mut Builder<'_>, [ptrs, kept, flags, frees, owns]: [ValueId; 5]) {
    let c0 = b.const_index(0);
    let c1 = b.const_index(1);
    let t = b.const_bool(true);
    let f = b.const_bool(false);
    let n = b.dim_at(ptrs, c0);
    let r = b.dim_at(kept, c0);
    b.scf_for(c0, r, c1, &[], |b, j, _| {
        b.store(f, owns, &[j]);
        Vec::new()
    });
    b.scf_for(c0, n, c1, &[], |b, i, _| {
        let p = b.load(ptrs, &[i]);
        let c = b.load(flags, &[i]);
        let retained_loop = b.scf_for(c0, r, c1, &[f], |b, j, acc| {
            let q = b.load(kept, &[j]);
            let same = b.cmpi(CmpI::Eq, q, p);
            let hit = b.andi(same, c);
            let o = b.load(owns, &[j]);
            let o2 = b.ori(o, hit);
            b.store(o2, owns, &[j]);
            vec![b.ori(acc[0], same)]
        });
        let scan = b.scf_for(c0, n, c1, &[t, f], |b, k, acc| {
            let pk = b.load(ptrs, &[k]);
            let ck = b.load(flags, &[k]);
            let same = b.cmpi(CmpI::Eq, pk, p);
            let before = b.cmpi(CmpI::Ult, k, i);
            let dup = b.andi(same, before);
            let unique = b.xori(dup, t);
            let first = b.andi(acc[0], unique);
            let hit = b.andi(same, ck);
            vec![first, b.ori(acc[1], hit)]
        });
        let is_kept = b.m.results(retained_loop)[0];
        let (first, any) = (b.m.results(scan)[0], b.m.results(scan)[1]);
        let not_kept = b.xori(is_kept, t);
        let once = b.andi(first, any);
        let free = b.andi(once, not_kept);
        b.store(free, frees, &[i]);
        Vec::new()
    });
    b.ret(&[]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ir::{MemrefOp, ScfOp};

    fn mref(n: i64) -> Type {
        Type::memref(vec![n], Type::f32())
    }

    /// `func @f(memrefs..., conds..., retained...)` holding one dealloc whose
    /// results are returned.
    fn single(n: usize, r: usize) -> (Module, OpId) {
        let mut m = Module::new();
        let body = m.body();
        let mut inputs = vec![mref(4); n];
        inputs.extend(vec![Type::i1(); n]);
        inputs.extend(vec![mref(4); r]);
        let mut b = Builder::at_end(&mut m, body);
        let (f, entry) = b.func("f", inputs, vec![Type::i1(); r]);
        let args = m.block_args(entry).to_vec();
        let mut b = Builder::at_end(&mut m, entry);
        let op = b.bufferization_dealloc(&args[..n], &args[n..2 * n], &args[2 * n..]);
        let res = b.m.results(op).to_vec();
        b.ret(&res);
        ir::verify(&m).unwrap();
        (m, f)
    }

    fn count(m: &Module, root: OpId, name: impl ir::OpName) -> usize {
        m.collect_ops(root)
            .into_iter()
            .filter(|&o| m.is(o, name))
            .count()
    }

    #[test]
    fn no_memrefs_gives_false() {
        let (mut m, f) = single(0, 2);
        assert_eq!(lower_deallocations(&mut m).unwrap(), 1);
        ir::verify(&m).unwrap();
        assert_eq!(count(&m, f, BufferizationOp::Dealloc), 0);
        assert_eq!(count(&m, f, ArithOp::Constant), 1);
    }

    #[test]
    fn one_memref_becomes_scf_if() {
        let (mut m, f) = single(1, 0);
        lower_deallocations(&mut m).unwrap();
        ir::verify(&m).unwrap();
        assert_eq!(count(&m, f, ScfOp::If), 1);
        assert_eq!(count(&m, f, MemrefOp::Dealloc), 1);
        let d = m
            .collect_ops(f)
            .into_iter()
            .find(|&o| m.is(o, MemrefOp::Dealloc))
            .unwrap();
        assert!(m.is(m.parent_op(d).unwrap(), ScfOp::If));
    }

    #[test]
    fn constant_true_frees_directly() {
        let mut m = Module::new();
        let body = m.body();
        let mut b = Builder::at_end(&mut m, body);
        let (f, entry) = b.func("f", vec![], vec![]);
        let mut b = Builder::at_end(&mut m, entry);
        let a = b.alloc(&mref(4), &[]);
        let t = b.const_bool(true);
        b.bufferization_dealloc(&[a], &[t], &[]);
        b.ret(&[]);
        lower_deallocations(&mut m).unwrap();
        ir::verify(&m).unwrap();
        assert_eq!(count(&m, f, ScfOp::If), 0);
        assert_eq!(count(&m, f, MemrefOp::Dealloc), 1);
    }

    #[test]
    fn one_memref_with_retained_compares_pointers() {
        let (mut m, f) = single(1, 2);
        lower_deallocations(&mut m).unwrap();
        ir::verify(&m).unwrap();
        assert_eq!(count(&m, f, MemrefOp::ExtractAlignedPointerAsIndex), 3);
        assert_eq!(count(&m, f, ArithOp::Cmpi), 4);
        assert_eq!(count(&m, f, ScfOp::If), 1);
        assert_eq!(count(&m, f, FuncOp::Call), 0);
        // The returned ownerships are `cond && same pointer`.
        let ret = m
            .collect_ops(f)
            .into_iter()
            .find(|&o| m.is(o, FuncOp::Return))
            .unwrap();
        for &v in m.operands(ret) {
            assert!(m.is(m.defining_op(v).unwrap(), ArithOp::Andi));
        }
    }

    #[test]
    fn general_case_calls_one_helper() {
        let (mut m, f) = single(3, 1);
        lower_deallocations(&mut m).unwrap();
        ir::verify(&m).unwrap();
        assert_eq!(count(&m, f, FuncOp::Call), 1);
        assert_eq!(count(&m, f, MemrefOp::Alloca), 5);
        assert_eq!(count(&m, f, ScfOp::If), 3);
        assert_eq!(count(&m, f, MemrefOp::Dealloc), 3);
        let helper = m.lookup_symbol(HELPER).unwrap();
        assert!(m.is(helper, FuncOp::Func));
        // The allocas sit at the function entry.
        let entry = m.entry_block(m.region(f, 0).unwrap()).unwrap();
        let first = m.first_op(entry).unwrap();
        assert!(m.is(first, MemrefOp::Alloca));
        // Reuse: lowering another general dealloc adds no second helper.
        let body = m.body();
        let mut b = Builder::at_end(&mut m, body);
        let (g, entry) = b.func("g", vec![mref(4), mref(4), Type::i1()], vec![]);
        let args = m.block_args(entry).to_vec();
        let mut b = Builder::at_end(&mut m, entry);
        b.bufferization_dealloc(&[args[0], args[1]], &[args[2], args[2]], &[]);
        b.ret(&[]);
        lower_deallocations(&mut m).unwrap();
        ir::verify(&m).unwrap();
        assert_eq!(m.top_level_ops(FuncOp::Func).len(), 3);
        assert_eq!(count(&m, g, FuncOp::Call), 1);
    }

    /// `@f(%x: T) -> T { return clone %x }`, lowered.
    fn lowered_clone(ty: Type) -> Result<(Module, OpId)> {
        let mut m = Module::new();
        let body = m.body();
        let (f, entry) =
            Builder::at_end(&mut m, body).func("f", vec![ty.clone()], vec![ty.clone()]);
        let x = m.block_arg(entry, 0).unwrap();
        let mut b = Builder::at_end(&mut m, entry);
        let c = b.bufferization_clone(x, ty);
        b.ret(&[c]);
        ir::verify(&m).unwrap();
        lower_deallocations(&mut m)?;
        ir::verify(&m).unwrap();
        Ok((m, f))
    }

    #[test]
    fn clones_become_alloc_and_copy() {
        let (m, f) = lowered_clone(mref(4)).unwrap();
        assert_eq!(count(&m, f, MemrefOp::Alloc), 1);
        assert_eq!(count(&m, f, MemrefOp::Copy), 1);
        assert_eq!(count(&m, f, MemrefOp::Cast), 0);
        assert_eq!(count(&m, f, BufferizationOp::Clone), 0);

        let dynamic = Type::memref(vec![DYN, 3], Type::f32());
        let (m, f) = lowered_clone(dynamic).unwrap();
        assert_eq!(count(&m, f, MemrefOp::Dim), 1);

        let strided = Type::memref_strided(vec![DYN, 3], Type::f32(), 0, vec![DYN, 1]);
        let (m, f) = lowered_clone(strided).unwrap();
        assert_eq!(count(&m, f, MemrefOp::Cast), 1);

        let offset = Type::memref_strided(vec![2], Type::f32(), 3, vec![1]);
        let err = lowered_clone(offset).unwrap_err();
        assert_eq!(err.op.as_deref(), Some(BufferizationOp::Clone.name()));
    }

    #[test]
    fn helper_name_clash_is_diagnosed() {
        let (mut m, _) = single(2, 0);
        let body = m.body();
        let mut b = Builder::at_end(&mut m, body);
        b.func(HELPER, vec![], vec![]);
        let err = lower_deallocations(&mut m).unwrap_err();
        assert!(err.message.contains(HELPER));
    }
}
