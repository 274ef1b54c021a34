//! Typed builders for `arith` and `math`: one method per op, compare
//! predicates as enums, and the type-generic helpers kernels are written
//! with (`add` is `addf` on floats, `addi` on integers and index).

use super::Builder;
use crate::attr::Attribute;
use crate::module::ValueId;
use crate::ops::{ArithOp, MathOp};
use crate::types::{Signedness, Type};

/// `arith.cmpf` predicates, in the order of their integer encoding.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum CmpF {
    False,
    Oeq,
    Ogt,
    Oge,
    Olt,
    Ole,
    One,
    Ord,
    Ueq,
    Ugt,
    Uge,
    Ult,
    Ule,
    Une,
    Uno,
    True,
}

/// `arith.cmpi` predicates, in the order of their integer encoding.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum CmpI {
    Eq,
    Ne,
    Slt,
    Sle,
    Sgt,
    Sge,
    Ult,
    Ule,
    Ugt,
    Uge,
}

/// An order comparison, resolved per type by [`Builder::cmp`]: ordered
/// for floats, signed or unsigned for integers.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Unsigned integers, and bool (i1: false < true).
pub fn is_unsigned(t: &Type) -> bool {
    matches!(
        t,
        Type::Int {
            sign: Signedness::Unsigned,
            ..
        } | Type::Int { width: 1, .. }
    )
}

