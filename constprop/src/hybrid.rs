//! The hybrid pass: one top-down greedy rewrite that folds constants,
//! canonicalizes, and refines result types by shape inference, so shape
//! computations (Shape → Gather → Concat → Reshape) collapse in one run.

use crate::canon;
use crate::fold::fold_op;
use ir::attr::Attribute;
use ir::pass::{Pass, PassContext};
use ir::rewrite::{apply_greedily, GreedyConfig, Pattern};
use ir::FuncOp;
use ir::{Builder, InsertPoint, Module, OpId, OpSpec, Result, Sym, Type};
use onnx::{branches, OpKind};
use std::sync::atomic::{AtomicUsize, Ordering};

/// How much a fold may grow the constants, in the bytes they take once
/// emitted (`Elements::emitted_bytes`: a broadcast counts its core; for
/// `None`, as an exported model writes them, `exported_bytes`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Growth {
    /// Any fold (`onnxc opt`'s default).
    Unbounded,
    /// Results up to this factor of the operands' bytes (`compile`).
    Factor(f64),
    /// The model grows by a bounded amount at most (`fold`): results no
    /// larger than the constant operands that go away with the op, or up
    /// to 1 KiB, or paid from [`growth_budget`] bytes for the module.
    None,
}

/// The bytes `Growth::None` may add to a module's constants in all:
/// 256 KiB, or 1/64 of what the module holds. Grids a detector computes
/// from its fixed input size (YOLOv8n at 640: 100 KB of anchors and
/// strides against 12.6 MB of weights) become constants, as
/// onnx-simplifier makes them; a fold that would expand a broadcast to a
/// model-sized tensor still stays an op.
pub fn growth_budget(constant_bytes: usize) -> usize {
    (constant_bytes / 64).max(256 << 10)
}

/// Results this small fold under `Growth::None` without drawing on the
/// budget (shapes, zero biases, small tables computed from shared
/// constants): the node a fold removes, with its names, weighs about as
/// much, and what they enable downstream (a tree ensemble over constant
/// features) often removes more. So a fold adds at most this much per
/// node it removes, plus the budget.
const SMALL_RESULT_BYTES: usize = 1024;

/// The bytes `e` takes in an exported model: whole up to
/// `WHOLE_BYTES`, else compactly (`canon/repeats.rs` writes it so).
fn exported_bytes(e: &ir::elements::Elements) -> usize {
    match e.dtype().storage_bytes(e.len()) {
        Some(whole) if whole <= ir::elements::WHOLE_BYTES => whole,
        _ => e.emitted_bytes(),
    }
}

/// The bytes of every constant in `m` once emitted.
fn constant_bytes(m: &Module) -> usize {
    m.top_level_ops(FuncOp::Func)
        .into_iter()
        .flat_map(|f| m.collect_ops(f))
        .filter(|&op| OpKind::of(m, op) == Some(OpKind::Constant))
        .flat_map(|op| m.attrs(op).iter().map(|(_, a)| attr_bytes(a)))
        .sum()
}

/// About the bytes attribute `a` takes in an ONNX node.
fn attr_bytes(a: &Attribute) -> usize {
    match a {
        Attribute::Elements(e) => e.emitted_bytes(),
        Attribute::DenseArray(_, v) => 8 * v.len(),
        Attribute::Array(items) => items.iter().map(attr_bytes).sum(),
        Attribute::String(s) => s.len(),
        Attribute::Int(..) | Attribute::Float(..) | Attribute::Bool(_) => 8,
        _ => 0,
    }
}

/// Replaces an op whose operands are all constants by constants, unless
/// the results would grow the constants more than `growth` allows.
struct FoldConstants {
    growth: Growth,
    /// What is left of the module's growth budget (`Growth::None`).
    spare: AtomicUsize,
}

