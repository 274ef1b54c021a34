//! The op under inference: operand types and constant operand values, with
//! misuse turned into diagnostics naming the op. Attributes are read
//! through the typed views of the `onnx` crate (`ops::Gemm::of(m, op)`).

use super::dims::{self, Dim, Dims, Unifier};
use ir::dialects::op_error;
use ir::elements::{Elements, NumClass};
use ir::{Diagnostic, Module, OpId, Type, ValueId, DYN};
use onnx::OpKind;

pub(crate) struct Ctx<'m> {
    pub m: &'m Module,
    pub op: OpId,
    /// Where equalities between sizes go, when the whole function is
    /// being inferred (a single op's inference records none).
    pub unify: Option<&'m Unifier>,
}

impl<'m> Ctx<'m> {
    pub fn err(&self, msg: impl Into<String>) -> Diagnostic {
        op_error(self.m, self.op, msg)
    }

    /// Operand `i` unless absent or `onnx.NoValue`.
    pub fn operand(&self, i: usize) -> Option<ValueId> {
        let v = self.m.operand(self.op, i)?;
        match self.m.value_type(v) {
            Type::None => None,
            _ => Some(v),
        }
    }
    pub fn num_operands(&self) -> usize {
        self.m.operands(self.op).len()
    }
    pub fn num_results(&self) -> usize {
        self.m.results(self.op).len()
    }

