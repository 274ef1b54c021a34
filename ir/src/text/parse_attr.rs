//! Types, attributes and locations.

use super::lexer::Kind;
use super::parse_type::is_type_keyword;
use super::parser::{PResult, Parser};
use crate::attr::Attribute;
use crate::diag::Location;
use crate::elements::{decode, DType};
use crate::sym::Sym;
use crate::types::{FloatKind, Signedness, Type};
use std::sync::Arc;

/// A literal number: sign, and either an integer magnitude or a float.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Number {
    Int { neg: bool, mag: u64, hex: bool },
    Float(f64),
}

impl<'a> Parser<'a> {
    // ---- attributes ----

    /// `{a = 1, b}` appended to `attrs`; a repeated key is an error.
    pub(crate) fn attr_dict_into(&mut self, attrs: &mut Vec<(Sym, Attribute)>) -> PResult<()> {
        self.expect_punct(b'{')?;
        self.enter()?;
        let mut seen = std::collections::HashSet::new();
        if !self.eat_punct(b'}') {
            loop {
                let pos = self.tok.start;
                let key = match self.tok.kind {
                    Kind::BareIdent => self.bump_text(),
                    Kind::String => self.string()?,
                    _ => return Err(self.err("expected attribute name")),
                };
                if key.is_empty() {
                    return Err(self.err_at(pos, "expected a non-empty attribute name"));
                }
                if !seen.insert(key.clone()) {
                    return Err(self.err_at(
                        pos,
                        &format!("duplicate key '{key}' in dictionary attribute"),
                    ));
                }
                let value = if self.eat_punct(b'=') {
                    self.parse_attribute()?
                } else {
                    Attribute::Unit
                };
                attrs.push((Sym::intern_text(&key), value));
                if !self.eat_punct(b',') {
                    break;
                }
            }
            self.expect_punct(b'}')?;
        }
        self.leave();
        Ok(())
    }

    /// An attr-dict if one follows.
    pub(crate) fn opt_attr_dict(&mut self, attrs: &mut Vec<(Sym, Attribute)>) -> PResult<()> {
        if self.is_punct(b'{') {
            self.attr_dict_into(attrs)?;
        }
        Ok(())
    }

    /// `attributes {...}` if it follows.
    pub(crate) fn opt_attr_dict_with_keyword(
        &mut self,
        attrs: &mut Vec<(Sym, Attribute)>,
    ) -> PResult<()> {
        if self.eat_keyword("attributes") {
            self.attr_dict_into(attrs)?;
        }
        Ok(())
    }

    fn bump_text(&mut self) -> String {
        let t = self.bump();
        self.lex.text(t).to_string()
    }

    pub(crate) fn parse_attribute(&mut self) -> PResult<Attribute> {
        self.enter()?;
        let a = self.attribute_inner();
        self.leave();
        a
    }

    fn attribute_inner(&mut self) -> PResult<Attribute> {
        let start = self.tok.start;
        match self.tok.kind {
            Kind::BareIdent => match self.text() {
                "unit" => {
                    self.bump();
                    Ok(Attribute::Unit)
                }
                "true" | "false" => {
                    let b = self.text() == "true";
                    self.bump();
                    Ok(Attribute::Bool(b))
                }
                "dense" => self.parse_dense(None),
                "array" => self.dense_array(),
                s if is_type_keyword(s) => Ok(Attribute::Type(self.parse_type()?)),
                s => Err(self.err_at(start, &format!("unknown or unsupported attribute '{s}'"))),
            },
            Kind::Integer | Kind::Float | Kind::Punct(b'-') => {
                let n = self.number()?;
                let ty = if self.eat_punct(b':') {
                    Some(self.parse_type()?)
                } else {
                    None
                };
                self.number_attr(n, ty, start)
            }
            Kind::String => Ok(Attribute::String(Arc::from(self.string()?.as_str()))),
            Kind::Punct(b'[') => {
                self.bump();
                let mut items = Vec::new();
                if !self.eat_punct(b']') {
                    loop {
                        items.push(self.parse_attribute()?);
                        if !self.eat_punct(b',') {
                            break;
                        }
                    }
                    self.expect_punct(b']')?;
                }
                Ok(Attribute::Array(Arc::from(items)))
            }
            Kind::Punct(b'{') => {
                let mut entries = Vec::new();
                self.attr_dict_into(&mut entries)?;
                entries.sort_by_key(|a| a.0);
                Ok(Attribute::Dict(Arc::from(entries)))
            }
            Kind::AtId => self
                .symbol_ref()
                .map(|s| Attribute::SymbolRef(Arc::from(s.as_str()))),
            Kind::Punct(b'(') | Kind::ExclId => Ok(Attribute::Type(self.parse_type()?)),
            Kind::HashId if self.lex.peek_byte() == Some(b'<') && self.text().contains('.') => {
                self.dialect_attr()
            }
            Kind::HashId => {
                let name = self.text().get(1..).unwrap_or("");
                match self.attr_aliases.get(name) {
                    Some(a) => {
                        let a = a.clone();
                        self.bump();
                        Ok(a)
                    }
                    None => Err(self.err(
                        "dialect attributes and undefined attribute aliases are not supported",
                    )),
                }
            }
            _ => Err(self.err("expected attribute value")),
        }
    }

