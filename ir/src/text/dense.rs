//! `dense<...> : tensor<...>` literals → `Elements`.
//!
//! The declared type may claim any size; nothing is allocated from it. A
//! literal list is checked against the declared shape after it is read (its
//! size is bounded by the input), a splat stores one element, and hex data
//! must have exactly the byte length the type implies.

use super::lexer::{decode_hex, Kind};
use super::parse_attr::{int_in_range, Number};
use super::parser::{PResult, Parser};
use crate::attr::Attribute;
use crate::elements::{decode, DType, Elements, NumClass, WideNum};
use crate::types::Type;
use bytes::Bytes;

enum Lit {
    Num(Number),
    Bool(bool),
}

enum Literal {
    Empty,
    Hex(Vec<u8>),
    /// Row-major scalars and the shape of the nested lists (`[]` for a splat).
    Values(Vec<(Lit, usize)>, Vec<i64>),
}

fn checked_count(shape: &[i64]) -> Option<usize> {
    shape.iter().try_fold(1usize, |acc, &d| {
        usize::try_from(d).ok().and_then(|d| acc.checked_mul(d))
    })
}

impl<'a> Parser<'a> {
    /// `dense<...>` then `: type` unless the type is given (`memref.global`).
    pub(crate) fn parse_dense(&mut self, given: Option<Type>) -> PResult<Attribute> {
        let start = self.tok.start;
        self.bump();
        self.expect_punct(b'<')?;
        let lit = if self.is_punct(b'>') {
            Literal::Empty
        } else if self.is(Kind::String) {
            let pos = self.tok.start;
            let s = self.string()?;
            let bytes = s
                .strip_prefix("0x")
                .and_then(decode_hex)
                .ok_or_else(|| self.err_at(pos, "expected hex string of the form \"0x...\""))?;
            Literal::Hex(bytes)
        } else {
            let mut vals = Vec::new();
            let shape = self.dense_element(&mut vals)?;
            Literal::Values(vals, shape)
        };
        self.expect_punct(b'>')?;
        let ty_pos = self.tok.start;
        let ty = match given {
            Some(t) => t,
            None => {
                self.expect_punct(b':')?;
                self.parse_type()?
            }
        };
        let (shape, elem) = match ty.as_tensor() {
            Some(t) => match &t.shape {
                Some(s) if s.iter().all(|&d| d >= 0) => (s.clone(), t.elem.clone()),
                _ => {
                    return Err(self.err_at(
                        ty_pos,
                        "dense elements need a statically shaped tensor type",
                    ))
                }
            },
            None => {
                return Err(self.err_at(
                    ty_pos,
                    &format!("dense elements need a tensor type, got '{ty}'"),
                ))
            }
        };
        let dtype = DType::from_type(&elem).ok_or_else(|| {
            self.err_at(ty_pos, &format!("unsupported dense element type '{elem}'"))
        })?;
        let n = checked_count(&shape)
            .ok_or_else(|| self.err_at(ty_pos, "tensor type has too many elements"))?;
        let built = match lit {
            Literal::Empty => {
                if n != 0 {
                    return Err(self.err_at(
                        start,
                        &format!("empty literal for type '{ty}' with {n} elements"),
                    ));
                }
                Elements::from_wide(dtype, shape, &[])
            }
            Literal::Hex(bytes) => return self.dense_hex(dtype, shape, n, bytes, start),
            Literal::Values(vals, lit_shape) => {
                let wide: Vec<WideNum> = vals
                    .iter()
                    .map(|(l, pos)| self.to_wide(l, dtype, &elem, *pos))
                    .collect::<PResult<_>>()?;
                let all_same = wide.windows(2).all(|w| w[0] == w[1]);
                if lit_shape.is_empty() || (lit_shape == shape && all_same && wide.len() > 1) {
                    // Equal elements are stored once, as MLIR detects splats.
                    let v = wide.first().copied().unwrap_or_default();
                    Elements::splat(dtype, shape, v)
                } else if lit_shape != shape {
                    return Err(self.err_at(
                        start,
                        &format!("inferred shape of elements literal ({lit_shape:?}) does not match type ({shape:?})"),
                    ));
                } else {
                    Elements::from_wide(dtype, shape, &wide)
                }
            }
        };
        built
            .map(Attribute::Elements)
            .map_err(|e| self.err_at(start, &format!("invalid dense elements: {e}")))
    }

