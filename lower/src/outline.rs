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
        .filter(|&f| m.is(f, "func.func") && !func::is_declaration(m, f))
        .filter(|&f| m.attr(f, "sym_visibility").and_then(Attribute::as_str) != Some("private"))
        .collect();
    let mut kernels: HashMap<String, String> = HashMap::new();
    let mut num = Numbering::default();
    let mut next = 0usize;
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
            outline_one(m, nest, &mut kernels, &mut num, &mut next);
            nests += 1;
        }
    }
    Ok((nests, kernels.len()))
}

fn is_nest(m: &Module, op: OpId) -> bool {
    (m.is(op, "scf.for") || m.is(op, "scf.parallel")) && m.results(op).is_empty()
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

fn is_constant(m: &Module, v: ValueId) -> bool {
    m.defining_op(v)
        .is_some_and(|d| m.is(d, "arith.constant") && m.operands(d).is_empty())
}

fn outline_one(
    m: &mut Module,
    nest: OpId,
    kernels: &mut HashMap<String, String>,
    num: &mut Numbering,
    next: &mut usize,
) {
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
    let (consts, args): (Vec<ValueId>, Vec<ValueId>) =
        outside.iter().partition(|&&v| is_constant(m, v));
    let key = structural_key(m, num, &ops, &args, &consts);
    let existing = kernels.get(&key).cloned();
    let name = existing.clone().unwrap_or_else(|| fresh_name(m, next));
    let loc = m.loc(nest).clone();
    Builder::new(m, InsertPoint::Before(nest))
        .with_loc(loc)
        .call(&name, &args, &[]);
    if existing.is_some() {
        m.erase_op(nest);
    } else {
        move_into_kernel(m, nest, &name, &args, &consts);
        kernels.insert(key, name);
    }
}

fn fresh_name(m: &Module, next: &mut usize) -> String {
    loop {
        let name = format!("{KERNEL_PREFIX}{next}");
        *next += 1;
        if m.lookup_symbol(&name).is_none() {
            return name;
        }
    }
}

/// Makes the private kernel `@name` at the end of the module and moves
/// `nest` into it, cloning the constants and rewiring outside values to
/// the kernel's arguments.
fn move_into_kernel(m: &mut Module, nest: OpId, name: &str, args: &[ValueId], consts: &[ValueId]) {
    let types: Vec<Type> = args.iter().map(|&v| m.value_type(v).clone()).collect();
    let body = m.body();
    let (f, entry) = Builder::at_end(m, body).func(name, types, Vec::new());
    m.set_attr(f, "sym_visibility", Attribute::string("private"));
    m.set_attr(f, KERNEL_ATTR, Attribute::Unit);
    let params: Vec<ValueId> = m.block_args(entry).to_vec();
    let inside = move |m: &Module, u: Use| m.is_ancestor(nest, u.op);
    for (&a, &p) in args.iter().zip(&params) {
        m.replace_uses_where(a, p, inside);
    }
    for &c in consts {
        let Some(def) = m.defining_op(c) else {
            continue;
        };
        // A copy of the constant op, whatever its value attribute.
        let name = m.name(def);
        let spec = OpSpec {
            attrs: m.attrs(def).to_vec(),
            result_types: vec![m.value_type(c).clone()],
            ..OpSpec::default()
        };
        let clone = Builder::at_end(m, entry).create(name.as_str(), spec);
        if let Some(&v) = m.results(clone).first() {
            m.replace_uses_where(c, v, inside);
        }
    }
    m.move_to(nest, InsertPoint::End(entry));
    Builder::at_end(m, entry).ret(&[]);
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
        if let Some(def) = m.defining_op(c) {
            for (k, v) in m.attrs(def) {
                let _ = write!(key, "c{}={v}:{};", k.as_str(), m.value_type(c));
            }
        }
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