    /// `@name`, `@"quoted"`, `@a::@b` (kept as `a::@b`).
    pub(crate) fn symbol_ref(&mut self) -> PResult<String> {
        let mut out = self.symbol_name()?;
        while self.is_punct(b':') && self.lex.byte(self.tok.end) == Some(b':') {
            self.bump();
            self.bump();
            out.push_str("::@");
            out.push_str(&self.symbol_name()?);
        }
        Ok(out)
    }

    /// One `@name` segment, decoded.
    pub(crate) fn symbol_name(&mut self) -> PResult<String> {
        if !self.is(Kind::AtId) {
            return Err(self.err("expected symbol reference"));
        }
        let t = self.bump();
        if self.lex.byte(t.start + 1) == Some(b'"') {
            return super::lexer::decode_string(self.lex.src().as_bytes(), t.start + 1)
                .map(|(s, _)| s)
                .map_err(|(at, m)| self.err_at(at, m));
        }
        Ok(self.lex.text(t).get(1..).unwrap_or("").to_string())
    }

    /// An optionally negative integer or float literal.
    pub(crate) fn number(&mut self) -> PResult<Number> {
        let start = self.tok.start;
        let neg = self.eat_punct(b'-');
        let t = self.tok;
        let text = self.lex.text(t);
        let n = match t.kind {
            Kind::Integer => {
                let (hex, parsed) = match text.strip_prefix("0x") {
                    Some(h) => (true, u64::from_str_radix(h, 16)),
                    None => (false, text.parse::<u64>()),
                };
                let mag = parsed.map_err(|_| self.err_at(start, "integer literal is too large"))?;
                Number::Int { neg, mag, hex }
            }
            Kind::Float => {
                let v: f64 = text
                    .parse()
                    .map_err(|_| self.err_at(start, "invalid floating point literal"))?;
                Number::Float(if neg { -v } else { v })
            }
            _ => return Err(self.err("expected number")),
        };
        self.bump();
        Ok(n)
    }

    /// A typed number attribute (`5 : i32`, `1.0 : f32`, `0x7FC00000 : f32`).
    pub(crate) fn number_attr(
        &self,
        n: Number,
        ty: Option<Type>,
        pos: usize,
    ) -> PResult<Attribute> {
        match (n, ty) {
            (Number::Float(v), None) => Ok(Attribute::Float(v, Type::f64())),
            (Number::Float(v), Some(t)) if t.is_float() => Ok(Attribute::Float(round_to(v, &t), t)),
            (Number::Float(_), Some(t)) => Err(self.err_at(
                pos,
                &format!("floating point value not valid for type '{t}'"),
            )),
            (Number::Int { neg, mag, hex }, ty) => {
                let ty = ty.unwrap_or_else(Type::i64);
                if ty.is_float() {
                    if hex {
                        if neg {
                            return Err(
                                self.err_at(pos, "hexadecimal float literal must not be negative")
                            );
                        }
                        let v = float_from_bits(&ty, mag).ok_or_else(|| {
                            self.err_at(pos, "hexadecimal float constant out of range for type")
                        })?;
                        return Ok(Attribute::Float(v, ty));
                    }
                    let v = mag as f64;
                    return Ok(Attribute::Float(
                        round_to(if neg { -v } else { v }, &ty),
                        ty,
                    ));
                }
                if !ty.is_int_or_index() {
                    return Err(
                        self.err_at(pos, &format!("integer literal not valid for type '{ty}'"))
                    );
                }
                let v = int_in_range(neg, mag, &ty).ok_or_else(|| {
                    self.err_at(
                        pos,
                        &format!("integer constant out of range for type '{ty}'"),
                    )
                })?;
                Ok(Attribute::Int(v, ty))
            }
        }
    }

    /// `array<i64: 1, 2>`, `array<i1: true>`, `array<i32>`.
    fn dense_array(&mut self) -> PResult<Attribute> {
        self.bump();
        self.expect_punct(b'<')?;
        let ty_pos = self.tok.start;
        let ty = self.parse_type()?;
        let width = match ty {
            Type::Int {
                width: w @ (1 | 8 | 16 | 32 | 64),
                ..
            } => w,
            _ => {
                return Err(self.err_at(
                    ty_pos,
                    &format!("unsupported dense array element type '{ty}'"),
                ))
            }
        };
        let mut values = Vec::new();
        if self.eat_punct(b':') {
            loop {
                let pos = self.tok.start;
                let v = if width == 1 && (self.is_keyword("true") || self.is_keyword("false")) {
                    i64::from(self.bump_text() == "true")
                } else {
                    match self.number()? {
                        Number::Int {
                            neg,
                            mag,
                            hex: false,
                        } => int_in_range(neg, mag, &ty)
                            .ok_or_else(|| self.err_at(pos, "integer constant out of range"))?,
                        _ => return Err(self.err_at(pos, "expected integer element")),
                    }
                };
                values.push(v);
                if !self.eat_punct(b',') {
                    break;
                }
            }
        }
        self.expect_punct(b'>')?;
        Ok(Attribute::DenseArray(ty, Arc::from(values)))
    }

