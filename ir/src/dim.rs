//! Symbolic sizes: a dim known as an expression of named symbols.
//!
//! A [`DimExpr`] is a polynomial with integer coefficients over atoms; an
//! atom is a symbol (`N`, a model's `dim_param`) or `e floordiv c` for a
//! positive constant `c`. Every value is kept in one normal form (terms
//! sorted, zero coefficients dropped, `floordiv` split by the part its
//! divisor divides exactly), so two sizes known to be equal compare equal
//! as values. That is what lets a pooling output `floor((H - 1) / 2) + 1`
//! computed on two paths of a network be recognised as the same size.
//!
//! A third atom, `broadcast(a, b, ...)`, is the size ONNX broadcasting
//! gives sizes that may each be 1 at run time: the one that is not 1 (they
//! must agree), else 1. It is its own value, equal to neither operand, so
//! a broadcast result never passes for one of its operands' sizes, which
//! it is not when that operand is 1 (issue: Add(x[a], y[b]) named `a`).
//!
//! Coefficients saturate instead of overflowing: a size that large is
//! rejected where it is allocated.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

/// A factor of a term.
#[derive(Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Atom {
    Sym(Arc<str>),
    /// `floor(e / c)`, `c > 1`.
    FloorDiv(Arc<DimExpr>, i64),
    /// ONNX broadcasting of two or more sizes, none of them the constant
    /// 1, none a broadcast itself; sorted, no repeats.
    Broadcast(Arc<[DimExpr]>),
    /// `e / c` rounded toward zero, `c > 1`: a pool's window count when
    /// the window may not fit (onnxruntime's formula), which differs from
    /// `floor` where `e` is negative.
    TruncDiv(Arc<DimExpr>, i64),
}

/// `coeff * factors[0] * factors[1] * ...` (factors sorted, at least one).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
struct Term {
    coeff: i64,
    factors: Vec<Atom>,
}

/// A size: `constant + Σ terms`, in normal form.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct DimExpr {
    constant: i64,
    terms: Vec<Term>,
}

impl PartialOrd for DimExpr {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for DimExpr {
    fn cmp(&self, other: &Self) -> Ordering {
        let key = |e: &DimExpr| -> Vec<(Vec<Atom>, i64)> {
            e.terms
                .iter()
                .map(|t| (t.factors.clone(), t.coeff))
                .collect()
        };
        key(self)
            .cmp(&key(other))
            .then(self.constant.cmp(&other.constant))
    }
}

impl From<i64> for DimExpr {
    fn from(c: i64) -> DimExpr {
        DimExpr::constant(c)
    }
}

impl DimExpr {
    pub fn constant(c: i64) -> DimExpr {
        DimExpr {
            constant: c,
            terms: Vec::new(),
        }
    }
    pub fn sym(name: &str) -> DimExpr {
        DimExpr::atom(Atom::Sym(Arc::from(name)))
    }
    fn atom(a: Atom) -> DimExpr {
        DimExpr {
            constant: 0,
            terms: vec![Term {
                coeff: 1,
                factors: vec![a],
            }],
        }
    }
    /// The value when it does not depend on any symbol.
    pub fn as_const(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }
    /// The symbol's name when the expression is exactly one symbol.
    pub fn as_sym(&self) -> Option<&str> {
        match (self.constant, self.terms.as_slice()) {
            (0, [Term { coeff: 1, factors }]) => match factors.as_slice() {
                [Atom::Sym(s)] => Some(s),
                _ => None,
            },
            _ => None,
        }
    }

    /// Sorts terms, merges equal monomials and drops zero coefficients.
    fn normalized(mut terms: Vec<Term>, constant: i64) -> DimExpr {
        terms.sort_by(|a, b| a.factors.cmp(&b.factors));
        let mut out: Vec<Term> = Vec::with_capacity(terms.len());
        for t in terms {
            match out.last_mut() {
                Some(last) if last.factors == t.factors => {
                    last.coeff = last.coeff.saturating_add(t.coeff);
                }
                _ => out.push(t),
            }
        }
        out.retain(|t| t.coeff != 0);
        DimExpr {
            constant,
            terms: out,
        }
    }