impl FoldConstants {
    fn allows(&self, m: &Module, op: OpId, values: &[ir::elements::Elements]) -> bool {
        let outs: usize = values.iter().map(|e| e.emitted_bytes()).sum();
        let operand = |i| crate::fold::constant_operand(m, op, i);
        match self.growth {
            Growth::Unbounded => true,
            Growth::Factor(bound) => {
                let ins: usize = (0..m.operands(op).len())
                    .filter_map(operand)
                    .map(|e| e.emitted_bytes())
                    .sum();
                outs as f64 <= bound * ins.max(1) as f64
            }
            // The model keeps its format: quantized runtimes (onnxruntime's
            // QDQ fusion, TensorRT) key on DequantizeLinear over int8
            // weights, whatever their size.
            Growth::None if OpKind::of(m, op) == Some(OpKind::DequantizeLinear) => false,
            Growth::None => {
                // Constant operands no other op uses are written no more.
                let mut freed = 0;
                let mut seen = Vec::new();
                for (i, &v) in m.operands(op).iter().enumerate() {
                    if !seen.contains(&v) && m.users(v) == [op] {
                        seen.push(v);
                        freed += operand(i).map_or(0, |e| exported_bytes(&e));
                    }
                }
                // So are the op's own attributes (a tree ensemble's nodes).
                let attrs: usize = m.attrs(op).iter().map(|(_, a)| attr_bytes(a)).sum();
                let outs: usize = values.iter().map(exported_bytes).sum();
                let grows = outs.saturating_sub((freed + attrs).max(SMALL_RESULT_BYTES));
                // One rewrite at a time: load and store need no exchange.
                let spare = self.spare.load(Ordering::Relaxed);
                if grows > spare {
                    return false;
                }
                self.spare.store(spare - grows, Ordering::Relaxed);
                true
            }
        }
    }
}

impl Pattern for FoldConstants {
    fn name(&self) -> &'static str {
        "fold-constants"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        let foldable = match OpKind::of(m, op) {
            None | Some(OpKind::Constant | OpKind::NoValue) => false,
            Some(_) => m.is_pure(op),
        };
        if !foldable {
            return Ok(false);
        }
        // A kernel bug on odd input must not abort compilation: leave the op.
        let folded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| fold_op(m, op)));
        let Ok(folded) = folded else {
            // Or the compile was cancelled meanwhile (ir::cancel::poll).
            ir::cancel::check()?;
            tracing::warn!("folding {} panicked; op left unfolded", m.name(op).as_str());
            return Ok(false);
        };
        let Some(values) = folded? else {
            return Ok(false);
        };
        if values.len() != m.results(op).len() {
            return Ok(false);
        }
        if !self.allows(m, op, &values) {
            return Ok(false);
        }
        let loc = m.loc(op).clone();
        let mut new = Vec::with_capacity(values.len());
        for e in values {
            let ty = e.tensor_type();
            let c = m.create_op(
                Sym::new(OpKind::Constant.ir_name()),
                OpSpec {
                    result_types: vec![ty],
                    attrs: vec![(Sym::new("value"), Attribute::Elements(e))],
                    loc: loc.clone(),
                    ..OpSpec::default()
                },
            );
            m.insert(c, InsertPoint::Before(op));
            new.push(m.results(c)[0]);
        }
        m.replace_op(op, &new);
        Ok(true)
    }
}

/// Identity and inference-mode Dropout forward their input.
struct ForwardIdentity;

impl Pattern for ForwardIdentity {
    fn name(&self) -> &'static str {
        "forward-identity"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        let forwards = match OpKind::of(m, op) {
            Some(OpKind::Identity) => true,
            Some(OpKind::Dropout) => {
                m.results(op).get(1).is_none_or(|&mask| !m.has_uses(mask))
                    && m.operands(op).len() < 3
            }
            _ => false,
        };
        if !forwards {
            return Ok(false);
        }
        let (Some(x), Some(r)) = (m.operand(op, 0), m.result(op, 0)) else {
            return Ok(false);
        };
        if m.value_type(x) != m.value_type(r) {
            return Ok(false);
        }
        m.replace_all_uses(r, x);
        m.erase_op(op);
        Ok(true)
    }
}