    // ---- locations ----

    /// `loc(...)` if it follows. Names and file positions are kept; other
    /// forms (fused, callsite, aliases) become `Unknown`.
    pub(crate) fn parse_trailing_loc(&mut self) -> PResult<Option<Location>> {
        if !self.is_keyword("loc") || self.lex.byte(self.tok.end) != Some(b'(') {
            return Ok(None);
        }
        self.bump();
        self.expect_punct(b'(')?;
        let loc = if self.eat_keyword("unknown") {
            Location::Unknown
        } else if self.is(Kind::String) {
            let s = self.string()?;
            if self.eat_punct(b':') {
                let line = self.uint()?;
                self.expect_punct(b':')?;
                let col = self.uint()?;
                Location::File {
                    file: Arc::from(s.as_str()),
                    line: u32::try_from(line).unwrap_or(u32::MAX),
                    col: u32::try_from(col).unwrap_or(u32::MAX),
                }
            } else {
                if self.eat_punct(b'(') {
                    self.skip_balanced()?;
                    self.expect_punct(b')')?;
                }
                Location::Name(Arc::from(s.as_str()))
            }
        } else {
            self.skip_balanced()?;
            Location::Unknown
        };
        self.expect_punct(b')')?;
        Ok(Some(loc))
    }

    /// Skips tokens up to (not including) the `)` closing the current level.
    pub(crate) fn skip_balanced(&mut self) -> PResult<()> {
        let mut depth = 0usize;
        loop {
            match self.tok.kind {
                Kind::Eof | Kind::Error => return Err(self.err("unbalanced parentheses")),
                Kind::Punct(b'(' | b'[' | b'{' | b'<') => depth += 1,
                Kind::Punct(b')') if depth == 0 => return Ok(()),
                Kind::Punct(b')' | b']' | b'}' | b'>') => {
                    depth = depth
                        .checked_sub(1)
                        .ok_or_else(|| self.err("unbalanced brackets"))?;
                }
                _ => {}
            }
            self.bump();
        }
    }

    /// `#dialect.name<body>` kept verbatim (`body` may nest `<>` and hold
    /// strings): the token is the `#dialect.name` before the `<`.
    fn dialect_attr(&mut self) -> PResult<Attribute> {
        let start = self.tok.start + 1;
        let src = self.lex.src().as_bytes();
        let mut at = self.lex.pos();
        let mut depth = 0usize;
        loop {
            match src.get(at) {
                Some(b'<') => depth += 1,
                Some(b'>') => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        break;
                    }
                }
                Some(b'"') => {
                    let (_, end) =
                        super::lexer::decode_string(src, at).map_err(|(p, m)| self.err_at(p, m))?;
                    at = end;
                    continue;
                }
                Some(_) => {}
                None => return Err(self.err("unterminated dialect attribute")),
            }
            at += 1;
        }
        let body = self.lex.src().get(start..=at).unwrap_or("");
        let attr = Attribute::Opaque(Arc::from(body));
        self.reset_to(at + 1);
        Ok(attr)
    }
}

/// Checks that a literal fits `ty` (signless types accept both signed and
/// unsigned spellings) and returns its bits as i64.
pub(crate) fn int_in_range(neg: bool, mag: u64, ty: &Type) -> Option<i64> {
    let (width, sign) = match ty {
        Type::Index => (64, Signedness::Signless),
        Type::Int { width, sign } => (*width, *sign),
        _ => return None,
    };
    if width == 0 {
        return None;
    }
    let v: i128 = if neg {
        -i128::from(mag)
    } else {
        i128::from(mag)
    };
    let w = width.min(64);
    let (lo, hi): (i128, i128) = match sign {
        Signedness::Signed => (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1),
        Signedness::Unsigned => (0, (1i128 << w) - 1),
        Signedness::Signless => (-(1i128 << (w - 1)), (1i128 << w) - 1),
    };
    if width <= 64 && (v < lo || v > hi) {
        return None;
    }
    // Wider-than-64 types keep the low 64 bits; values from u64 wrap to i64.
    Some(v as i64)
}

/// `v` rounded to the precision of float type `ty` (the value an attribute
/// of that type holds). Types without an encoder here keep `v`.
pub(crate) fn round_to(v: f64, ty: &Type) -> f64 {
    match ty.float_kind() {
        Some(FloatKind::F32) => f64::from(v as f32),
        Some(FloatKind::F16) => half::f16::from_f64(v).to_f64(),
        Some(FloatKind::BF16) => half::bf16::from_f64(v).to_f64(),
        _ => v,
    }
}

/// The value of a float of type `ty` given by its bit pattern.
pub(crate) fn float_from_bits(ty: &Type, bits: u64) -> Option<f64> {
    let kind = ty.float_kind()?;
    if kind.bits() < 64 && bits >> kind.bits() != 0 {
        return None;
    }
    let dtype = DType::from_type(ty)?;
    Some(decode(dtype, bits).f64())
}