    pub fn add(&self, other: &DimExpr) -> DimExpr {
        let mut terms = self.terms.clone();
        terms.extend(other.terms.iter().cloned());
        DimExpr::normalized(terms, self.constant.saturating_add(other.constant))
    }
    pub fn add_const(&self, c: i64) -> DimExpr {
        DimExpr {
            constant: self.constant.saturating_add(c),
            terms: self.terms.clone(),
        }
    }
    pub fn scale(&self, c: i64) -> DimExpr {
        let terms = self
            .terms
            .iter()
            .map(|t| Term {
                coeff: t.coeff.saturating_mul(c),
                factors: t.factors.clone(),
            })
            .collect();
        DimExpr::normalized(terms, self.constant.saturating_mul(c))
    }
    pub fn sub(&self, other: &DimExpr) -> DimExpr {
        self.add(&other.scale(-1))
    }
    pub fn mul(&self, other: &DimExpr) -> DimExpr {
        if let Some(c) = other.as_const() {
            return self.scale(c);
        }
        if let Some(c) = self.as_const() {
            return other.scale(c);
        }
        let mut terms = Vec::new();
        let constant = self.constant.saturating_mul(other.constant);
        // (c1 + Σ a) (c2 + Σ b) = c1 c2 + c1 Σ b + c2 Σ a + Σ a b.
        for t in &other.terms {
            terms.push(Term {
                coeff: t.coeff.saturating_mul(self.constant),
                factors: t.factors.clone(),
            });
        }
        for t in &self.terms {
            terms.push(Term {
                coeff: t.coeff.saturating_mul(other.constant),
                factors: t.factors.clone(),
            });
            for u in &other.terms {
                let mut factors = t.factors.clone();
                factors.extend(u.factors.iter().cloned());
                factors.sort();
                terms.push(Term {
                    coeff: t.coeff.saturating_mul(u.coeff),
                    factors,
                });
            }
        }
        DimExpr::normalized(terms, constant)
    }

    /// The size ONNX broadcasting gives `self` and `other` when either may
    /// be 1 at run time: `self` when they are equal or `other` is 1, a
    /// constant other than 1 (the other must equal it or be 1), else a
    /// `broadcast(..)` atom of the two (operand broadcasts flattened).
    pub fn broadcast(&self, other: &DimExpr) -> DimExpr {
        match (self.as_const(), other.as_const()) {
            _ if self == other => return self.clone(),
            (Some(1), _) => return other.clone(),
            (_, Some(1)) | (Some(_), _) => return self.clone(),
            (_, Some(_)) => return other.clone(),
            _ => {}
        }
        let mut parts: Vec<DimExpr> = Vec::new();
        for e in [self, other] {
            match e.as_broadcast() {
                Some(inner) => parts.extend(inner.iter().cloned()),
                None => parts.push(e.clone()),
            }
        }
        parts.sort();
        parts.dedup();
        DimExpr::atom(Atom::Broadcast(parts.into()))
    }
    /// The operands when the expression is exactly one broadcast atom.
    fn as_broadcast(&self) -> Option<&[DimExpr]> {
        match (self.constant, self.terms.as_slice()) {
            (0, [Term { coeff: 1, factors }]) => match factors.as_slice() {
                [Atom::Broadcast(parts)] => Some(parts),
                _ => None,
            },
            _ => None,
        }
    }

