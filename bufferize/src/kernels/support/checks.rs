//! Runtime contract checks. Dynamic dims and index values come from the
//! caller at run time; when they break an op's contract the generated code
//! must abort with a message (`cf.assert`) instead of reading or writing
//! out of bounds. A check decided at compile time emits nothing.

use ir::builder::CmpI;
use ir::dialects::op_error;
use ir::ArithOp;
use ir::{Builder, Location, Module, OpId, Result, ValueId};

/// The value of `v` when it is an `arith.constant`.
pub fn static_value(m: &Module, v: ValueId) -> Option<i64> {
    let d = m.defining_op(v)?;
    // Matching an existing op by name (an analysis, not a builder).
    if !m.is(d, ArithOp::Constant) {
        return None;
    }
    m.attr(d, "value")?.as_int()
}

/// `cf.assert cond, "onnx.Add at node 'add1': <what>"`.
pub fn assert(b: &mut Builder<'_>, op: OpId, cond: ValueId, what: &str) {
    let name = b.m.name(op).as_str();
    let msg = match b.m.loc(op) {
        Location::Unknown => format!("{name}: {what}"),
        loc => format!("{name} at {loc}: {what}"),
    };
    b.cf_assert(cond, &msg);
}

/// `f(x, y)` on two constants, when both are.
fn decided(m: &Module, x: ValueId, y: ValueId, f: impl Fn(i64, i64) -> bool) -> Option<bool> {
    if x == y {
        return Some(f(0, 0));
    }
    Some(f(static_value(m, x)?, static_value(m, y)?))
}

/// Whether `a <p> c` holds for two constants.
fn holds(p: CmpI, a: i64, c: i64) -> bool {
    let (ua, uc) = (a as u64, c as u64);
    match p {
        CmpI::Eq => a == c,
        CmpI::Ne => a != c,
        CmpI::Slt => a < c,
        CmpI::Sle => a <= c,
        CmpI::Sgt => a > c,
        CmpI::Sge => a >= c,
        CmpI::Ult => ua < uc,
        CmpI::Ule => ua <= uc,
        CmpI::Ugt => ua > uc,
        CmpI::Uge => ua >= uc,
    }
}

/// Asserts `x <p> y`, or fails now when it is known false.
pub fn compare(
    b: &mut Builder<'_>,
    op: OpId,
    p: CmpI,
    x: ValueId,
    y: ValueId,
    what: &str,
) -> Result<()> {
    match decided(b.m, x, y, |a, c| holds(p, a, c)) {
        Some(true) => Ok(()),
        Some(false) => Err(op_error(b.m, op, what)),
        None => {
            let ok = b.cmpi(p, x, y);
            assert(b, op, ok, what);
            Ok(())
        }
    }
}

/// Asserts `x == y`.
pub fn equal(b: &mut Builder<'_>, op: OpId, x: ValueId, y: ValueId, what: &str) -> Result<()> {
    compare(b, op, CmpI::Eq, x, y, what)
}

/// Asserts that `d` divides `x` (`x % d == 0`, unsigned).
pub fn divides(b: &mut Builder<'_>, op: OpId, x: ValueId, d: ValueId, what: &str) -> Result<()> {
    let rem = b.remui(x, d);
    let zero = b.const_index(0);
    equal(b, op, rem, zero, what)
}

/// Asserts `d >= 0` (a size read from a tensor).
pub fn non_negative(b: &mut Builder<'_>, op: OpId, d: ValueId, what: &str) -> Result<()> {
    if let Some(v) = static_value(b.m, d) {
        return if v >= 0 {
            Ok(())
        } else {
            Err(op_error(b.m, op, what))
        };
    }
    let zero = b.const_index(0);
    compare(b, op, CmpI::Sge, d, zero, what)
}

/// Asserts that an input dim `d` broadcasts to the output dim `out`
/// (NumPy rules): `d == 1 || d == out`.
pub fn broadcasts(
    b: &mut Builder<'_>,
    op: OpId,
    d: ValueId,
    out: ValueId,
    what: &str,
) -> Result<()> {
    let sd = static_value(b.m, d);
    if sd == Some(1) {
        return Ok(());
    }
    if let Some(ok) = decided(b.m, d, out, |a, c| a == c) {
        return if ok {
            Ok(())
        } else {
            Err(op_error(b.m, op, what))
        };
    }
    let one = b.const_index(1);
    let is1 = b.cmpi(CmpI::Eq, d, one);
    let same = b.cmpi(CmpI::Eq, d, out);
    let ok = b.ori(is1, same);
    assert(b, op, ok, what);
    Ok(())
}