    /// One element: a nested list (returns its shape) or a scalar (`[]`).
    fn dense_element(&mut self, out: &mut Vec<(Lit, usize)>) -> PResult<Vec<i64>> {
        let pos = self.tok.start;
        if !self.eat_punct(b'[') {
            let lit = if self.is_keyword("true") || self.is_keyword("false") {
                let b = self.is_keyword("true");
                self.bump();
                Lit::Bool(b)
            } else if self.is_punct(b'(') {
                return Err(self.err("complex dense elements are not supported"));
            } else {
                Lit::Num(self.number()?)
            };
            out.push((lit, pos));
            return Ok(Vec::new());
        }
        self.enter()?;
        let mut len: i64 = 0;
        let mut inner: Option<Vec<i64>> = None;
        if !self.eat_punct(b']') {
            loop {
                let at = self.tok.start;
                let s = self.dense_element(out)?;
                match &inner {
                    Some(prev) if *prev != s => {
                        return Err(self.err_at(
                            at,
                            "tensor literal is invalid; ranks are not consistent between elements",
                        ));
                    }
                    Some(_) => {}
                    None => inner = Some(s),
                }
                len += 1;
                if !self.eat_punct(b',') {
                    break;
                }
            }
            self.expect_punct(b']')?;
        }
        self.leave();
        let mut shape = vec![len];
        shape.extend(inner.unwrap_or_default());
        Ok(shape)
    }

    fn to_wide(&self, lit: &Lit, dtype: DType, elem: &Type, pos: usize) -> PResult<WideNum> {
        let bad = |what: &str| {
            self.err_at(
                pos,
                &format!("{what} is not valid for element type '{elem}'"),
            )
        };
        match (dtype.class(), lit) {
            (_, Lit::Bool(b)) if dtype == DType::Bool => Ok(WideNum::from_u64(u64::from(*b))),
            (_, Lit::Bool(_)) => Err(bad("boolean literal")),
            (NumClass::Float, Lit::Num(Number::Float(v))) => Ok(WideNum::from_f64(*v)),
            (NumClass::Float, Lit::Num(Number::Int { neg, mag, hex })) => {
                if *hex {
                    if *neg || dtype.bits() < 64 && mag >> dtype.bits() != 0 {
                        return Err(bad("hexadecimal literal"));
                    }
                    return Ok(decode(dtype, *mag));
                }
                let v = *mag as f64;
                Ok(WideNum::from_f64(if *neg { -v } else { v }))
            }
            (_, Lit::Num(Number::Float(_))) => Err(bad("floating point literal")),
            (_, Lit::Num(Number::Int { neg, mag, .. })) => {
                let int_ty = match elem {
                    Type::Int { .. } => elem.clone(),
                    _ => Type::i64(),
                };
                let v =
                    int_in_range(*neg, *mag, &int_ty).ok_or_else(|| bad("out-of-range integer"))?;
                if dtype == DType::Bool && !(v == 0 || v == 1 || v == -1) {
                    return Err(bad("integer"));
                }
                let bits = dtype.bits();
                Ok(match dtype.class() {
                    NumClass::Signed => WideNum::from_i64((v << (64 - bits)) >> (64 - bits)),
                    _ if dtype == DType::Bool => WideNum::from_u64(u64::from(v != 0)),
                    _ => WideNum::from_u64((v as u64) & (u64::MAX >> (64 - bits))),
                })
            }
        }
    }

    /// `dense<"0x...">`: raw little-endian data, one element (a splat) or
    /// exactly `n`. MLIR stores sub-byte integers one per byte.
    fn dense_hex(
        &self,
        dtype: DType,
        shape: Vec<i64>,
        n: usize,
        bytes: Vec<u8>,
        pos: usize,
    ) -> PResult<Attribute> {
        let fail = |msg: &str| self.err_at(pos, msg);
        if dtype == DType::Bool {
            return Err(fail("hex data is not supported for i1 elements"));
        }
        let per = (dtype.bits() as usize).div_ceil(8);
        let raw_at = |i: usize| -> u64 {
            let mut buf = [0u8; 8];
            if let Some(chunk) = bytes.get(i * per..(i + 1) * per) {
                buf[..per].copy_from_slice(chunk);
            }
            u64::from_le_bytes(buf)
        };
        // Equal elements become a splat, unless the dtype cannot be
        // re-encoded from a value (8-bit floats keep their bytes).
        let encodable = crate::elements::encode(dtype, WideNum::default()).is_some();
        let uniform = encodable
            && n > 1
            && bytes.len() == n.saturating_mul(per)
            && bytes.chunks(per).all(|c| bytes.get(..per) == Some(c));
        let built = if (bytes.len() == per && n != 1) || uniform {
            Elements::splat(dtype, shape, decode(dtype, raw_at(0)))
        } else if Some(bytes.len()) != n.checked_mul(per) {
            return Err(fail(&format!(
                "elements hex data size is invalid for provided type: {} bytes for {n} elements",
                bytes.len()
            )));
        } else if dtype.bits() >= 8 {
            Elements::from_bytes(dtype, shape, Bytes::from(bytes))
        } else {
            let vals: Vec<WideNum> = (0..n)
                .map(|i| decode(dtype, raw_at(i) & ((1 << dtype.bits()) - 1)))
                .collect();
            Elements::from_wide(dtype, shape, &vals)
        };
        built
            .map(Attribute::Elements)
            .map_err(|e| fail(&format!("invalid dense elements: {e}")))
    }
}
