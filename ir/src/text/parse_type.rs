//! Builtin types, function types and dialect types.

use super::lexer::Kind;
use super::parser::{PResult, Parser};
use crate::dim::DimExpr;
use crate::types::{FloatKind, Layout, MemRefType, Signedness, TensorType, Type, VectorType, DYN};
use std::sync::Arc;

/// MLIR's limit on integer type widths.
const MAX_INT_WIDTH: u64 = 16_777_215;

/// `iN`, `siN`, `uiN`.
fn int_type(name: &str) -> Option<Result<Type, ()>> {
    let (sign, digits) = if let Some(d) = name.strip_prefix("si") {
        (Signedness::Signed, d)
    } else if let Some(d) = name.strip_prefix("ui") {
        (Signedness::Unsigned, d)
    } else {
        (Signedness::Signless, name.strip_prefix('i')?)
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(match digits.parse::<u64>() {
        Ok(w) if (1..=MAX_INT_WIDTH).contains(&w) => Ok(Type::Int {
            width: w as u32,
            sign,
        }),
        _ => Err(()),
    })
}

/// Whether a bare identifier begins a builtin type.
pub(crate) fn is_type_keyword(s: &str) -> bool {
    matches!(
        s,
        "index" | "none" | "tensor" | "memref" | "vector" | "complex"
    ) || FloatKind::from_name(s).is_some()
        || int_type(s).is_some()
}

impl<'a> Parser<'a> {
    pub(crate) fn parse_type(&mut self) -> PResult<Type> {
        match self.tok.kind {
            Kind::Punct(b'(') => self.function_type(),
            Kind::ExclId => self.dialect_type(),
            Kind::BareIdent => self.builtin_type(),
            _ => Err(self.err("expected type")),
        }
    }

    /// `T, U, ...` (at least one).
    pub(crate) fn type_list(&mut self) -> PResult<Vec<Type>> {
        let mut out = vec![self.parse_type()?];
        while self.eat_punct(b',') {
            out.push(self.parse_type()?);
        }
        Ok(out)
    }

    /// `(T, U)` or `()`.
    pub(crate) fn paren_type_list(&mut self) -> PResult<Vec<Type>> {
        self.expect_punct(b'(')?;
        if self.eat_punct(b')') {
            return Ok(Vec::new());
        }
        let out = self.type_list()?;
        self.expect_punct(b')')?;
        Ok(out)
    }

    /// `(T) -> R`, `(T) -> (R, S)`.
    fn function_type(&mut self) -> PResult<Type> {
        self.enter()?;
        let inputs = self.paren_type_list()?;
        self.expect_arrow()?;
        let results = if self.is_punct(b'(') {
            self.paren_type_list()?
        } else {
            vec![self.parse_type()?]
        };
        self.leave();
        Ok(Type::function(inputs, results))
    }

    /// `!dialect.name` or `!dialect.name<...>`, kept verbatim; or an alias.
    fn dialect_type(&mut self) -> PResult<Type> {
        let t = self.tok;
        let name = self.lex.text(t).get(1..).unwrap_or("");
        if self.lex.byte(t.end) != Some(b'<') {
            self.bump();
            if let Some(ty) = self.type_aliases.get(name) {
                return Ok(ty.clone());
            }
            return Ok(Type::Opaque(Arc::from(name)));
        }
        let end = self.scan_angle_body(t.end)?;
        let body = self.lex.src().get(t.start + 1..end).unwrap_or("");
        let ty = Type::Opaque(Arc::from(body));
        self.reset_to(end);
        Ok(ty)
    }

    /// Scans a balanced `<...>` starting at `open`; returns the offset after it.
    pub(crate) fn scan_angle_body(&mut self, open: usize) -> PResult<usize> {
        let src = self.lex.src().as_bytes();
        let mut stack: Vec<u8> = Vec::new();
        let mut i = open;
        while let Some(&c) = src.get(i) {
            match c {
                b'<' | b'(' | b'[' | b'{' => {
                    if stack.len() >= super::parser::MAX_DEPTH {
                        return Err(self.err_at(i, "dialect type is nested too deeply"));
                    }
                    stack.push(c);
                }
                b'>' if i > 0 && src.get(i - 1) == Some(&b'-') => {}
                b'>' | b')' | b']' | b'}' => {
                    let want = match c {
                        b'>' => b'<',
                        b')' => b'(',
                        b']' => b'[',
                        _ => b'{',
                    };
                    if stack.pop() != Some(want) {
                        return Err(self.err_at(i, "unbalanced brackets in dialect type"));
                    }
                    if stack.is_empty() {
                        return Ok(i + 1);
                    }
                }
                b'"' => {
                    let (_, end) = super::lexer::decode_string(src, i)
                        .map_err(|(at, m)| self.err_at(at, m))?;
                    i = end;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        Err(self.err_at(open, "unterminated dialect type"))
    }

    fn builtin_type(&mut self) -> PResult<Type> {
        let start = self.tok.start;
        let name = self.text();
        if let Some(k) = FloatKind::from_name(name) {
            self.bump();
            return Ok(Type::Float(k));
        }
        if let Some(r) = int_type(name) {
            self.bump();
            return r.map_err(|()| self.err_at(start, "invalid integer width"));
        }
        match name {
            "index" => {
                self.bump();
                Ok(Type::Index)
            }
            "none" => {
                self.bump();
                Ok(Type::None)
            }
            "complex" => {
                self.bump();
                self.enter()?;
                self.expect_punct(b'<')?;
                let elem = self.parse_type()?;
                self.expect_punct(b'>')?;
                self.leave();
                Ok(Type::Complex(Arc::new(elem)))
            }
            "tensor" => {
                self.bump();
                self.enter()?;
                self.expect_angle_open()?;
                let shape = self.dims(true)?;
                let elem = self.parse_type()?;
                let dims = if self.eat_punct(b',') {
                    Some(self.sym_dims(shape.as_ref().map_or(0, Vec::len))?)
                } else {
                    None
                };
                self.expect_punct(b'>')?;
                self.leave();
                Ok(match (shape, dims) {
                    (Some(shape), Some(dims)) => {
                        let merged = shape
                            .iter()
                            .zip(dims)
                            .map(|(&s, d)| {
                                if s == DYN {
                                    d
                                } else {
                                    Some(DimExpr::constant(s))
                                }
                            })
                            .collect();
                        Type::tensor_dims(merged, elem)
                    }
                    (shape, _) => Type::Tensor(Arc::new(TensorType {
                        shape,
                        elem,
                        dims: None,
                    })),
                })
            }
            "vector" => {
                self.bump();
                self.enter()?;
                self.expect_angle_open()?;
                let at = self.tok.start;
                let shape = self.dims(false)?.unwrap_or_default();
                if shape.is_empty() || shape.iter().any(|&d| d <= 0) {
                    return Err(self.err_at(at, "vector dims must be static and positive"));
                }
                let elem = self.parse_type()?;
                self.expect_punct(b'>')?;
                self.leave();
                if !elem.is_scalar() {
                    return Err(self.err_at(at, "vector elements must be scalars"));
                }
                Ok(Type::Vector(Arc::new(VectorType { shape, elem })))
            }
            "memref" => {
                self.bump();
                self.enter()?;
                self.expect_angle_open()?;
                let shape = self.dims(false)?.unwrap_or_default();
                let elem = self.parse_type()?;
                let layout = if self.eat_punct(b',') {
                    self.strided_layout()?
                } else {
                    Layout::Identity
                };
                self.expect_punct(b'>')?;
                self.leave();
                Ok(Type::MemRef(Arc::new(MemRefType {
                    shape,
                    elem,
                    layout,
                })))
            }
            _ => Err(self.err_at(start, &format!("unknown or unsupported type '{name}'"))),
        }
    }

    /// Checks that the current token is `<` without consuming it: what
    /// follows is scanned by character.
    fn expect_angle_open(&mut self) -> PResult<()> {
        if self.is_punct(b'<') {
            Ok(())
        } else {
            Err(self.err("expected '<'"))
        }
    }

    /// `4x?x` (or `*x` when unranked is allowed), scanned by character from
    /// right after the current `<` token; leaves the element type as the
    /// current token. `None` means unranked.
    /// `#onnx.dims<"N, 3, ?">`: one symbolic size per dim (`?` unknown).
    fn sym_dims(&mut self, rank: usize) -> PResult<Vec<Option<DimExpr>>> {
        if !(self.is(Kind::HashId) && self.text() == "#onnx.dims") {
            return Err(self.err("expected '#onnx.dims' after the element type"));
        }
        self.bump();
        self.expect_punct(b'<')?;
        let at = self.tok.start;
        let text = self.string()?;
        self.expect_punct(b'>')?;
        let dims: Vec<Option<DimExpr>> = text
            .split(',')
            .map(|item| match item.trim() {
                "?" => Ok(None),
                e => crate::dim::parse(e).map(Some),
            })
            .collect::<Result<_, _>>()
            .map_err(|m| self.err_at(at, &m))?;
        if dims.len() != rank {
            return Err(self.err_at(at, "'#onnx.dims' must give one size per dim"));
        }
        Ok(dims)
    }

    fn dims(&mut self, allow_unranked: bool) -> PResult<Option<Vec<i64>>> {
        let mut dims = Vec::new();
        let mut unranked = false;
        loop {
            self.lex.skip_trivia();
            let at = self.lex.pos();
            match self.lex.peek_byte() {
                Some(b'?') => {
                    self.lex.bump_byte();
                    dims.push(DYN);
                }
                Some(b'*') if allow_unranked && dims.is_empty() => {
                    self.lex.bump_byte();
                    unranked = true;
                }
                Some(c) if c.is_ascii_digit() => {
                    let mut v: i64 = 0;
                    while let Some(d) = self.lex.peek_byte().filter(u8::is_ascii_digit) {
                        v = v
                            .checked_mul(10)
                            .and_then(|v| v.checked_add(i64::from(d - b'0')))
                            .ok_or_else(|| self.err_at(at, "dimension is too large"))?;
                        self.lex.bump_byte();
                    }
                    dims.push(v);
                }
                _ => {
                    self.lex.set_pos(at);
                    break;
                }
            }
            self.lex.skip_trivia();
            if self.lex.peek_byte() != Some(b'x') {
                let p = self.lex.pos();
                return Err(self.err_at(p, "expected 'x' in dimension list"));
            }
            self.lex.bump_byte();
            if unranked {
                break;
            }
        }
        let p = self.lex.pos();
        self.reset_to(p);
        Ok(if unranked { None } else { Some(dims) })
    }

    /// `strided<[s0, s1], offset: o>`.
    fn strided_layout(&mut self) -> PResult<Layout> {
        if !self.eat_keyword("strided") {
            return Err(self.err("unsupported memref layout or memory space (only strided<...>)"));
        }
        self.expect_punct(b'<')?;
        self.expect_punct(b'[')?;
        let mut strides = Vec::new();
        if !self.is_punct(b']') {
            loop {
                strides.push(self.dim_or_dyn()?);
                if !self.eat_punct(b',') {
                    break;
                }
            }
        }
        self.expect_punct(b']')?;
        let mut offset = 0;
        if self.eat_punct(b',') {
            self.expect_keyword("offset")?;
            self.expect_punct(b':')?;
            offset = self.dim_or_dyn()?;
        }
        self.expect_punct(b'>')?;
        Ok(Layout::Strided { offset, strides })
    }

    /// `?` or an integer.
    pub(crate) fn dim_or_dyn(&mut self) -> PResult<i64> {
        if self.eat_punct(b'?') {
            return Ok(DYN);
        }
        let pos = self.tok.start;
        let v = self.int()?;
        if v == DYN {
            return Err(self.err_at(pos, "integer is too small"));
        }
        Ok(v)
    }
}
