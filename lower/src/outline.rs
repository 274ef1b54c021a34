//! `outline-kernels`: every top-level loop nest (`scf.for`/`scf.parallel`
//! without results) of a public function becomes a call to a private
//! function of its own, and structurally identical nests share one.
//!
//! Why: a model's entry function otherwise holds one loop nest per
//! element-wise op, and LLVM optimizes each copy (ResNet-152: ~150 nests
//! of a dozen distinct shapes). Shared kernels are optimized once, a module
//! of many small functions can be compiled in parallel pieces, and a
//! kernel's arguments are where `noalias` can be stated.
//!
//! Values the nest uses from outside become arguments in order of first
//! use, except `arith.constant`s, which are cloned into the kernel so that
//! loop bounds stay constants for LLVM. Two nests share a kernel when their
//! keys are equal: the pre-order sequence of ops (name, attributes, operand
//! numbers in a local numbering, result and block-argument types, ops per
//! block), argument types and cloned constants.

use ir::dialects::func;
use ir::entity::SecondaryMap;
use ir::pass::{Pass, PassContext, PassInfo};
use ir::{ArithOp, FuncOp, ScfOp, VectorOp};
use ir::{
    Attribute, Builder, InsertPoint, Module, OpId, OpSpec, Result, Type, Use, ValueDef, ValueId,
};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Prefix of the generated kernel names.
pub const KERNEL_PREFIX: &str = "__onnxc_kernel";

/// Marks a function made by this pass (a unit attribute).
pub const KERNEL_ATTR: &str = "onnxc.kernel";

pub struct OutlineKernels;

impl Pass for OutlineKernels {
    fn name(&self) -> &'static str {
        "outline-kernels"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let (nests, kernels) = outline_kernels(m)?;
        cx.bump("outline-kernels.nests", nests as u64);
        cx.bump("outline-kernels.kernels", kernels as u64);
        Ok(())
    }
}

pub fn pass_info() -> PassInfo {
    PassInfo {
        name: "outline-kernels",
        summary: "top-level loop nests of public functions to shared private kernel functions",
        create: |_| Ok(Box::new(OutlineKernels)),
    }
}

/// Outlines the nests; returns (nests outlined, kernels created).
pub fn outline_kernels(m: &mut Module) -> Result<(usize, usize)> {
    let funcs: Vec<OpId> = m
        .block_ops(m.body())
        .filter(|&f| m.is(f, FuncOp::Func) && !func::is_declaration(m, f))
        .filter(|&f| m.attr(f, "sym_visibility").and_then(Attribute::as_str) != Some("private"))
        .collect();
    let mut out = Outliner::new(KERNEL_PREFIX);
    let mut nests = 0usize;
    for f in funcs {
        let Some(region) = m.region(f, 0) else {
            continue;
        };
        let ops: Vec<OpId> = m
            .region_blocks(region)
            .iter()
            .flat_map(|&b| m.block_ops(b).collect::<Vec<_>>())
            .filter(|&op| is_nest(m, op))
            .collect();
        for nest in ops {
            ir::cancel::check()?;
            if let (_, Some((f, _))) = out.outline(m, nest, &[], &|_, _| false) {
                m.set_attr(f, KERNEL_ATTR, Attribute::Unit);
            }
            nests += 1;
        }
    }
    Ok((nests, out.kernels.len()))
}

fn is_nest(m: &Module, op: OpId) -> bool {
    (m.is(op, ScfOp::For) || m.is(op, "scf.parallel")) && m.results(op).is_empty()
}

/// True if `v` is defined inside `nest` (by an op in it or as an argument
/// of one of its blocks).
fn defined_inside(m: &Module, nest: OpId, v: ValueId) -> bool {
    match m.value_def(v) {
        ValueDef::Result(op, _) => m.is_ancestor(nest, op),
        ValueDef::BlockArg(b, _) => m.block_parent_op(b).is_some_and(|p| m.is_ancestor(nest, p)),
        ValueDef::Erased => false,
    }
}

