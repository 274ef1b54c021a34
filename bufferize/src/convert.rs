//! The conversion driver: rewrites each function's `onnx.*` ops into memref
//! allocations and loop nests, in program order, mapping every tensor value
//! to the memref holding it.

use crate::kernels;
use ir::dialects::op_error;
use ir::{Attribute, Builder, Diagnostic, InsertPoint, Module, OpId, Result, Type, ValueId, DYN};
use std::collections::HashMap;

/// State of one module's conversion.
pub struct Lowering {
    /// Tensor value → the memref now holding it.
    map: HashMap<ValueId, ValueId>,
    /// Where new `memref.global`s go (before the first function).
    global_ip: Option<OpId>,
    next_global: usize,
}

/// Converts a ranked tensor type to an identity-layout memref type.
pub fn memref_type(m: &Module, op: OpId, t: &Type) -> Result<Type> {
    match t {
        Type::Tensor(tt) => match &tt.shape {
            Some(shape) => Ok(Type::memref(shape.clone(), tt.elem.clone())),
            None => Err(op_error(
                m,
                op,
                format!("cannot bufferize a value of unranked type {t}"),
            )),
        },
        Type::MemRef(_) => Ok(t.clone()),
        _ => Err(op_error(
            m,
            op,
            format!("cannot bufferize a value of type {t}"),
        )),
    }
}

impl Lowering {
    /// The memref holding operand `i` of `op`.
    pub fn input(&self, m: &Module, op: OpId, i: usize) -> Result<ValueId> {
        let v = m
            .operand(op, i)
            .ok_or_else(|| op_error(m, op, format!("missing operand #{i}")))?;
        self.map
            .get(&v)
            .copied()
            .ok_or_else(|| op_error(m, op, format!("operand #{i} has no buffer")))
    }

    /// True if operand `i` exists and is not an omitted optional (`none`).
    pub fn has_input(&self, m: &Module, op: OpId, i: usize) -> bool {
        m.operand(op, i)
            .is_some_and(|v| *m.value_type(v) != Type::None)
    }

    /// A `memref.global` holding `value`, and a `get_global` of it at `b`.
    pub fn global(&mut self, b: &mut Builder<'_>, value: &ir::elements::Elements) -> ValueId {
        let ty = Type::memref(value.shape().to_vec(), value.dtype().to_type());
        let name = format!("__constant_{}", self.next_global);
        self.next_global += 1;
        if let Some(anchor) = self.global_ip {
            let g = b.m.create_op(
                ir::Sym::new("memref.global"),
                ir::OpSpec {
                    attrs: vec![
                        (ir::Sym::new("sym_name"), Attribute::string(&name)),
                        (ir::Sym::new("sym_visibility"), Attribute::string("private")),
                        (ir::Sym::new("type"), Attribute::Type(ty.clone())),
                        (
                            ir::Sym::new("initial_value"),
                            Attribute::Elements(value.clone()),
                        ),
                        (ir::Sym::new("constant"), Attribute::Unit),
                        (ir::Sym::new("alignment"), Attribute::i64(64)),
                    ],
                    ..ir::OpSpec::default()
                },
            );
            b.m.insert(g, InsertPoint::Before(anchor));
        }
        b.op1(
            "memref.get_global",
            &[],
            ty,
            &[("name", Attribute::symbol(&name))],
        )
    }
}

/// Allocates a buffer of memref type `ty`; `dyn_dims` gives each `?` dim in order.
pub fn alloc(b: &mut Builder<'_>, ty: &Type, dyn_dims: &[ValueId]) -> ValueId {
    b.op1(
        "memref.alloc",
        dyn_dims,
        ty.clone(),
        &[("alignment", Attribute::i64(64))],
    )
}

/// Size of every dim of a memref: constants for static dims, `memref.dim` otherwise.
pub fn dims(b: &mut Builder<'_>, v: ValueId) -> Vec<ValueId> {
    let shape =
        b.m.value_type(v)
            .shape()
            .map(<[i64]>::to_vec)
            .unwrap_or_default();
    shape
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            if d == DYN {
                let idx = b.const_index(i as i64);
                b.op1("memref.dim", &[v, idx], Type::Index, &[])
            } else {
                b.const_index(d)
            }
        })
        .collect()
}

/// Bufferizes every function of the module.
pub fn bufferize_module(m: &mut Module) -> Result<()> {
    let funcs = m.top_level_ops("func.func");
    let mut cx = Lowering {
        map: HashMap::new(),
        global_ip: funcs.first().copied(),
        next_global: 0,
    };
    for f in funcs {
        bufferize_function(m, &mut cx, f)?;
    }
    Ok(())
}

fn bufferize_function(m: &mut Module, cx: &mut Lowering, f: OpId) -> Result<()> {
    let Some(entry) = m.region(f, 0).and_then(|r| m.entry_block(r)) else {
        return Ok(());
    };
    // Arguments: the caller's buffers, used in place.
    for &a in &m.block_args(entry).to_vec() {
        let ty = memref_type(m, f, m.value_type(a))?;
        m.set_value_type(a, ty);
        cx.map.insert(a, a);
    }
    let ops: Vec<OpId> = m.block_ops(entry).collect();
    let mut converted = Vec::new();
    for op in ops {
        let name = m.name(op);
        if name.dialect() == "onnx" || name.dialect() == "onnx_ml" {
            let loc = m.loc(op).clone();
            let mut b = Builder::new(m, InsertPoint::Before(op)).with_loc(loc);
            let results = kernels::lower_op(cx, &mut b, op)?;
            for (&r, &new) in m.results(op).to_vec().iter().zip(&results) {
                cx.map.insert(r, new);
            }
            converted.push(op);
        } else if m.is(op, "func.return") {
            for i in 0..m.operands(op).len() {
                let v = cx.input(m, op, i)?;
                m.set_operand(op, i, v);
            }
        } else if m.regions(op).is_empty()
            && m.operands(op).iter().all(|&v| !m.value_type(v).is_shaped())
        {
            continue;
        } else {
            return Err(op_error(
                m,
                op,
                "cannot bufferize this op inside a tensor function",
            ));
        }
    }
    for op in converted.into_iter().rev() {
        let live: Vec<ValueId> = m
            .results(op)
            .iter()
            .copied()
            .filter(|&r| m.has_uses(r))
            .collect();
        if !live.is_empty() {
            return Err(op_error(m, op, "result still used after bufferization"));
        }
        m.erase_op(op);
    }
    let inputs: Vec<Type> = m
        .block_args(entry)
        .iter()
        .map(|&a| m.value_type(a).clone())
        .collect();
    let results: Vec<Type> = match m.last_op(entry) {
        Some(ret) if m.is(ret, "func.return") => m
            .operands(ret)
            .iter()
            .map(|&v| m.value_type(v).clone())
            .collect(),
        _ => {
            return Err(Diagnostic::error(
                "function body does not end with func.return",
            ))
        }
    };
    m.set_attr(
        f,
        "function_type",
        Attribute::Type(Type::function(inputs, results)),
    );
    Ok(())
}