    /// `floor(self / c)`; `None` unless `c > 0`.
    pub fn floordiv(&self, c: i64) -> Option<DimExpr> {
        if c <= 0 {
            return None;
        }
        if c == 1 {
            return Some(self.clone());
        }
        // floor((c·A + B) / c) = A + floor(B / c) for integer A.
        let q = self.constant.div_euclid(c);
        let r = self.constant.rem_euclid(c);
        let (divisible, rest): (Vec<Term>, Vec<Term>) =
            self.terms.iter().cloned().partition(|t| t.coeff % c == 0);
        let a = DimExpr::normalized(
            divisible
                .into_iter()
                .map(|t| Term {
                    coeff: t.coeff / c,
                    factors: t.factors,
                })
                .collect(),
            q,
        );
        if rest.is_empty() {
            return Some(a);
        }
        let b = DimExpr::normalized(rest, r);
        // floor((floor(x / d) + r) / c) = floor((x + d·r) / (d·c)).
        let atom = match b.terms.as_slice() {
            [Term { coeff: 1, factors }] => match factors.as_slice() {
                [Atom::FloorDiv(x, d)] => {
                    let inner = x.add_const(d.saturating_mul(b.constant));
                    Atom::FloorDiv(Arc::new(inner), d.saturating_mul(c))
                }
                _ => Atom::FloorDiv(Arc::new(b), c),
            },
            _ => Atom::FloorDiv(Arc::new(b), c),
        };
        Some(a.add(&DimExpr::atom(atom)))
    }
    /// `self / c` rounded toward zero; `None` unless `c > 0`.
    pub fn truncdiv(&self, c: i64) -> Option<DimExpr> {
        match (c, self.as_const()) {
            (..=0, _) => None,
            (1, _) => Some(self.clone()),
            (_, Some(v)) => Some(DimExpr::constant(v / c)),
            _ => Some(DimExpr::atom(Atom::TruncDiv(Arc::new(self.clone()), c))),
        }
    }

    /// `ceil(self / c)`; `None` unless `c > 0`.
    pub fn ceildiv(&self, c: i64) -> Option<DimExpr> {
        self.add_const(c.saturating_sub(1)).floordiv(c)
    }

    /// `self / d` when it divides exactly as polynomials: by a constant
    /// dividing every coefficient, or by one term dividing every term.
    pub fn exact_div(&self, d: &DimExpr) -> Option<DimExpr> {
        if let Some(c) = d.as_const() {
            if c == 0 {
                return None;
            }
            let ok = self.constant % c == 0 && self.terms.iter().all(|t| t.coeff % c == 0);
            return ok.then(|| {
                DimExpr::normalized(
                    self.terms
                        .iter()
                        .map(|t| Term {
                            coeff: t.coeff / c,
                            factors: t.factors.clone(),
                        })
                        .collect(),
                    self.constant / c,
                )
            });
        }
        if self == d {
            return Some(DimExpr::constant(1));
        }
        let [div] = d.terms.as_slice() else {
            return None;
        };
        if d.constant != 0 || self.constant != 0 || div.coeff == 0 {
            return None;
        }
        let mut terms = Vec::with_capacity(self.terms.len());
        for t in &self.terms {
            if t.coeff % div.coeff != 0 {
                return None;
            }
            let mut factors = t.factors.clone();
            for f in &div.factors {
                let pos = factors.iter().position(|x| x == f)?;
                factors.remove(pos);
            }
            if factors.is_empty() {
                // A constant term of the quotient.
                return None;
            }
            terms.push(Term {
                coeff: t.coeff / div.coeff,
                factors,
            });
        }
        Some(DimExpr::normalized(terms, 0))
    }

    /// The value given each symbol's value.
    pub fn eval(&self, sym: &dyn Fn(&str) -> Option<i64>) -> Option<i64> {
        let mut v = self.constant;
        for t in &self.terms {
            let mut p = t.coeff;
            for f in &t.factors {
                p = p.checked_mul(f.eval(sym)?)?;
            }
            v = v.checked_add(p)?;
        }
        Some(v)
    }

    /// Replaces each symbol `s` by `f(s)` where it gives one.
    pub fn substitute(&self, f: &dyn Fn(&str) -> Option<DimExpr>) -> DimExpr {
        let mut out = DimExpr::constant(self.constant);
        for t in &self.terms {
            let mut p = DimExpr::constant(t.coeff);
            for a in &t.factors {
                let x = match a {
                    Atom::Sym(s) => f(s).unwrap_or_else(|| DimExpr::atom(a.clone())),
                    Atom::FloorDiv(e, c) => {
                        let inner = e.substitute(f);
                        inner
                            .floordiv(*c)
                            .unwrap_or_else(|| DimExpr::atom(a.clone()))
                    }
                    Atom::TruncDiv(e, c) => {
                        let inner = e.substitute(f);
                        inner
                            .truncdiv(*c)
                            .unwrap_or_else(|| DimExpr::atom(a.clone()))
                    }
                    Atom::Broadcast(parts) => {
                        let mut it = parts.iter().map(|e| e.substitute(f));
                        let first = it.next().unwrap_or_else(|| DimExpr::constant(1));
                        it.fold(first, |acc, e| acc.broadcast(&e))
                    }
                };
                p = p.mul(&x);
            }
            out = out.add(&p);
        }
        out
    }