    fn tensor_type(&self, i: usize) -> Result<&'m ir::types::TensorType, Diagnostic> {
        let v = self
            .operand(i)
            .ok_or_else(|| self.err(format!("missing operand #{i}")))?;
        let ty = self.m.value_type(v);
        ty.as_tensor()
            .ok_or_else(|| self.err(format!("operand #{i} must be a tensor, got {ty}")))
    }
    /// Element type of operand `i`.
    pub fn elem(&self, i: usize) -> Result<Type, Diagnostic> {
        Ok(self.tensor_type(i)?.elem.clone())
    }
    /// Shape of operand `i`; `None` when unranked.
    pub fn shape(&self, i: usize) -> Result<Option<Vec<i64>>, Diagnostic> {
        Ok(self.tensor_type(i)?.shape.clone())
    }
    /// Operand `i`'s type unchanged (symbolic dims included).
    pub fn same_as(&self, i: usize) -> Result<Type, Diagnostic> {
        let t = self.tensor_type(i)?;
        Ok(Type::Tensor(std::sync::Arc::new(t.clone())))
    }
    /// Symbolic dims of operand `i`; `None` when unranked.
    pub fn dims(&self, i: usize) -> Result<Option<Dims>, Diagnostic> {
        Ok(self.tensor_type(i)?.sym_dims())
    }

    /// Two sizes the op requires to be equal: a static conflict is
    /// reported; otherwise the better known one, the equality recorded.
    pub fn equal(&self, a: &Dim, b: &Dim, what: &str) -> Result<Dim, Diagnostic> {
        let (Some(x), Some(y)) = (a, b) else {
            return Ok(a.clone().or_else(|| b.clone()));
        };
        match (x.as_const(), y.as_const()) {
            (Some(p), Some(q)) if p != q => Err(self.err(format!("{what} mismatch: {p} vs {q}"))),
            _ if x == y => Ok(a.clone()),
            (Some(_), None) => {
                self.record(x, y);
                Ok(a.clone())
            }
            (None, Some(_)) => {
                self.record(x, y);
                Ok(b.clone())
            }
            _ => {
                self.record(x, y);
                Ok(Some(x.min(y).clone()))
            }
        }
    }
    fn record(&self, a: &ir::dim::DimExpr, b: &ir::dim::DimExpr) {
        if let Some(u) = self.unify {
            u.equal(a, b);
        }
    }

    /// NumPy broadcast of two symbolic shapes: a 1 yields to the other
    /// dim, static sizes must agree. Two different symbolic sizes may
    /// still broadcast (one may be 1 at run time), so no equality is
    /// recorded and the result is neither: a constant other than 1 when
    /// one is, else their `broadcast(a, b)` size (`ir::dim`); an unknown
    /// one takes a fresh symbol there. The generated code checks the sizes
    /// at run time.
    pub fn broadcast_pair(&self, a: &[Dim], b: &[Dim]) -> Result<Dims, Diagnostic> {
        let rank = a.len().max(b.len());
        let at = |s: &[Dim], k: usize| -> Dim {
            match (k + s.len()).checked_sub(rank) {
                Some(i) => s.get(i).cloned().flatten(),
                None => dims::c(1),
            }
        };
        (0..rank)
            .map(|k| {
                let (x, y) = (at(a, k), at(b, k));
                Ok(match (dims::value(&x), dims::value(&y)) {
                    (Some(1), _) => y,
                    (_, Some(1)) => x,
                    (Some(p), Some(q)) if p != q => {
                        return Err(self.err(format!(
                            "shapes {} and {} do not broadcast",
                            show(a),
                            show(b)
                        )))
                    }
                    (Some(_), _) => x,
                    (_, Some(_)) => y,
                    // An unknown size gets a symbol of its own (when the
                    // whole function is inferred), so the broadcast keeps
                    // a name later shape arithmetic can use.
                    _ => match (x.or_else(|| self.fresh()), y.or_else(|| self.fresh())) {
                        (Some(p), Some(q)) => Some(p.broadcast(&q)),
                        _ => None,
                    },
                })
            })
            .collect()
    }

    /// A symbol of its own for a size nothing determines (only while the
    /// whole function is inferred).
    fn fresh(&self) -> Dim {
        self.unify.map(Unifier::fresh)
    }

    /// Broadcast of operands `ids` (symbolic); unranked if one is.
    pub fn broadcast_dims(
        &self,
        ids: impl IntoIterator<Item = usize>,
    ) -> Result<Option<Dims>, Diagnostic> {
        let mut acc: Dims = Vec::new();
        for i in ids {
            let Some(d) = self.dims(i)? else {
                return Ok(None);
            };
            acc = self.broadcast_pair(&acc, &d)?;
        }
        Ok(Some(acc))
    }

    /// The value of operand `i` when an `onnx.Constant` defines it.
    pub fn const_elements(&self, i: usize) -> Option<&'m Elements> {
        let def = onnx::defined_by(self.m, self.operand(i)?, OpKind::Constant)?;
        onnx::ops::Constant::of(self.m, def).value()
    }
    /// The length of 1-D operand `i` when static (a list whose values are
    /// unknown, like runtime `axes`).
    pub fn static_len(&self, i: usize) -> Option<usize> {
        match self.tensor_type(i).ok()?.shape.as_deref()? {
            [n] if *n != DYN => usize::try_from(*n).ok(),
            _ => None,
        }
    }
    /// A constant scalar (or one-element) integer operand.
    pub fn const_int(&self, i: usize) -> Option<i64> {
        match self.const_ints(i)?.as_slice() {
            [v] => Some(*v),
            _ => None,
        }
    }

    /// Integer values of a constant operand (floats are truncated).
    pub fn const_ints(&self, i: usize) -> Option<Vec<i64>> {
        let e = self.const_elements(i)?;
        let class = e.dtype().class();
        Some(
            e.iter()
                .map(|w| match class {
                    NumClass::Float => w.f64() as i64,
                    NumClass::Signed => w.i64(),
                    NumClass::Unsigned => i64::try_from(w.u64()).unwrap_or(i64::MAX),
                })
                .collect(),
        )
    }
    /// Values of a constant operand as f64.
    pub fn const_f64s(&self, i: usize) -> Option<Vec<f64>> {
        let e = self.const_elements(i)?;
        let class = e.dtype().class();
        Some(e.iter().map(|w| w.to_f64(class)).collect())
    }

    /// Normalizes `axis` against `rank` or reports it.
    pub fn axis(&self, axis: i64, rank: usize) -> Result<usize, Diagnostic> {
        onnx::axis::normalize(axis, rank)
            .ok_or_else(|| self.err(format!("axis {axis} is out of range for rank {rank}")))
    }

    /// Every axis of `axes` normalized against `rank`, or the first one out
    /// of range reported.
    pub fn axes(&self, axes: &[i64], rank: usize) -> Result<Vec<usize>, Diagnostic> {
        axes.iter().map(|&a| self.axis(a, rank)).collect()
    }

    /// One inferred type per result: extra ones dropped, missing ones kept
    /// as declared.
    pub fn fit(&self, mut tys: Vec<Type>) -> Vec<Type> {
        let results = self.m.results(self.op);
        tys.truncate(results.len());
        for &r in results.get(tys.len()..).unwrap_or(&[]) {
            tys.push(self.m.value_type(r).clone());
        }
        tys
    }

    /// An element type given as an ONNX data type number; `what` names it
    /// in the error.
    pub fn dtype(&self, code: i64, what: &str) -> Result<Type, Diagnostic> {
        i32::try_from(code)
            .ok()
            .and_then(crate::import::tensor::elem_type_from_onnx)
            .ok_or_else(|| self.err(format!("unsupported {what} {code}")))
    }
}

/// `[N, 3, ?]` for messages.
pub fn show(d: &[Dim]) -> String {
    let items: Vec<String> = d
        .iter()
        .map(|e| e.as_ref().map_or("?".to_string(), ToString::to_string))
        .collect();
    format!("[{}]", items.join(", "))
}
