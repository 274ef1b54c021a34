//! What small integer tensors hold, as symbolic sizes: the content of the
//! shape arithmetic exporters write (`Shape → Gather → Unsqueeze → Concat
//! → Reshape`, `Shape → Slice → Concat → Expand`). Each element is a
//! [`DimExpr`] when known, `None` when not, so `Shape(x)[1:]` of an `x`
//! whose batch alone is dynamic is known to be all constants (and folds),
//! and a Reshape to `Concat(Shape(x)[0], [-1, 64])` gets the batch symbol.

use crate::{ops, OpKind};
use ir::dim::DimExpr;
use ir::elements::DType;
use ir::entity::SecondaryMap;
use ir::{Module, ValueId};

/// The longest shape value tracked (a rank, in practice).
const MAX_LEN: usize = 64;
/// How far back through defining ops one query looks.
const MAX_DEPTH: usize = 64;

/// The elements of a 0-D or 1-D integer tensor; `None` for one not known.
pub type ShapeValue = Vec<Option<DimExpr>>;

/// Memoized shape values of one module state (clear it after rewrites).
#[derive(Default)]
pub struct ShapeValues {
    memo: SecondaryMap<ValueId, Option<Option<ShapeValue>>>,
}

impl ShapeValues {
    pub fn new() -> Self {
        Self::default()
    }

    /// The content of `v`, if it is a small integer tensor whose elements
    /// this analysis can say anything about.
    pub fn get(&mut self, m: &Module, v: ValueId) -> Option<ShapeValue> {
        self.at(m, v, 0)
    }

    /// Every element of `v` when all are constants.
    pub fn constants(&mut self, m: &Module, v: ValueId) -> Option<Vec<i64>> {
        self.get(m, v)?
            .into_iter()
            .map(|e| e.and_then(|e| e.as_const()))
            .collect()
    }

    fn at(&mut self, m: &Module, v: ValueId, depth: usize) -> Option<ShapeValue> {
        if let Some(known) = self.memo.get(v) {
            return known.clone();
        }
        let r = if depth > MAX_DEPTH || !plausible(m, v) {
            None
        } else {
            self.compute(m, v, depth + 1)
        };
        self.memo.set(v, Some(r.clone()));
        r
    }

    fn operand(&mut self, m: &Module, op: ir::OpId, i: usize, d: usize) -> Option<ShapeValue> {
        let v = m.operand(op, i)?;
        self.at(m, v, d)
    }