/// An `arith.constant`, or a `vector.broadcast` of one (a splat): copied
/// into the kernel, not passed. A vector argument would also cross
/// between functions built for different CPUs (`multiversion`), whose
/// calling conventions pass it in different registers.
pub(crate) fn is_constant(m: &Module, v: ValueId) -> bool {
    m.defining_op(v).is_some_and(|d| {
        let scalar = |d: OpId| m.is(d, ArithOp::Constant) && m.operands(d).is_empty();
        scalar(d)
            || m.is(d, VectorOp::Broadcast)
                && m.operands(d)
                    .first()
                    .and_then(|&x| m.defining_op(x))
                    .is_some_and(scalar)
    })
}

/// Moves ops into private functions, one per structurally distinct op.
pub(crate) struct Outliner {
    prefix: &'static str,
    kernels: HashMap<String, String>,
    num: Numbering,
    next: usize,
}

impl Outliner {
    pub(crate) fn new(prefix: &'static str) -> Self {
        Outliner {
            prefix,
            kernels: HashMap::new(),
            num: Numbering::default(),
            next: 0,
        }
    }

    /// Replaces `nest` by a call of a private function holding it (shared
    /// with an equal earlier one). The call passes `lead` first, then the
    /// values from outside in order of first use; constants, and the
    /// operand-less definitions `clone` accepts (e.g. scratch `alloca`s
    /// only the nest uses), are cloned into the function instead. Returns
    /// the call, and the new function with its `lead` parameters (`None`
    /// when shared).
    pub(crate) fn outline(
        &mut self,
        m: &mut Module,
        nest: OpId,
        lead: &[ValueId],
        clone: &dyn Fn(&Module, ValueId) -> bool,
    ) -> (OpId, Option<(OpId, Vec<ValueId>)>) {
        let ops = m.collect_ops(nest);
        // Outside values in order of first use.
        let mut outside: Vec<ValueId> = Vec::new();
        for &op in &ops {
            for &v in m.operands(op) {
                if !defined_inside(m, nest, v) && !outside.contains(&v) {
                    outside.push(v);
                }
            }
        }
        let (consts, args): (Vec<ValueId>, Vec<ValueId>) = outside
            .iter()
            .partition(|&&v| is_constant(m, v) || clone(m, v));
        // Kernels of variants for different CPUs are compiled apart.
        let cpu = func::target_cpu_of(m, nest).map(str::to_string);
        let mut key = String::new();
        if let Some(cpu) = &cpu {
            let _ = write!(key, "cpu {cpu};");
        }
        for &v in lead {
            let _ = write!(key, "l{};", m.value_type(v));
        }
        key.push_str(&structural_key(m, &mut self.num, &ops, &args, &consts));
        let existing = self.kernels.get(&key).cloned();
        let name = existing.clone().unwrap_or_else(|| self.fresh_name(m));
        let loc = m.loc(nest).clone();
        let call_args: Vec<ValueId> = lead.iter().chain(&args).copied().collect();
        let mut b = Builder::new(m, InsertPoint::Before(nest)).with_loc(loc);
        b.call(&name, &call_args, &[]);
        let call = m.prev_op(nest).unwrap_or(nest);
        if existing.is_some() {
            m.erase_op(nest);
            return (call, None);
        }
        let lead_types: Vec<Type> = lead.iter().map(|&v| m.value_type(v).clone()).collect();
        let made = move_into_function(m, nest, &name, &lead_types, &args, &consts);
        if let Some(cpu) = cpu {
            m.set_attr(made.0, func::TARGET_CPU, Attribute::string(&cpu));
        }
        self.kernels.insert(key, name);
        (call, Some(made))
    }

    fn fresh_name(&mut self, m: &Module) -> String {
        loop {
            let name = format!("{}{}", self.prefix, self.next);
            self.next += 1;
            if m.lookup_symbol(&name).is_none() {
                return name;
            }
        }
    }

    /// How many functions were made.
    pub(crate) fn made(&self) -> usize {
        self.kernels.len()
    }
}