    /// Every symbol the expression mentions (with repeats).
    pub fn symbols(&self) -> Vec<Arc<str>> {
        let mut out = Vec::new();
        for t in &self.terms {
            for a in &t.factors {
                match a {
                    Atom::Sym(s) => out.push(s.clone()),
                    Atom::FloorDiv(e, _) | Atom::TruncDiv(e, _) => out.extend(e.symbols()),
                    Atom::Broadcast(parts) => out.extend(parts.iter().flat_map(DimExpr::symbols)),
                }
            }
        }
        out
    }
}

impl Atom {
    fn eval(&self, sym: &dyn Fn(&str) -> Option<i64>) -> Option<i64> {
        match self {
            Atom::Sym(s) => sym(s),
            Atom::FloorDiv(e, c) => Some(e.eval(sym)?.div_euclid(*c)),
            Atom::TruncDiv(e, c) => Some(e.eval(sym)? / *c),
            // The size that is not 1 (all such must agree), else 1.
            Atom::Broadcast(parts) => {
                let mut size = 1;
                for e in parts.iter() {
                    match e.eval(sym)? {
                        1 => {}
                        v if size == 1 || size == v => size = v,
                        _ => return None,
                    }
                }
                Some(size)
            }
        }
    }
}

/// Whether `s` prints without quotes: an identifier not starting with a
/// digit and not one of the operator words.
fn is_plain(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !matches!(s, "floordiv" | "ceildiv" | "truncdiv" | "mod" | "broadcast")
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Atom::Sym(s) if is_plain(s) => f.write_str(s),
            Atom::Sym(s) => write!(f, "{:?}", &**s),
            Atom::FloorDiv(e, c) if e.terms.len() == 1 && e.constant == 0 => {
                write!(f, "{e} floordiv {c}")
            }
            Atom::FloorDiv(e, c) => write!(f, "({e}) floordiv {c}"),
            Atom::TruncDiv(e, c) if e.terms.len() == 1 && e.constant == 0 => {
                write!(f, "{e} truncdiv {c}")
            }
            Atom::TruncDiv(e, c) => write!(f, "({e}) truncdiv {c}"),
            Atom::Broadcast(parts) => {
                f.write_str("broadcast(")?;
                for (i, e) in parts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{e}")?;
                }
                f.write_str(")")
            }
        }
    }
}

impl fmt::Display for DimExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for t in &self.terms {
            let (neg, c) = (t.coeff < 0, t.coeff.unsigned_abs());
            match (first, neg) {
                (true, true) => f.write_str("-")?,
                (false, true) => f.write_str(" - ")?,
                (false, false) => f.write_str(" + ")?,
                (true, false) => {}
            }
            first = false;
            let mut sep = "";
            if c != 1 {
                write!(f, "{c}")?;
                sep = " * ";
            }
            for a in &t.factors {
                // A floordiv factor of a product needs parentheses.
                let div = matches!(a, Atom::FloorDiv(..) | Atom::TruncDiv(..));
                let wrap = div && (t.factors.len() > 1 || c != 1);
                if wrap {
                    write!(f, "{sep}({a})")?;
                } else {
                    write!(f, "{sep}{a}")?;
                }
                sep = " * ";
            }
        }
        match (first, self.constant) {
            (true, c) => write!(f, "{c}"),
            (false, 0) => Ok(()),
            (false, c) if c < 0 => write!(f, " - {}", c.unsigned_abs()),
            (false, c) => write!(f, " + {c}"),
        }
    }
}

/// Parses the printed form: integers, symbols (identifiers or quoted
/// strings), `+`, `-`, `*`, `floordiv`, `ceildiv`, `truncdiv`, `mod` (by
/// constants),
/// `broadcast(e, ...)` and parentheses.
pub fn parse(s: &str) -> Result<DimExpr, String> {
    let mut p = Parser { s, pos: 0 };
    let e = p.sum()?;
    p.skip_ws();
    if p.pos != s.len() {
        return Err(format!("unexpected '{}' in a dim expression", &s[p.pos..]));
    }
    Ok(e)
}