/// Refines result types with shape inference when it knows more.
struct RefineTypes;

/// `new` where it knows more than `old`, else `None`: static dims where
/// `old` had `?`; a symbolic size where `new` has one (a refined name),
/// `old`'s where `new` knows none (inference of one op has no fresh
/// symbols to give: it must not drop the whole function's).
fn refined(new: &Type, old: &Type) -> Option<Type> {
    let (n, o) = (new.as_tensor()?, old.as_tensor()?);
    let t = match (&n.shape, &o.shape) {
        (Some(_), None) => new.clone(),
        (Some(ns), Some(os)) => {
            let fits = ns.len() == os.len() && n.elem == o.elem;
            if !fits || !ns.iter().zip(os).all(|(&a, &b)| a == b || b == ir::DYN) {
                return None;
            }
            let (nd, od) = (n.sym_dims()?, o.sym_dims()?);
            let dims = nd.into_iter().zip(od).map(|(a, b)| a.or(b)).collect();
            Type::tensor_dims(dims, n.elem.clone())
        }
        _ => return None,
    };
    (t != *old).then_some(t)
}

impl Pattern for RefineTypes {
    fn name(&self) -> &'static str {
        "refine-types"
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        if m.name(op).dialect() != "onnx" {
            return Ok(false);
        }
        let Some(types) = frontend::infer::infer_op(m, op)? else {
            return Ok(false);
        };
        let mut changed = false;
        for (&r, t) in m.results(op).to_vec().iter().zip(types) {
            if let Some(t) = refined(&t, m.value_type(r)) {
                m.set_value_type(r, t);
                changed = true;
            }
        }
        Ok(changed)
    }
}

/// A pattern that leaves ops in a failing If branch alone (the branch
/// aborts if taken, see `onnx::branches`); an error inside an If branch
/// marks that branch failing instead of failing the compile, as long as
/// the other branch is live.
struct Live<'a>(&'a dyn Pattern);

impl Pattern for Live<'_> {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn root(&self) -> Option<&'static str> {
        self.0.root()
    }
    fn rewrite(&self, m: &mut Module, op: OpId) -> Result<bool> {
        if branches::in_dead_branch(m, op) {
            return Ok(false);
        }
        let err = match self.0.rewrite(m, op) {
            Err(e) => e,
            done => return done,
        };
        match branches::enclosing_branch(m, op) {
            Some((iff, k)) if branches::set_branch_error(m, iff, k, Some(&err)) => {
                tracing::warn!(
                    "{}: the {} branch of '{}' fails shape inference and aborts if taken: {}",
                    m.loc(iff),
                    branches::branch_name(k),
                    m.name(iff),
                    branches::error_text(&err)
                );
                Ok(true)
            }
            _ => Err(err),
        }
    }
}

/// Keeps `function_type` in step with the argument and returned types.
pub fn refresh_function_types(m: &mut Module) {
    for f in m.top_level_ops(FuncOp::Func) {
        let Some(entry) = m.region(f, 0).and_then(|r| m.entry_block(r)) else {
            continue;
        };
        let inputs: Vec<Type> = m
            .block_args(entry)
            .iter()
            .map(|&a| m.value_type(a).clone())
            .collect();
        let Some(ret) = m.last_op(entry).filter(|&t| m.is(t, FuncOp::Return)) else {
            continue;
        };
        let results: Vec<Type> = m
            .operands(ret)
            .iter()
            .map(|&v| m.value_type(v).clone())
            .collect();
        m.set_attr(
            f,
            "function_type",
            Attribute::Type(Type::function(inputs, results)),
        );
    }
}

pub struct ConstProp {
    pub config: GreedyConfig,
    /// How much folds may grow the constants (`--fold-expansion-bound`).
    pub growth: Growth,
    /// Element-wise folds over at least this many values give lazy views.
    pub lazy_min: usize,
    /// Values whose rank is decided at run time get one version of their
    /// continuation per rank (`version`); only when compiling to code.
    pub version_ranks: bool,
}