/// Makes the private function `@name(lead..., args...)` at the end of the
/// module and moves `nest` into it, cloning `consts` (operand-less
/// definitions) and rewiring outside values to the function's arguments.
/// Returns the function and its `lead` parameters.
fn move_into_function(
    m: &mut Module,
    nest: OpId,
    name: &str,
    lead: &[Type],
    args: &[ValueId],
    consts: &[ValueId],
) -> (OpId, Vec<ValueId>) {
    let mut types: Vec<Type> = lead.to_vec();
    types.extend(args.iter().map(|&v| m.value_type(v).clone()));
    let body = m.body();
    let (f, entry) = Builder::at_end(m, body).func(name, types, Vec::new());
    m.set_attr(f, "sym_visibility", Attribute::string("private"));
    let params: Vec<ValueId> = m.block_args(entry).to_vec();
    let inside = move |m: &Module, u: Use| m.is_ancestor(nest, u.op);
    for (&a, &p) in args.iter().zip(&params[lead.len()..]) {
        m.replace_uses_where(a, p, inside);
    }
    for &c in consts {
        if let Some(v) = copy_constant(m, entry, c) {
            m.replace_uses_where(c, v, inside);
        }
    }
    m.move_to(nest, InsertPoint::End(entry));
    Builder::at_end(m, entry).ret(&[]);
    (f, params[..lead.len()].to_vec())
}

/// A copy of the definition of `c` (see [`is_constant`]) at the end of
/// `block`, with what it is made of, whatever its attributes.
fn copy_constant(m: &mut Module, block: ir::BlockId, c: ValueId) -> Option<ValueId> {
    let def = m.defining_op(c)?;
    let operands = match m.operands(def).first().copied() {
        Some(x) => vec![copy_constant(m, block, x)?],
        None => Vec::new(),
    };
    let name = m.name(def);
    let spec = OpSpec {
        operands,
        attrs: m.attrs(def).to_vec(),
        result_types: vec![m.value_type(c).clone()],
        ..OpSpec::default()
    };
    let clone = Builder::at_end(m, block).create(name.as_str(), spec);
    m.results(clone).first().copied()
}

/// Local numbers of the values of one nest. One table serves every nest
/// (a table over all value ids per nest would be quadratic); `clear`
/// resets only the entries the nest set.
#[derive(Default)]
struct Numbering {
    num: SecondaryMap<ValueId, Option<u32>>,
    numbered: Vec<ValueId>,
}

impl Numbering {
    /// Gives `v` the next number.
    fn insert(&mut self, v: ValueId) {
        self.num[v] = Some(self.numbered.len() as u32);
        self.numbered.push(v);
    }
    fn get(&self, v: ValueId) -> Option<u32> {
        self.num[v]
    }
    fn clear(&mut self) {
        for v in self.numbered.drain(..) {
            self.num[v] = None;
        }
    }
}

/// The identity of a nest up to renaming (see the module docs).
fn structural_key(
    m: &Module,
    num: &mut Numbering,
    ops: &[OpId],
    args: &[ValueId],
    consts: &[ValueId],
) -> String {
    num.clear();
    let mut key = String::new();
    for &a in args {
        let _ = write!(key, "a{};", m.value_type(a));
        num.insert(a);
    }
    for &c in consts {
        // A splat's op, then its scalar's.
        let mut at = Some(c);
        while let Some(def) = at.and_then(|v| m.defining_op(v)) {
            let _ = write!(key, "c{}:{}", m.name(def).as_str(), m.value_type(c));
            for (k, v) in m.attrs(def) {
                let _ = write!(key, ",{}={v}", k.as_str());
            }
            at = m.operands(def).first().copied();
        }
        key.push(';');
        num.insert(c);
    }
    for &op in ops {
        let _ = write!(key, "\n{}(", m.name(op).as_str());
        for v in m.operands(op) {
            let _ = write!(key, "{},", num.get(*v).map_or(-1, i64::from));
        }
        key.push(')');
        for (k, v) in m.attrs(op) {
            let _ = write!(key, "{}={v};", k.as_str());
        }
        for &r in m.results(op) {
            let _ = write!(key, "->{}", m.value_type(r));
            num.insert(r);
        }
        for &r in m.regions(op) {
            key.push('{');
            for &b in m.region_blocks(r) {
                let _ = write!(key, "^{}(", m.block_ops(b).count());
                for &a in m.block_args(b) {
                    let _ = write!(key, "{},", m.value_type(a));
                    num.insert(a);
                }
                key.push(')');
            }
            key.push('}');
        }
    }
    key
}
