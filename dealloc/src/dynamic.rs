//! Option `private-function-dynamic-ownership` of
//! `ownership-based-deallocation`: a private function (all its callers are
//! in this module) returns an `i1` ownership flag after each memref result
//! instead of copying results it cannot hand over (an argument, a buffer it
//! does not own). Callers treat such a result like an `scf.if` result: freed
//! under its flag, and keeping the call's memref operands alive as long as
//! it may alias them.

use ir::dialects::is_memref;
use ir::FuncOp;
use ir::{Attribute, InsertPoint, Module, OpId, OpSpec, Type};

/// Marks the functions rewritten to return ownership flags.
pub const DYNAMIC_OWNERSHIP: &str = "onnxc.dynamic_ownership";

/// True for a call to a function returning ownership flags.
pub fn is_dynamic_call(m: &Module, op: OpId) -> bool {
    m.is(op, FuncOp::Call)
        && m.attr(op, "callee")
            .and_then(Attribute::as_symbol)
            .and_then(|c| m.lookup_symbol(c))
            .is_some_and(|f| m.attr(f, DYNAMIC_OWNERSHIP).is_some())
}

fn is_private(m: &Module, f: OpId) -> bool {
    m.attr(f, "sym_visibility").and_then(Attribute::as_str) == Some("private")
}

/// Gives every eligible private function flag results and rebuilds its calls.
pub fn prepare(m: &mut Module) {
    let calls: Vec<OpId> = m
        .collect_ops(m.top())
        .into_iter()
        .filter(|&o| m.is(o, FuncOp::Call))
        .collect();
    for f in m.top_level_ops(FuncOp::Func) {
        if !is_private(m, f)
            || ir::dialects::func::is_declaration(m, f)
            || m.attr(f, DYNAMIC_OWNERSHIP).is_some()
        {
            continue;
        }
        let Some(ft) = ir::dialects::func::function_type(m, f).cloned() else {
            continue;
        };
        let flags = ft.results.iter().filter(|t| is_memref(t)).count();
        if flags == 0 {
            continue;
        }
        let Some(name) = m
            .attr(f, "sym_name")
            .and_then(Attribute::as_str)
            .map(str::to_string)
        else {
            continue;
        };
        let mut results = ft.results.clone();
        results.extend(std::iter::repeat_n(Type::i1(), flags));
        let fty = Type::function(ft.inputs.clone(), results);
        m.set_attr(f, "function_type", Attribute::Type(fty));
        m.set_attr(f, DYNAMIC_OWNERSHIP, Attribute::Unit);
        for &c in &calls {
            let callee = m.attr(c, "callee").and_then(Attribute::as_symbol);
            if callee == Some(name.as_str()) && !m.is_erased(c) {
                rebuild_call(m, c, flags);
            }
        }
    }
}

fn rebuild_call(m: &mut Module, call: OpId, flags: usize) {
    let old = m.results(call).to_vec();
    let mut types: Vec<Type> = old.iter().map(|&r| m.value_type(r).clone()).collect();
    types.extend(std::iter::repeat_n(Type::i1(), flags));
    let spec = OpSpec {
        operands: m.operands(call).to_vec(),
        result_types: types,
        attrs: m.attrs(call).to_vec(),
        loc: m.loc(call).clone(),
        ..OpSpec::default()
    };
    // The same call, with the flag results added.
    let new = m.create_op(m.name(call), spec);
    m.insert(new, InsertPoint::Before(call));
    let fresh = m.results(new).to_vec();
    for (&o, &n) in old.iter().zip(&fresh) {
        m.replace_all_uses(o, n);
    }
    m.erase_op(call);
}