    fn compute(&mut self, m: &Module, v: ValueId, d: usize) -> Option<ShapeValue> {
        let op = m.defining_op(v)?;
        let kind = OpKind::of(m, op)?;
        match kind {
            OpKind::Constant => constant(m, op),
            OpKind::Shape => shape_of(m, op),
            OpKind::Size => {
                let t = m.value_type(m.operand(op, 0)?).as_tensor()?;
                let dims = t.sym_dims()?;
                let n = dims
                    .into_iter()
                    .try_fold(DimExpr::constant(1), |acc, e| Some(acc.mul(&e?)));
                Some(vec![n])
            }
            OpKind::Identity | OpKind::Squeeze | OpKind::Unsqueeze | OpKind::Reshape => {
                // Same elements, rank 0 ↔ 1 (the result is small and integer).
                let x = self.operand(m, op, 0, d)?;
                (x.len() == result_len(m, v)?).then_some(x)
            }
            OpKind::Cast => {
                let x = self.operand(m, op, 0, d)?;
                is_int(m, m.operand(op, 0)?).then_some(x)
            }
            OpKind::Concat => {
                let mut out = Vec::new();
                for i in 0..m.operands(op).len() {
                    out.extend(self.operand(m, op, i, d)?);
                }
                Some(out)
            }
            OpKind::Gather => self.gather(m, op, d),
            OpKind::Slice => self.slice(m, op, d),
            OpKind::Add | OpKind::Sub | OpKind::Mul | OpKind::Div | OpKind::Mod => {
                self.arith(m, op, kind, d)
            }
            OpKind::Max | OpKind::Min => self.extreme(m, op, kind, d),
            OpKind::Where => {
                let c = self.operand(m, op, 0, d)?;
                let (a, b) = (self.operand(m, op, 1, d)?, self.operand(m, op, 2, d)?);
                let n = c.len().max(a.len()).max(b.len());
                (0..n)
                    .map(|i| {
                        let pick = bcast(&c, i)?.and_then(|e| e.as_const());
                        Some(match pick {
                            Some(0) => bcast(&b, i)?,
                            Some(_) => bcast(&a, i)?,
                            None => None,
                        })
                    })
                    .collect()
            }
            OpKind::Equal => {
                let (a, b) = (self.operand(m, op, 0, d)?, self.operand(m, op, 1, d)?);
                // A plain symbol is a size: never negative (torch's
                // Expand writes `Where(Equal(shape, -1), 1, shape)`).
                let size_vs_negative =
                    |s: &DimExpr, c: Option<i64>| s.as_sym().is_some() && c.is_some_and(|c| c < 0);
                zip_with(&a, &b, |x, y| match (x.as_const(), y.as_const()) {
                    _ if x == y => Some(DimExpr::constant(1)),
                    (Some(p), Some(q)) => Some(DimExpr::constant(i64::from(p == q))),
                    (p, q) if size_vs_negative(x, q) || size_vs_negative(y, p) => {
                        Some(DimExpr::constant(0))
                    }
                    _ => None,
                })
            }
            _ => None,
        }
    }

    fn gather(&mut self, m: &Module, op: ir::OpId, d: usize) -> Option<ShapeValue> {
        if ops::Gather::of(m, op).axis() != 0 {
            return None;
        }
        let data = self.operand(m, op, 0, d)?;
        let idx = self.operand(m, op, 1, d)?;
        let n = i64::try_from(data.len()).ok()?;
        idx.iter()
            .map(|i| {
                let i = i.as_ref()?.as_const()?;
                let i = if i < 0 { i + n } else { i };
                Some(data.get(usize::try_from(i).ok()?)?.clone())
            })
            .collect::<Option<Vec<_>>>()
            .map(|v| v.into_iter().collect())
    }

    fn slice(&mut self, m: &Module, op: ir::OpId, d: usize) -> Option<ShapeValue> {
        let data = self.operand(m, op, 0, d)?;
        let one = |s: &mut Self, i: usize| -> Option<Option<i64>> {
            if m.operand(op, i)
                .is_none_or(|v| *m.value_type(v) == ir::Type::None)
            {
                return Some(None);
            }
            match s.operand(m, op, i, d)?.as_slice() {
                [Some(e)] => Some(Some(e.as_const()?)),
                _ => None,
            }
        };
        let (start, end) = (one(self, 1)??, one(self, 2)??);
        if one(self, 3)?.is_some_and(|a| a != 0 && a != -1) {
            return None;
        }
        let step = one(self, 4)?.unwrap_or(1);
        let n = i64::try_from(data.len()).ok()?;
        let clamp = |v: i64, lo: i64, hi: i64| {
            let v = if v < 0 { v.saturating_add(n) } else { v };
            v.clamp(lo, hi)
        };
        let mut out = Vec::new();
        if step > 0 {
            let (mut i, e) = (clamp(start, 0, n), clamp(end, 0, n));
            while i < e {
                out.push(data.get(usize::try_from(i).ok()?)?.clone());
                i += step;
            }
        } else if step < 0 {
            let (mut i, e) = (clamp(start, -1, n - 1), clamp(end, -1, n - 1));
            while i > e {
                out.push(data.get(usize::try_from(i).ok()?)?.clone());
                i += step;
            }
        } else {
            return None;
        }
        Some(out)
    }