struct Parser<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a str {
        self.s.get(self.pos..).unwrap_or("")
    }
    fn skip_ws(&mut self) {
        let r = self.rest();
        self.pos += r.len() - r.trim_start().len();
    }
    fn eat(&mut self, tok: &str) -> bool {
        self.skip_ws();
        if self.rest().starts_with(tok) {
            self.pos += tok.len();
            true
        } else {
            false
        }
    }
    fn sum(&mut self) -> Result<DimExpr, String> {
        let mut e = if self.eat("-") {
            self.product()?.scale(-1)
        } else {
            self.product()?
        };
        loop {
            if self.eat("+") {
                e = e.add(&self.product()?);
            } else if self.eat("-") {
                e = e.sub(&self.product()?);
            } else {
                return Ok(e);
            }
        }
    }
    fn product(&mut self) -> Result<DimExpr, String> {
        let mut e = self.primary()?;
        loop {
            if self.eat("*") {
                e = e.mul(&self.primary()?);
                continue;
            }
            let op = ["floordiv", "ceildiv", "truncdiv", "mod"]
                .into_iter()
                .find(|w| self.eat(w));
            let Some(op) = op else {
                return Ok(e);
            };
            let c = self
                .primary()?
                .as_const()
                .filter(|&c| c > 0)
                .ok_or_else(|| format!("'{op}' needs a positive constant divisor"))?;
            let q = e.floordiv(c).ok_or("bad divisor")?;
            e = match op {
                "floordiv" => q,
                "ceildiv" => e.ceildiv(c).ok_or("bad divisor")?,
                "truncdiv" => e.truncdiv(c).ok_or("bad divisor")?,
                _ => e.sub(&q.scale(c)),
            };
        }
    }
    fn primary(&mut self) -> Result<DimExpr, String> {
        self.skip_ws();
        if self.eat("(") {
            let e = self.sum()?;
            return if self.eat(")") {
                Ok(e)
            } else {
                Err("expected ')' in a dim expression".into())
            };
        }
        let r = self.rest();
        if let Some(body) = r.strip_prefix('"') {
            let end = body.find('"').ok_or("unterminated symbol name")?;
            self.pos += end + 2;
            return Ok(DimExpr::sym(&body[..end]));
        }
        let len = r
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(r.len());
        let word = &r[..len];
        if word.is_empty() {
            return Err(format!("expected a dim expression at '{r}'"));
        }
        self.pos += len;
        if word == "broadcast" && self.eat("(") {
            let mut e = self.sum()?;
            while self.eat(",") {
                e = e.broadcast(&self.sum()?);
            }
            return if self.eat(")") {
                Ok(e)
            } else {
                Err("expected ')' after broadcast's operands".into())
            };
        }
        if word.as_bytes()[0].is_ascii_digit() {
            return word
                .parse::<i64>()
                .map(DimExpr::constant)
                .map_err(|_| format!("bad integer '{word}'"));
        }
        Ok(DimExpr::sym(word))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: &str) -> DimExpr {
        DimExpr::sym(n)
    }

    #[test]
    fn equal_sizes_have_one_form() {
        let h = s("H");
        // Conv 3x3 stride 2 pad 1 and 1x1 stride 2: floor((H - 1) / 2) + 1.
        let a = h.add_const(2 - 3).floordiv(2).map(|e| e.add_const(1));
        let b = h.add_const(-1).floordiv(2).map(|e| e.add_const(1));
        assert_eq!(a, b);
        // 3x3 stride 1 pad 1 keeps H.
        assert_eq!(
            h.add_const(2 - 3).floordiv(1).map(|e| e.add_const(1)),
            Some(h.clone())
        );
        // (2H + 4) / 2 = H + 2; N·S·D / D = N·S.
        assert_eq!(h.scale(2).add_const(4).floordiv(2), Some(h.add_const(2)));
        let nsd = s("N").mul(&s("S")).mul(&s("D"));
        assert_eq!(nsd.exact_div(&s("D")), Some(s("S").mul(&s("N"))));
        assert_eq!(nsd.exact_div(&s("X")), None);
        // floor(floor(H / 2) / 2) = floor(H / 4), and with offsets:
        // floor((floor((H + 1) / 2) + 1) / 2) = floor((H + 3) / 4).
        let q = h.floordiv(2).and_then(|e| e.floordiv(2));
        assert_eq!(q, h.floordiv(4));
        let q = h
            .add_const(1)
            .floordiv(2)
            .and_then(|e| e.add_const(1).floordiv(2));
        assert_eq!(q, h.add_const(3).floordiv(4));
        for v in 0..40 {
            let e = q.as_ref().and_then(|e| e.eval(&|_| Some(v)));
            assert_eq!(e, Some(((v + 1).div_euclid(2) + 1).div_euclid(2)));
        }
    }

    #[test]
    fn prints_and_parses_back() {
        let h = s("H");
        let cases = [
            h.add_const(-1).floordiv(2).map(|e| e.add_const(1)),
            Some(s("N").mul(&s("S")).scale(3).add_const(-2)),
            Some(DimExpr::sym("batch size").add_const(1)),
            h.floordiv(2).map(|e| e.mul(&s("W"))),
            Some(DimExpr::constant(-4)),
        ];
        for e in cases.into_iter().flatten() {
            let text = e.to_string();
            assert_eq!(parse(&text), Ok(e.clone()), "{text}");
        }
        assert_eq!(
            parse("(H + 1) floordiv 2 + 1").map(|e| e.to_string()),
            Ok("(H + 1) floordiv 2 + 1".to_string())
        );
        assert_eq!(
            parse("H ceildiv 2"),
            s("H").add_const(1).floordiv(2).ok_or(String::new())
        );
        assert!(parse("H floordiv N").is_err());
        assert!(parse("H +").is_err());
    }

    #[test]
    fn broadcasts_are_their_own_sizes() {
        let (a, b, c) = (s("a"), s("b"), s("c"));
        let one = DimExpr::constant(1);
        assert_eq!(a.broadcast(&a), a);
        assert_eq!(a.broadcast(&one), a);
        assert_eq!(one.broadcast(&a), a);
        assert_eq!(a.broadcast(&DimExpr::constant(3)), DimExpr::constant(3));
        let ab = a.broadcast(&b);
        assert_ne!(ab, a);
        assert_eq!(ab, b.broadcast(&a));
        assert_eq!(ab.broadcast(&c), a.broadcast(&b.broadcast(&c)));
        assert_eq!(ab.broadcast(&a), ab);
        let text = ab.broadcast(&c.scale(2)).to_string();
        assert_eq!(text, "broadcast(a, b, 2 * c)");
        assert_eq!(parse(&text), Ok(ab.broadcast(&c.scale(2))));
        let at = |x: i64, y: i64| move |n: &str| Some(if n == "a" { x } else { y });
        assert_eq!(ab.eval(&at(1, 5)), Some(5));
        assert_eq!(ab.eval(&at(5, 1)), Some(5));
        assert_eq!(ab.eval(&at(0, 1)), Some(0));
        assert_eq!(ab.eval(&at(2, 3)), None);
        let fixed = ab.substitute(&|n| (n == "b").then(|| DimExpr::constant(1)));
        assert_eq!(fixed, a);
    }

    #[test]
    fn truncdiv_rounds_toward_zero() {
        let e = s("H").add_const(-2).truncdiv(2);
        let Some(e) = e else { return };
        let at = |h: i64| e.eval(&|_| Some(h));
        assert_eq!((at(1), at(2), at(7)), (Some(0), Some(0), Some(2)));
        assert_ne!(Some(e.clone()), s("H").add_const(-2).floordiv(2));
        assert_eq!(parse(&e.to_string()), Ok(e.clone()));
        assert_eq!(
            DimExpr::constant(-3).truncdiv(2),
            Some(DimExpr::constant(-1))
        );
    }

    #[test]
    fn evaluates_and_substitutes() {
        let e = s("H").add_const(-1).floordiv(2).map(|e| e.add_const(1));
        let Some(e) = e else { return };
        let v = |n: &str| (n == "H").then_some(224);
        assert_eq!(e.eval(&v), Some(112));
        let renamed = e.substitute(&|n| (n == "H").then(|| s("W").scale(2)));
        assert_eq!(renamed.eval(&|_| Some(112)), Some(112));
        assert_eq!(renamed.symbols().len(), 1);
    }
}
