//! Shared helpers of the dealloc tests: IR builders, pipeline runner, the
//! memory-checking interpreter.
#![allow(dead_code)]

pub mod interp;

use ir::builder::ViewLayout;
use ir::pass::{PassContext, PassManager, PassRegistry, VerifyEach};
use ir::{Attribute, BlockId, Builder, Diagnostic, Module, OpId, Type, ValueId};

pub fn registry() -> PassRegistry {
    let mut r = PassRegistry::new();
    dealloc::register_passes(&mut r);
    r
}

/// Verifies the input, runs `pipeline` with verification after each pass.
pub fn run(m: &mut Module, pipeline: &str) -> Result<PassContext, Diagnostic> {
    ir::verify(m).expect("test input must verify");
    let mut pm = PassManager::new();
    pm.extend(registry().parse(pipeline)?);
    pm.instrument(Box::new(VerifyEach));
    pm.run(m)?;
    Ok(std::mem::take(&mut pm.cx))
}

pub fn vec_ty(n: i64) -> Type {
    Type::memref(vec![n], Type::f32())
}

pub fn alloc(b: &mut Builder<'_>, ty: Type) -> ValueId {
    b.alloc_aligned(&ty, &[], 64)
}

/// `dst[k] = src[k] + add` for every k of a 1-D `n`-element buffer.
pub fn add_loop(b: &mut Builder<'_>, src: ValueId, dst: ValueId, n: i64, add: f64) {
    let lb = b.const_index(0);
    let ub = b.const_index(n);
    let one = b.const_index(1);
    b.scf_for(lb, ub, one, &[], |b, k, _| {
        let x = b.load(src, &[k]);
        let c = b.const_float(add, Type::f32());
        let y = b.addf(x, c);
        b.store(y, dst, &[k]);
        Vec::new()
    });
}

/// A new function `name(inputs) -> results`; returns it and its entry block.
pub fn func(m: &mut Module, name: &str, inputs: Vec<Type>, results: Vec<Type>) -> (OpId, BlockId) {
    let body = m.body();
    Builder::at_end(m, body).func(name, inputs, results)
}

/// A `memref.global` named `name` of type `ty`.
pub fn global(m: &mut Module, name: &str, ty: Type) {
    let body = m.body();
    Builder::at_end(m, body).op(
        "memref.global",
        &[],
        &[],
        &[
            ("sym_name", Attribute::string(name)),
            ("sym_visibility", Attribute::string("private")),
            ("type", Attribute::Type(ty)),
        ],
    );
}

pub fn count(m: &Module, root: OpId, name: &str) -> usize {
    m.collect_ops(root)
        .into_iter()
        .filter(|&o| m.is(o, name))
        .count()
}

/// Walking a block in order: the most heap allocations alive at once.
pub fn max_live(m: &Module, b: BlockId) -> usize {
    let (mut live, mut peak) = (0usize, 0usize);
    for op in m.block_ops(b) {
        if m.is(op, "memref.alloc") || m.is(op, "bufferization.clone") {
            live += 1;
            peak = peak.max(live);
        } else if m.is(op, "memref.dealloc") {
            live -= 1;
        }
    }
    peak
}

/// The op defining operand `i` of `op`.
pub fn def_of(m: &Module, op: OpId, i: usize) -> Option<OpId> {
    m.defining_op(m.operand(op, i)?)
}

pub fn ops_named(m: &Module, root: OpId, name: &str) -> Vec<OpId> {
    m.collect_ops(root)
        .into_iter()
        .filter(|&o| m.is(o, name))
        .collect()
}

/// A deterministic 64-bit LCG (no dependency needed).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn pick(&mut self, pool: &[ValueId]) -> ValueId {
        pool[self.below(pool.len())]
    }
}

pub fn same_view(b: &mut Builder<'_>, v: ValueId) -> ValueId {
    let layout = ViewLayout {
        offsets: &[0],
        sizes: &[4],
        strides: &[1],
    };
    b.reinterpret_cast(v, layout, &[], &[], vec_ty(4))
}