    fn arith(&mut self, m: &Module, op: ir::OpId, kind: OpKind, d: usize) -> Option<ShapeValue> {
        let (a, b) = (self.operand(m, op, 0, d)?, self.operand(m, op, 1, d)?);
        zip_with(&a, &b, |x, y| match kind {
            OpKind::Add => Some(x.add(y)),
            OpKind::Sub => Some(x.sub(y)),
            OpKind::Mul => Some(x.mul(y)),
            // Integer Div truncates; sizes are not negative, so it floors.
            OpKind::Div => match y.as_const() {
                Some(c) if c > 0 => match x.as_const() {
                    Some(v) if v < 0 => None,
                    _ => x.floordiv(c),
                },
                _ => x.exact_div(y),
            },
            _ => match (x.as_const(), y.as_const()) {
                (Some(p), Some(q)) if q != 0 => Some(DimExpr::constant(p % q)),
                _ => None,
            },
        })
    }

    fn extreme(&mut self, m: &Module, op: ir::OpId, kind: OpKind, d: usize) -> Option<ShapeValue> {
        let mut acc = self.operand(m, op, 0, d)?;
        for i in 1..m.operands(op).len() {
            let b = self.operand(m, op, i, d)?;
            acc = zip_with(&acc, &b, |x, y| {
                let (p, q) = (x.as_const()?, y.as_const()?);
                Some(DimExpr::constant(if kind == OpKind::Max {
                    p.max(q)
                } else {
                    p.min(q)
                }))
            })?;
        }
        Some(acc)
    }
}

/// Element `i` of `v` with NumPy broadcasting of a one-element `v`.
fn bcast(v: &ShapeValue, i: usize) -> Option<Option<DimExpr>> {
    match v.len() {
        1 => v.first().cloned(),
        _ => v.get(i).cloned(),
    }
}

/// `f` on the pairs of broadcast elements (unknown where either is).
fn zip_with(
    a: &ShapeValue,
    b: &ShapeValue,
    f: impl Fn(&DimExpr, &DimExpr) -> Option<DimExpr>,
) -> Option<ShapeValue> {
    let n = a.len().max(b.len());
    if (a.len() != n && a.len() != 1) || (b.len() != n && b.len() != 1) {
        return None;
    }
    (0..n)
        .map(|i| {
            Some(match (bcast(a, i)?, bcast(b, i)?) {
                (Some(x), Some(y)) => f(&x, &y),
                _ => None,
            })
        })
        .collect()
}

fn is_int(m: &Module, v: ValueId) -> bool {
    matches!(
        DType::from_type(m.value_type(v).element_type()),
        Some(DType::I64 | DType::I32 | DType::I16 | DType::I8 | DType::U8 | DType::Bool)
    )
}

/// The element count of a rank-0 or rank-1 static tensor.
fn result_len(m: &Module, v: ValueId) -> Option<usize> {
    match m.value_type(v).shape()? {
        [] => Some(1),
        [n] if *n >= 0 => usize::try_from(*n).ok(),
        _ => None,
    }
}

/// A small integer tensor, or a value not typed yet (an importer's
/// unranked placeholder): its defining op says what it holds.
fn plausible(m: &Module, v: ValueId) -> bool {
    let t = m.value_type(v);
    if t.as_tensor().is_some_and(|t| t.shape.is_none()) {
        return true;
    }
    is_int(m, v) && result_len(m, v).is_some_and(|n| n <= MAX_LEN)
}

fn constant(m: &Module, op: ir::OpId) -> Option<ShapeValue> {
    let e = ops::Constant::of(m, op).value()?;
    if e.len() > MAX_LEN || e.dtype().class() == ir::elements::NumClass::Float {
        return None;
    }
    Some(e.iter().map(|w| Some(DimExpr::constant(w.i64()))).collect())
}