/// Rounds of versioning at most (each is followed by inference).
const MAX_VERSION_ROUNDS: usize = 32;

/// Rewrite-then-CSE rounds at most (each round is cheap once nothing folds).
const MAX_CSE_ROUNDS: usize = 4;

/// Ops CSE may merge: pure ONNX ops except a Dropout that may be training;
/// the names and doc strings the importer keeps (`onnx.*`) do not count.
const CSE_RULES: ir::transforms::cse::Rules<'static> = ir::transforms::cse::Rules {
    keep: &|m, op| match OpKind::of(m, op) {
        Some(OpKind::Dropout) => m.operands(op).len() < 3,
        _ => true,
    },
    metadata: &|name| name.starts_with("onnx."),
};

impl ConstProp {
    fn rewrite(
        &self,
        m: &mut Module,
        f: OpId,
        patterns: &[&dyn Pattern],
        cx: &mut PassContext,
    ) -> Result<()> {
        let before = m.num_ops();
        let report = crate::fold::with_lazy_min(self.lazy_min, || {
            apply_greedily(m, f, patterns, &self.config)
        })?;
        cx.bump("constprop.rewrites", report.rewrites as u64);
        cx.bump("constprop.erased", report.erased as u64);
        cx.bump(
            "constprop.ops-removed",
            before.saturating_sub(m.num_ops()) as u64,
        );
        if let Some(w) = report.warning("constprop") {
            tracing::warn!("{w}");
            cx.warnings.push(w);
        }
        Ok(())
    }
}

impl Pass for ConstProp {
    fn name(&self) -> &'static str {
        "constprop"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let fold = FoldConstants {
            growth: self.growth,
            spare: AtomicUsize::new(match self.growth {
                Growth::None => growth_budget(constant_bytes(m)),
                _ => 0,
            }),
        };
        let inner: [&dyn Pattern; 17] = [
            &RefineTypes,
            &ForwardIdentity,
            &fold,
            &canon::StaticShape,
            &canon::KnownShapeValue,
            &canon::ForwardNop,
            &canon::ConstantTarget,
            &canon::FuseChains,
            &canon::ZeroRecurrentInputs,
            &canon::FoldBatchNorm,
            &canon::AffineIntoConv,
            &canon::MatMulAddToGemm,
            &canon::NeutralOperand,
            &canon::ConstantsRight,
            &canon::Reassociate,
            &canon::ConstantIf,
            &canon::ShrinkBroadcastOperands,
        ];
        let live = inner.map(Live);
        let patterns: Vec<&dyn Pattern> = live.iter().map(|p| p as &dyn Pattern).collect();
        for _ in 0..MAX_VERSION_ROUNDS {
            // Merging equal ops (two Shape(x), the same Unsqueeze of a size)
            // can make more fold: rewrite again while CSE finds something.
            for _ in 0..MAX_CSE_ROUNDS {
                for f in m.top_level_ops(FuncOp::Func) {
                    self.rewrite(m, f, &patterns, cx)?;
                }
                let merged = ir::transforms::cse::cse_with(m, &CSE_RULES);
                cx.bump("constprop.cse-merged", merged as u64);
                if merged == 0 {
                    break;
                }
            }
            if !self.version_ranks || !crate::version::version_ranks(m)? {
                break;
            }
            cx.bump("constprop.versioned", 1);
        }
        refresh_function_types(m);
        Ok(())
    }
}

/// A `Builder` helper used by tests to make constants.
pub fn constant(b: &mut Builder<'_>, e: ir::elements::Elements) -> ir::ValueId {
    let ty = e.tensor_type();
    b.op1(
        OpKind::Constant.ir_name(),
        &[],
        ty,
        &[("value", Attribute::Elements(e))],
    )
}