/// A dynamic output dim broadcast from the operands' dims `ds` (`(operand,
/// dim)`, static 1s left out): the first that is not 1 at run time. Also
/// returns the operand it starts from: the output equals that operand's
/// dim unless it is 1, so that operand needs no check there.
pub fn broadcast_dim(b: &mut Builder<'_>, ds: &[(usize, ValueId)]) -> (ValueId, Option<usize>) {
    let Some((&(lead, first), rest)) = ds.split_first() else {
        return (b.const_index(1), None);
    };
    let one = b.const_index(1);
    let mut acc = first;
    for &(_, d) in rest {
        let is1 = b.cmpi(CmpI::Eq, acc, one);
        acc = b.select(is1, d, acc);
    }
    (acc, Some(lead))
}

/// Asserts that each 1-D per-channel operand `(i, p)` (scale, bias, mean,
/// ...) has one entry per channel `c`.
pub fn per_channel(
    b: &mut Builder<'_>,
    op: OpId,
    ps: &[(usize, ValueId)],
    c: ValueId,
) -> Result<()> {
    for &(i, p) in ps {
        let msg = format!("input {i} length differs from the channel dim");
        let known = crate::kernels::support::shape_of(b.m, p).first().copied();
        match (known, static_value(b.m, c)) {
            (None, _) => {}
            (Some(n), Some(c)) if n != ir::DYN => {
                if n != c {
                    return Err(op_error(b.m, op, msg));
                }
            }
            _ => {
                if let Some(&n) = crate::convert::dims(b, p).first() {
                    equal(b, op, n, c, &msg)?;
                }
            }
        }
    }
    Ok(())
}

/// The message for input `i`'s dim `k` failing to broadcast.
pub fn broadcast_msg(i: usize, k: usize) -> String {
    format!("input {i} dim {k} is not 1 and differs from the output's")
}

/// Asserts `-n <= i < n` for an index `i` into a dim of size `n` and
/// returns it made non-negative. Used where the index is loaded.
pub fn index(b: &mut Builder<'_>, op: OpId, i: ValueId, n: ValueId, what: &str) -> ValueId {
    let zero = b.const_index(0);
    let neg_n = b.subi(zero, n);
    let lo = b.cmpi(CmpI::Sge, i, neg_n);
    let hi = b.cmpi(CmpI::Slt, i, n);
    let ok = b.andi(lo, hi);
    assert(b, op, ok, what);
    crate::kernels::support::index::wrap(b, i, n, zero)
}

/// The message of an index out of range of data dim `axis`.
pub fn range_msg(axis: usize) -> String {
    format!("an index is out of range of data dim {axis}")
}

/// The message for index checks into dim `axis` of operand `i`'s data, or
/// `None` when they are decided now: the indices are a constant and the
/// dim `n` is static. Out-of-range constants are a compile-time error.
pub fn index_msg(
    b: &Builder<'_>,
    op: OpId,
    i: usize,
    n: ValueId,
    axis: usize,
) -> Result<Option<String>> {
    let msg = range_msg(axis);
    let (Some(vals), Some(n)) = (
        crate::kernels::support::constant_ints(b.m, op, i),
        static_value(b.m, n),
    ) else {
        return Ok(Some(msg));
    };
    if vals.iter().all(|&v| -n <= v && v < n) {
        Ok(None)
    } else {
        Err(op_error(b.m, op, msg))
    }
}

/// `index` when `what` is given, else only the wrap of a negative index.
pub fn index_if(
    b: &mut Builder<'_>,
    op: OpId,
    i: ValueId,
    n: ValueId,
    what: Option<&str>,
) -> ValueId {
    match what {
        Some(w) => index(b, op, i, n, w),
        None => {
            let zero = b.const_index(0);
            crate::kernels::support::index::wrap(b, i, n, zero)
        }
    }
}

/// Product of `dims`, folded while they are constants (so that a check
/// on static shapes stays decided at compile time).
pub fn count(b: &mut Builder<'_>, dims: &[ValueId]) -> ValueId {
    fold(b, dims, 1, i64::saturating_mul, |b, x, y| b.muli(x, y))
}

/// Sum of `sizes`, folded while they are constants.
pub fn total(b: &mut Builder<'_>, sizes: &[ValueId]) -> ValueId {
    fold(b, sizes, 0, i64::saturating_add, |b, x, y| b.addi(x, y))
}

fn fold(
    b: &mut Builder<'_>,
    xs: &[ValueId],
    init: i64,
    on_consts: fn(i64, i64) -> i64,
    on_values: fn(&mut Builder<'_>, ValueId, ValueId) -> ValueId,
) -> ValueId {
    let mut acc = b.const_index(init);
    for &d in xs {
        acc = match (static_value(b.m, acc), static_value(b.m, d)) {
            (Some(x), Some(y)) => b.const_index(on_consts(x, y)),
            _ => on_values(b, acc, d),
        };
    }
    acc
}