macro_rules! same_type_ops {
    ($($(#[$doc:meta])* $method:ident => $name:expr, $arity:tt;)*) => {
        impl Builder<'_> {
            $( same_type_ops!(@def [$($doc)*] $method, $name, $arity); )*
        }
    };
    (@def [$($doc:meta)*] $method:ident, $name:expr, 1) => {
        $(#[$doc])*
        pub fn $method(&mut self, x: ValueId) -> ValueId {
            self.same($name, &[x])
        }
    };
    (@def [$($doc:meta)*] $method:ident, $name:expr, 2) => {
        $(#[$doc])*
        pub fn $method(&mut self, x: ValueId, y: ValueId) -> ValueId {
            self.same($name, &[x, y])
        }
    };
}

same_type_ops! {
    addf => ArithOp::Addf, 2;
    subf => ArithOp::Subf, 2;
    mulf => ArithOp::Mulf, 2;
    divf => ArithOp::Divf, 2;
    remf => ArithOp::Remf, 2;
    negf => ArithOp::Negf, 1;
    /// The max that propagates NaN.
    maximumf => ArithOp::Maximumf, 2;
    minimumf => ArithOp::Minimumf, 2;
    /// The max that ignores a NaN operand.
    maxnumf => ArithOp::Maxnumf, 2;
    minnumf => ArithOp::Minnumf, 2;
    ceildivui => ArithOp::Ceildivui, 2;
    remsi => ArithOp::Remsi, 2;
    remui => ArithOp::Remui, 2;
    andi => ArithOp::Andi, 2;
    ori => ArithOp::Ori, 2;
    xori => ArithOp::Xori, 2;
    shli => ArithOp::Shli, 2;
    shrsi => ArithOp::Shrsi, 2;
    shrui => ArithOp::Shrui, 2;
    maxui => ArithOp::Maxui, 2;
    minui => ArithOp::Minui, 2;
    absf => MathOp::Absf, 1;
    absi => MathOp::Absi, 1;
    acos => MathOp::Acos, 1;
    acosh => MathOp::Acosh, 1;
    asin => MathOp::Asin, 1;
    asinh => MathOp::Asinh, 1;
    atan => MathOp::Atan, 1;
    atan2 => MathOp::Atan2, 2;
    atanh => MathOp::Atanh, 1;
    cbrt => MathOp::Cbrt, 1;
    ceil => MathOp::Ceil, 1;
    copysign => MathOp::Copysign, 2;
    cos => MathOp::Cos, 1;
    cosh => MathOp::Cosh, 1;
    erf => MathOp::Erf, 1;
    exp => MathOp::Exp, 1;
    exp2 => MathOp::Exp2, 1;
    expm1 => MathOp::Expm1, 1;
    floor => MathOp::Floor, 1;
    log => MathOp::Log, 1;
    log10 => MathOp::Log10, 1;
    log1p => MathOp::Log1p, 1;
    log2 => MathOp::Log2, 1;
    powf => MathOp::Powf, 2;
    roundeven => MathOp::Roundeven, 1;
    round => MathOp::Round, 1;
    rsqrt => MathOp::Rsqrt, 1;
    sin => MathOp::Sin, 1;
    sinh => MathOp::Sinh, 1;
    sqrt => MathOp::Sqrt, 1;
    tan => MathOp::Tan, 1;
    tanh => MathOp::Tanh, 1;
    trunc => MathOp::Trunc, 1;
    ctlz => MathOp::Ctlz, 1;
    ctpop => MathOp::Ctpop, 1;
}

macro_rules! cast_ops {
    ($($method:ident => $name:expr;)*) => {
        impl Builder<'_> {
            $(
                pub fn $method(&mut self, x: ValueId, to: Type) -> ValueId {
                    self.op1($name, &[x], to, &[])
                }
            )*
        }
    };
}

cast_ops! {
    extf => ArithOp::Extf;
    truncf => ArithOp::Truncf;
    sitofp => ArithOp::Sitofp;
    uitofp => ArithOp::Uitofp;
    fptosi => ArithOp::Fptosi;
    fptoui => ArithOp::Fptoui;
    extsi => ArithOp::Extsi;
    extui => ArithOp::Extui;
    trunci => ArithOp::Trunci;
    index_cast => ArithOp::IndexCast;
    index_castui => ArithOp::IndexCastui;
    bitcast => ArithOp::Bitcast;
}

impl Builder<'_> {
    /// `x <p> y`: `i1`, or a vector of `i1` for vectors.
    pub fn cmpf(&mut self, p: CmpF, x: ValueId, y: ValueId) -> ValueId {
        let attrs = [("predicate", Attribute::i64(p as i64))];
        let ty = self.m.value_type(x).with_elem(Type::i1());
        self.op1(ArithOp::Cmpf, &[x, y], ty, &attrs)
    }
    pub fn cmpi(&mut self, p: CmpI, x: ValueId, y: ValueId) -> ValueId {
        let attrs = [("predicate", Attribute::i64(p as i64))];
        let ty = self.m.value_type(x).with_elem(Type::i1());
        self.op1(ArithOp::Cmpi, &[x, y], ty, &attrs)
    }
    /// `x * y + z`, fused.
    pub fn fma(&mut self, x: ValueId, y: ValueId, z: ValueId) -> ValueId {
        self.same(MathOp::Fma, &[x, y, z])
    }
    /// `c ? x : y`.
    pub fn select(&mut self, c: ValueId, x: ValueId, y: ValueId) -> ValueId {
        let ty = self.m.value_type(x).clone();
        self.op1(ArithOp::Select, &[c, x, y], ty, &[])
    }

    /// `x + y` on integers; index arithmetic on known values folds (as
    /// MLIR's `createOrFold`), so static shapes leave constants behind.
    pub fn addi(&mut self, x: ValueId, y: ValueId) -> ValueId {
        self.index_op(
            ArithOp::Addi,
            x,
            y,
            |a, b| a.checked_add(b),
            (Some(0), Some(0)),
        )
    }
    pub fn subi(&mut self, x: ValueId, y: ValueId) -> ValueId {
        self.index_op(
            ArithOp::Subi,
            x,
            y,
            |a, b| a.checked_sub(b),
            (None, Some(0)),
        )
    }
    pub fn muli(&mut self, x: ValueId, y: ValueId) -> ValueId {
        self.index_op(
            ArithOp::Muli,
            x,
            y,
            |a, b| a.checked_mul(b),
            (Some(1), Some(1)),
        )
    }
    pub fn divsi(&mut self, x: ValueId, y: ValueId) -> ValueId {
        self.index_op(
            ArithOp::Divsi,
            x,
            y,
            |a, b| a.checked_div(b),
            (None, Some(1)),
        )
    }
    pub fn divui(&mut self, x: ValueId, y: ValueId) -> ValueId {
        let div = |a: i64, b: i64| (a >= 0 && b > 0).then(|| a / b);
        self.index_op(ArithOp::Divui, x, y, div, (None, Some(1)))
    }
    pub fn floordivsi(&mut self, x: ValueId, y: ValueId) -> ValueId {
        let div = |a: i64, b: i64| {
            let q = a.checked_div(b)?;
            Some(if (a % b != 0) && ((a < 0) != (b < 0)) {
                q - 1
            } else {
                q
            })
        };
        self.index_op(ArithOp::Floordivsi, x, y, div, (None, Some(1)))
    }
    pub fn ceildivsi(&mut self, x: ValueId, y: ValueId) -> ValueId {
        let div = |a: i64, b: i64| {
            let q = a.checked_div(b)?;
            Some(if (a % b != 0) && ((a < 0) == (b < 0)) {
                q + 1
            } else {
                q
            })
        };
        self.index_op(ArithOp::Ceildivsi, x, y, div, (None, Some(1)))
    }
    pub fn maxsi(&mut self, x: ValueId, y: ValueId) -> ValueId {
        self.index_op(ArithOp::Maxsi, x, y, |a, b| Some(a.max(b)), (None, None))
    }
    pub fn minsi(&mut self, x: ValueId, y: ValueId) -> ValueId {
        self.index_op(ArithOp::Minsi, x, y, |a, b| Some(a.min(b)), (None, None))
    }

    /// A binary integer op; on `index` operands, folded when both are
    /// constants, or forwarded when one is the op's identity (`ids`: the
    /// left and right identities).
    fn index_op(
        &mut self,
        name: ArithOp,
        x: ValueId,
        y: ValueId,
        eval: impl Fn(i64, i64) -> Option<i64>,
        ids: (Option<i64>, Option<i64>),
    ) -> ValueId {
        if self.m.value_type(x).is_index() && self.m.value_type(y).is_index() {
            let (a, b) = (self.index_value(x), self.index_value(y));
            if let Some(r) = a.zip(b).and_then(|(a, b)| eval(a, b)) {
                return self.const_index(r);
            }
            if a.is_some() && a == ids.0 {
                return y;
            }
            if b.is_some() && b == ids.1 {
                return x;
            }
        }
        self.same(name, &[x, y])
    }

    /// The value of an `index` constant.
    pub fn index_value(&self, v: ValueId) -> Option<i64> {
        let d = self.m.defining_op(v)?;
        if !self.m.is(d, ArithOp::Constant) {
            return None;
        }
        self.m.attr(d, "value")?.as_int()
    }

    /// The scalar type of `v`, or of its lanes: what the type-generic
    /// helpers dispatch on, so a kernel's body also works on vectors.
    fn ty(&self, v: ValueId) -> Type {
        self.m.value_type(v).element_type().clone()
    }

    /// `x + y` in the class of `x`'s type.
    pub fn add(&mut self, x: ValueId, y: ValueId) -> ValueId {
        if self.ty(x).is_float() {
            self.addf(x, y)
        } else {
            self.addi(x, y)
        }
    }
    pub fn sub(&mut self, x: ValueId, y: ValueId) -> ValueId {
        if self.ty(x).is_float() {
            self.subf(x, y)
        } else {
            self.subi(x, y)
        }
    }
    pub fn mul(&mut self, x: ValueId, y: ValueId) -> ValueId {
        if self.ty(x).is_float() {
            self.mulf(x, y)
        } else {
            self.muli(x, y)
        }
    }
    /// Division truncating toward zero for integers.
    pub fn div(&mut self, x: ValueId, y: ValueId) -> ValueId {
        let t = self.ty(x);
        if t.is_float() {
            self.divf(x, y)
        } else if is_unsigned(&t) {
            self.divui(x, y)
        } else {
            self.divsi(x, y)
        }
    }
    /// The max that propagates NaN (ONNX's Max, MaxPool).
    pub fn max(&mut self, x: ValueId, y: ValueId) -> ValueId {
        let t = self.ty(x);
        if t.is_float() {
            self.maximumf(x, y)
        } else if is_unsigned(&t) {
            self.maxui(x, y)
        } else {
            self.maxsi(x, y)
        }
    }
    pub fn min(&mut self, x: ValueId, y: ValueId) -> ValueId {
        let t = self.ty(x);
        if t.is_float() {
            self.minimumf(x, y)
        } else if is_unsigned(&t) {
            self.minui(x, y)
        } else {
            self.minsi(x, y)
        }
    }
    pub fn neg(&mut self, x: ValueId) -> ValueId {
        let t = self.ty(x);
        if t.is_float() {
            self.negf(x)
        } else {
            let zero = self.constant_like(x, 0.0);
            self.subi(zero, x)
        }
    }
    /// `x <p> y`: ordered for floats, by signedness for integers.
    pub fn cmp(&mut self, p: Cmp, x: ValueId, y: ValueId) -> ValueId {
        let t = self.ty(x);
        if t.is_float() {
            let f = match p {
                Cmp::Eq => CmpF::Oeq,
                Cmp::Ne => CmpF::Une,
                Cmp::Lt => CmpF::Olt,
                Cmp::Le => CmpF::Ole,
                Cmp::Gt => CmpF::Ogt,
                Cmp::Ge => CmpF::Oge,
            };
            return self.cmpf(f, x, y);
        }
        let unsigned = is_unsigned(&t);
        let i = match p {
            Cmp::Eq => CmpI::Eq,
            Cmp::Ne => CmpI::Ne,
            Cmp::Lt if unsigned => CmpI::Ult,
            Cmp::Le if unsigned => CmpI::Ule,
            Cmp::Gt if unsigned => CmpI::Ugt,
            Cmp::Ge if unsigned => CmpI::Uge,
            Cmp::Lt => CmpI::Slt,
            Cmp::Le => CmpI::Sle,
            Cmp::Gt => CmpI::Sgt,
            Cmp::Ge => CmpI::Sge,
        };
        self.cmpi(i, x, y)
    }

    /// A constant of scalar type `t` (floats exact, integers truncated
    /// toward zero).
    pub fn constant(&mut self, t: &Type, v: f64) -> ValueId {
        if t.is_float() {
            self.const_float(v, t.clone())
        } else if *t == Type::Index {
            self.const_index(v as i64)
        } else {
            self.const_int(v as i64, t.clone())
        }
    }
    pub fn zero(&mut self, t: &Type) -> ValueId {
        self.constant(t, 0.0)
    }
    pub fn one(&mut self, t: &Type) -> ValueId {
        self.constant(t, 1.0)
    }
    /// A constant of `x`'s type (in every lane when `x` is a vector).
    pub fn constant_like(&mut self, x: ValueId, v: f64) -> ValueId {
        let t = self.m.value_type(x).clone();
        let c = self.constant(t.element_type(), v);
        match t.as_vector() {
            Some(vt) => self.broadcast(c, vt.shape.iter().product()),
            None => c,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dialects::arith::{CMPF_PREDICATES, CMPI_PREDICATES};

    #[test]
    fn predicate_enums_follow_the_encoding() {
        assert_eq!(CMPF_PREDICATES[CmpF::Olt as usize], "olt");
        assert_eq!(CMPF_PREDICATES[CmpF::Une as usize], "une");
        assert_eq!(CMPF_PREDICATES[CmpF::True as usize], "true");
        assert_eq!(CMPI_PREDICATES[CmpI::Sge as usize], "sge");
        assert_eq!(CMPI_PREDICATES[CmpI::Uge as usize], "uge");
    }
}