fn shape_of(m: &Module, op: ir::OpId) -> Option<ShapeValue> {
    let t = m.value_type(m.operand(op, 0)?).as_tensor()?;
    let dims = t.sym_dims()?;
    let n = i64::try_from(dims.len()).ok()?;
    let view = ops::Shape::of(m, op);
    let start = crate::axis::clamp_index(view.start(), n);
    let end = crate::axis::clamp_index(view.end().unwrap_or(n), n);
    let (s, e) = (usize::try_from(start).ok()?, usize::try_from(end).ok()?);
    Some(dims.get(s..e.max(s))?.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"
func.func @f(%x: tensor<?x3x?x8xf32, #onnx.dims<"N, 3, S, 8">>) -> tensor<3xi64> {
  %s = "onnx.Shape"(%x) : (tensor<?x3x?x8xf32, #onnx.dims<"N, 3, S, 8">>) -> tensor<4xi64>
  %c1 = "onnx.Constant"() {value = dense<1> : tensor<1xi64>} : () -> tensor<1xi64>
  %c4 = "onnx.Constant"() {value = dense<4> : tensor<1xi64>} : () -> tensor<1xi64>
  %tail = "onnx.Slice"(%s, %c1, %c4) : (tensor<4xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %i0 = "onnx.Constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  %n = "onnx.Gather"(%s, %i0) {axis = 0 : i64} : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %n1 = "onnx.Unsqueeze"(%n, %i0) : (tensor<i64>, tensor<i64>) -> tensor<1xi64>
  %i2 = "onnx.Constant"() {value = dense<2> : tensor<1xi64>} : () -> tensor<1xi64>
  %sl = "onnx.Gather"(%s, %i2) {axis = 0 : i64} : (tensor<4xi64>, tensor<1xi64>) -> tensor<1xi64>
  %ns = "onnx.Mul"(%n1, %sl) : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %m1 = "onnx.Constant"() {value = dense<-1> : tensor<1xi64>} : () -> tensor<1xi64>
  %shape = "onnx.Concat"(%ns, %m1, %c4) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %half = "onnx.Div"(%sl, %i2) : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %t = "onnx.Concat"(%n1, %m1, %c4) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<3xi64>
  %eq = "onnx.Equal"(%t, %m1) : (tensor<3xi64>, tensor<1xi64>) -> tensor<3xi1>
  %fixed = "onnx.Where"(%eq, %c1, %t) : (tensor<3xi1>, tensor<1xi64>, tensor<3xi64>) -> tensor<3xi64>
  return %tail : tensor<3xi64>
}
"#;

    fn show(v: Option<ShapeValue>) -> String {
        let Some(v) = v else { return "none".into() };
        let items: Vec<String> = v
            .iter()
            .map(|e| e.as_ref().map_or("?".into(), ToString::to_string))
            .collect();
        items.join(", ")
    }

    #[test]
    fn shape_arithmetic_is_known_symbolically() {
        crate::dialect::register();
        let m = ir::text::parse_module(SRC, "t.mlir").unwrap_or_else(|e| panic!("{e}"));
        let mut sv = ShapeValues::new();
        let f = m
            .block_ops(m.body())
            .next()
            .unwrap_or_else(|| panic!("no func"));
        let results: Vec<ValueId> = m
            .collect_ops(f)
            .iter()
            .filter_map(|&op| m.results(op).first().copied())
            .collect();
        let values: Vec<String> = results.iter().map(|&v| show(sv.get(&m, v))).collect();
        assert_eq!(
            values,
            [
                "N, 3, S, 8",
                "1",
                "4",
                "3, S, 8",
                "0",
                "N",
                "N",
                "2",
                "S",
                "N * S",
                "-1",
                "N * S, -1, 4",
                "S floordiv 2",
                "N, -1, 4",
                // A size is never -1 (torch's Expand shape fix-up).
                "0, 1, 0",
                "N, 1, 4",
            ]
        );
        // Shape(x)[1:] is not all constants while S is dynamic; [4] is.
        assert_eq!(sv.constants(&m, results[3]), None);
        assert_eq!(sv.constants(&m, results[2]), Some(vec![4]));
    }
}
