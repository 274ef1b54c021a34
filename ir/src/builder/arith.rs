//! Typed builders for `arith` and `math`: one method per op, compare
//! predicates as enums, and the type-generic helpers kernels are written
//! with (`add` is `addf` on floats, `addi` on integers and index).

use super::Builder;
use crate::attr::Attribute;
use crate::module::ValueId;
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
    ($($(#[$doc:meta])* $method:ident => $name:literal, $arity:tt;)*) => {
        impl Builder<'_> {
            $( same_type_ops!(@def [$($doc)*] $method, $name, $arity); )*
        }
    };
    (@def [$($doc:meta)*] $method:ident, $name:literal, 1) => {
        $(#[$doc])*
        pub fn $method(&mut self, x: ValueId) -> ValueId {
            self.same($name, &[x])
        }
    };
    (@def [$($doc:meta)*] $method:ident, $name:literal, 2) => {
        $(#[$doc])*
        pub fn $method(&mut self, x: ValueId, y: ValueId) -> ValueId {
            self.same($name, &[x, y])
        }
    };
}

same_type_ops! {
    addf => "arith.addf", 2;
    subf => "arith.subf", 2;
    mulf => "arith.mulf", 2;
    divf => "arith.divf", 2;
    remf => "arith.remf", 2;
    negf => "arith.negf", 1;
    /// The max that propagates NaN.
    maximumf => "arith.maximumf", 2;
    minimumf => "arith.minimumf", 2;
    /// The max that ignores a NaN operand.
    maxnumf => "arith.maxnumf", 2;
    minnumf => "arith.minnumf", 2;
    ceildivui => "arith.ceildivui", 2;
    remsi => "arith.remsi", 2;
    remui => "arith.remui", 2;
    andi => "arith.andi", 2;
    ori => "arith.ori", 2;
    xori => "arith.xori", 2;
    shli => "arith.shli", 2;
    shrsi => "arith.shrsi", 2;
    shrui => "arith.shrui", 2;
    maxui => "arith.maxui", 2;
    minui => "arith.minui", 2;
    absf => "math.absf", 1;
    absi => "math.absi", 1;
    acos => "math.acos", 1;
    acosh => "math.acosh", 1;
    asin => "math.asin", 1;
    asinh => "math.asinh", 1;
    atan => "math.atan", 1;
    atan2 => "math.atan2", 2;
    atanh => "math.atanh", 1;
    cbrt => "math.cbrt", 1;
    ceil => "math.ceil", 1;
    copysign => "math.copysign", 2;
    cos => "math.cos", 1;
    cosh => "math.cosh", 1;
    erf => "math.erf", 1;
    exp => "math.exp", 1;
    exp2 => "math.exp2", 1;
    expm1 => "math.expm1", 1;
    floor => "math.floor", 1;
    log => "math.log", 1;
    log10 => "math.log10", 1;
    log1p => "math.log1p", 1;
    log2 => "math.log2", 1;
    powf => "math.powf", 2;
    roundeven => "math.roundeven", 1;
    round => "math.round", 1;
    rsqrt => "math.rsqrt", 1;
    sin => "math.sin", 1;
    sinh => "math.sinh", 1;
    sqrt => "math.sqrt", 1;
    tan => "math.tan", 1;
    tanh => "math.tanh", 1;
    trunc => "math.trunc", 1;
    ctlz => "math.ctlz", 1;
    ctpop => "math.ctpop", 1;
}

macro_rules! cast_ops {
    ($($method:ident => $name:literal;)*) => {
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
    extf => "arith.extf";
    truncf => "arith.truncf";
    sitofp => "arith.sitofp";
    uitofp => "arith.uitofp";
    fptosi => "arith.fptosi";
    fptoui => "arith.fptoui";
    extsi => "arith.extsi";
    extui => "arith.extui";
    trunci => "arith.trunci";
    index_cast => "arith.index_cast";
    index_castui => "arith.index_castui";
    bitcast => "arith.bitcast";
}

impl Builder<'_> {
    /// `x <p> y`: `i1`, or a vector of `i1` for vectors.
    pub fn cmpf(&mut self, p: CmpF, x: ValueId, y: ValueId) -> ValueId {
        let attrs = [("predicate", Attribute::i64(p as i64))];
        let ty = self.m.value_type(x).with_elem(Type::i1());
        self.op1("arith.cmpf", &[x, y], ty, &attrs)
    }
    pub fn cmpi(&mut self, p: CmpI, x: ValueId, y: ValueId) -> ValueId {
        let attrs = [("predicate", Attribute::i64(p as i64))];
        let ty = self.m.value_type(x).with_elem(Type::i1());
        self.op1("arith.cmpi", &[x, y], ty, &attrs)
    }
    /// `x * y + z`, fused.
    pub fn fma(&mut self, x: ValueId, y: ValueId, z: ValueId) -> ValueId {
        self.same("math.fma", &[x, y, z])
    }
    /// `c ? x : y`.
    pub fn select(&mut self, c: ValueId, x: ValueId, y: ValueId) -> ValueId {
        let ty = self.m.value_type(x).clone();
        self.op1("arith.select", &[c, x, y], ty, &[])
    }

    /// `x + y` on integers; index arithmetic on known values folds (as
    /// MLIR's `createOrFold`), so static shapes leave constants behind.
    pub fn addi(&mut self, x: ValueId, y: ValueId) -> ValueId {
        self.index_op(
            "arith.addi",
            x,
            y,
            |a, b| a.checked_add(b),
            (Some(0), Some(0)),
        )
    }
    pub fn subi(&mut self, x: ValueId, y: ValueId) -> ValueId {
        self.index_op("arith.subi", x, y, |a, b| a.checked_sub(b), (None, Some(0)))
    }
    pub fn muli(&mut self, x: ValueId, y: ValueId) -> ValueId {
        self.index_op(
            "arith.muli",
            x,
            y,
            |a, b| a.checked_mul(b),
            (Some(1), Some(1)),
        )
    }
    pub fn divsi(&mut self, x: ValueId, y: ValueId) -> ValueId {
        self.index_op(
            "arith.divsi",
            x,
            y,
            |a, b| a.checked_div(b),
            (None, Some(1)),
        )
    }
    pub fn divui(&mut self, x: ValueId, y: ValueId) -> ValueId {
        let div = |a: i64, b: i64| (a >= 0 && b > 0).then(|| a / b);
        self.index_op("arith.divui", x, y, div, (None, Some(1)))
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
        self.index_op("arith.floordivsi", x, y, div, (None, Some(1)))
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
        self.index_op("arith.ceildivsi", x, y, div, (None, Some(1)))
    }
    pub fn maxsi(&mut self, x: ValueId, y: ValueId) -> ValueId {
        self.index_op("arith.maxsi", x, y, |a, b| Some(a.max(b)), (None, None))
    }
    pub fn minsi(&mut self, x: ValueId, y: ValueId) -> ValueId {
        self.index_op("arith.minsi", x, y, |a, b| Some(a.min(b)), (None, None))
    }

    /// A binary integer op; on `index` operands, folded when both are
    /// constants, or forwarded when one is the op's identity (`ids`: the
    /// left and right identities).
    fn index_op(
        &mut self,
        name: &'static str,
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
        if !self.m.is(d, "arith.constant") {
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
