//! Element-wise folds that map one large operand: casts, unary ops, Clip,
//! binary ops whose other side is a splat, Where with two splat sides.
//! Their results are lazy views over the operand (`Elements::mapped`),
//! computed in chunks when read in bulk (by a later fold, scrub, or the
//! streaming writer), so a chain of them never materializes in between.

use super::elementwise::{broadcast_shape, cast_value, clip_value, BinaryFn};
use super::unary::Kernel;
use super::Op;
use ir::elements::{DType, Elements, MapFn, WideNum};
use std::cell::Cell;
use std::sync::Arc;

/// Below this many distinct operand values folds compute eagerly.
pub const DEFAULT_LAZY_MIN: usize = 4096;

thread_local! {
    static LAZY_MIN: Cell<usize> = const { Cell::new(DEFAULT_LAZY_MIN) };
}

/// Runs `f` with folds going lazy from `n` distinct values on (the
/// constprop pass's `lazy-min-elements` option).
pub fn with_lazy_min<R>(n: usize, f: impl FnOnce() -> R) -> R {
    let old = LAZY_MIN.with(|c| c.replace(n));
    let r = f();
    LAZY_MIN.with(|c| c.set(old));
    r
}

/// Values a view really holds: broadcast (stride 0) dims count once.
fn distinct_len(e: &Elements) -> usize {
    e.shape()
        .iter()
        .zip(e.strides())
        .filter(|&(_, &s)| s != 0)
        .map(|(&d, _)| d.max(0) as usize)
        .product()
}

/// `f` over `x` broadcast to the operands' common shape, lazily, when `x`
/// is large. Float8/float4 results (saturation rules) stay eager.
fn map_over(x: &Elements, all: &[Option<Elements>], dtype: DType, f: MapFn) -> Option<Elements> {
    if distinct_len(x) < LAZY_MIN.with(Cell::get) {
        return None;
    }
    let mut shape: Vec<i64> = Vec::new();
    for e in all.iter().flatten() {
        shape = broadcast_shape(&shape, e.shape())?;
    }
    x.broadcast_to(&shape)?.mapped(dtype, f)
}

fn splat_value(e: &Elements) -> Option<WideNum> {
    if e.is_splat() {
        e.get(0)
    } else {
        None
    }
}

/// A lazy cast of operand 0 (CastLike's second operand only names the
/// dtype).
pub(super) fn cast(o: Op) -> Option<Elements> {
    let x = o.input(0)?;
    let dtype = o.dtype(0).ok()?;
    let ca = x.dtype().class();
    let f: MapFn = Arc::new(move |v| cast_value(v, ca, dtype));
    map_over(x, o.inputs.get(..1).unwrap_or_default(), dtype, f)
}

/// A lazy Clip of operand 0 to `lo..=hi`.
pub(super) fn clip(o: Op, lo: Option<WideNum>, hi: Option<WideNum>) -> Option<Elements> {
    let x = o.input(0)?;
    let dtype = o.dtype(0).ok()?;
    let ca = x.dtype().class();
    let f: MapFn = Arc::new(move |v| clip_value(ca, v, lo, hi));
    map_over(x, o.inputs, dtype, f)
}

/// A lazy Where whose two sides are splats.
pub(super) fn select(o: Op) -> Option<Elements> {
    let [Some(c), Some(a), Some(b)] = o.inputs else {
        return None;
    };
    let dtype = o.dtype(0).ok()?;
    let (a, b) = (splat_value(a)?, splat_value(b)?);
    let f: MapFn = Arc::new(move |v| if v.u64() != 0 { a } else { b });
    map_over(c, o.inputs, dtype, f)
}

/// A lazy two-operand op of which one side is a splat.
pub(super) fn binary(o: Op, a: &Elements, b: &Elements, k: &BinaryFn) -> Option<Elements> {
    let dtype = o.dtype(0).ok()?;
    let k = k.clone();
    let (big, f): (&Elements, MapFn) = match (splat_value(a), splat_value(b)) {
        (None, Some(s)) => (a, Arc::new(move |v| k(v, s))),
        (Some(s), None) => (b, Arc::new(move |v| k(s, v))),
        _ => return None,
    };
    map_over(big, o.inputs, dtype, f)
}

/// A lazy one-operand op.
pub(super) fn unary(o: Op, x: &Elements, k: Kernel) -> Option<Elements> {
    let dtype = o.dtype(0).ok()?;
    map_over(x, o.inputs, dtype, k)
}

#[cfg(test)]
mod tests {
    use crate::hybrid::ConstProp;
    use ir::attr::Attribute;
    use ir::pass::Pass;
    use ir::FuncOp;

    /// A chain of maps folds to views over the first constant's buffer:
    /// nothing is computed until read.
    #[test]
    fn chains_stay_views_of_their_operand() {
        let src = r#"
func.func @f() -> tensor<4xi8> {
  %x = "onnx.Constant"() {value = dense<[-2.5, -1.0, 0.5, 3.7]> : tensor<4xf32>} : () -> tensor<4xf32>
  %two = "onnx.Constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %a = "onnx.Neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = "onnx.Mul"(%two, %a) : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %c = "onnx.Sigmoid"(%b) : (tensor<4xf32>) -> tensor<4xf32>
  %d = "onnx.Cast"(%b) {to = 3 : si64} : (tensor<4xf32>) -> tensor<4xi8>
  return %d : tensor<4xi8>
}"#;
        frontend::dialect::register();
        let mut m = ir::text::parse_module(src, "t.mlir").unwrap();
        let consts = |m: &ir::Module| -> Vec<ir::elements::Elements> {
            m.collect_ops(m.top())
                .into_iter()
                .filter_map(|op| match m.attr(op, "value") {
                    Some(Attribute::Elements(e)) => Some(e.clone()),
                    _ => None,
                })
                .collect()
        };
        let x = consts(&m)[0].clone();
        let pass = ConstProp {
            config: Default::default(),
            growth: crate::hybrid::Growth::Unbounded,
            lazy_min: 0,
            version_ranks: false,
        };
        pass.run(&mut m, &mut Default::default()).unwrap();
        let ret = m
            .collect_ops(m.top())
            .into_iter()
            .find(|&o| m.is(o, FuncOp::Return))
            .unwrap();
        let def = m.defining_op(m.operand(ret, 0).unwrap()).unwrap();
        let Some(Attribute::Elements(d)) = m.attr(def, "value") else {
            panic!(
                "not folded: {}",
                ir::text::print_module(&m, &Default::default())
            );
        };
        assert!(d.is_lazy());
        assert_eq!(d.root_buffer().as_ptr(), x.buffer().as_ptr());
        let vals: Vec<i64> = d.iter().map(|v| v.i64()).collect();
        assert_eq!(vals, vec![5, 2, -1, -7]);
    }
}
