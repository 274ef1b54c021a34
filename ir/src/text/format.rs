//! Declarative assembly formats: an op's pretty form written in its row of
//! `ir/core.table` and printed and parsed by one interpreter, as MLIR's
//! `assemblyFormat` is.
//!
//! A format is a sequence of
//! - `$name`: the next operand (operands appear in op order);
//! - `@name`: the symbol attribute `name`;
//! - `type($name)`: that operand's type; `type(result)`: the single result's;
//! - `attr-dict`: the remaining attributes;
//! - literals: `,` `:` `[` `]` `(` `)` `->` and keywords such as `to`.
//!
//! The op has one result when the format names `type(result)` or the op is
//! `same_type`; there, every operand and result whose type the format does
//! not give has the first type it gives.

use super::parser::{PResult, Parser};
use super::printer::Printer;
use crate::attr::Attribute;
use crate::module::{OpId, ValueId};
use crate::registry::{self, Syntax, Traits};
use crate::sym::Sym;
use crate::types::Type;

#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) enum Piece {
    Operand(&'static str),
    Symbol(&'static str),
    OperandType(&'static str),
    ResultType,
    AttrDict,
    Punct(u8),
    Arrow,
    Keyword(&'static str),
}

/// The pieces of `format`, or what is wrong with it.
pub(crate) fn pieces(format: &'static str) -> Result<Vec<Piece>, String> {
    let mut out = Vec::new();
    let mut rest = format.trim_start();
    while !rest.is_empty() {
        let word_end = |s: &str| {
            s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                .unwrap_or(s.len())
        };
        let (piece, len) = if let Some(r) = rest.strip_prefix("type(") {
            let close = r.find(')').ok_or("unclosed type(")?;
            let target = &r[..close];
            let piece = match target.strip_prefix('$') {
                Some(name) => Piece::OperandType(name),
                None if target == "result" => Piece::ResultType,
                None => {
                    return Err(format!(
                        "type({target}) names neither an operand nor result"
                    ))
                }
            };
            (piece, 5 + close + 1)
        } else if let Some(r) = rest.strip_prefix('$') {
            (Piece::Operand(&r[..word_end(r)]), 1 + word_end(r))
        } else if let Some(r) = rest.strip_prefix('@') {
            (Piece::Symbol(&r[..word_end(r)]), 1 + word_end(r))
        } else if rest.starts_with("->") {
            (Piece::Arrow, 2)
        } else if rest.starts_with("attr-dict") {
            (Piece::AttrDict, 9)
        } else if let Some(c) = rest.bytes().next().filter(|c| b",:[]()".contains(c)) {
            (Piece::Punct(c), 1)
        } else if word_end(rest) > 0 {
            (Piece::Keyword(&rest[..word_end(rest)]), word_end(rest))
        } else {
            return Err(format!("unexpected `{rest}`"));
        };
        if matches!(piece, Piece::Operand("") | Piece::Symbol("")) {
            return Err("`$` and `@` need a name".into());
        }
        out.push(piece);
        rest = rest[len..].trim_start();
    }
    Ok(out)
}

/// The op's format and whether it is `same_type`.
fn format_of(name: &str) -> Option<(Vec<Piece>, bool)> {
    let def = registry::lookup_name(name)?;
    let Syntax::Format(f) = def.syntax else {
        return None;
    };
    Some((pieces(f).ok()?, def.traits.contains(Traits::SAME_TYPE)))
}

fn operand_names(pieces: &[Piece]) -> Vec<&'static str> {
    pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Operand(n) => Some(*n),
            _ => None,
        })
        .collect()
}

fn result_count(pieces: &[Piece], same_type: bool) -> usize {
    usize::from(same_type || pieces.contains(&Piece::ResultType))
}

pub(crate) fn print(p: &mut Printer<'_>, op: OpId) -> Option<()> {
    let m = p.m;
    let (pieces, same_type) = format_of(m.name(op).as_str())?;
    let names = operand_names(&pieces);
    super::forms::shape(
        m,
        op,
        Some(names.len()),
        result_count(&pieces, same_type),
        0,
    )?;
    let operands = m.operands(op);
    let results = m.results(op);
    let all: Vec<&Type> = operands
        .iter()
        .chain(results)
        .map(|&v| m.value_type(v))
        .collect();
    if same_type && all.windows(2).any(|w| w[0] != w[1]) {
        return None;
    }
    let operand = |n: &str| {
        names
            .iter()
            .position(|&x| x == n)
            .and_then(|i| operands.get(i))
    };
    let symbols: Vec<&str> = pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Symbol(s) => Some(*s),
            _ => None,
        })
        .collect();
    p.w(m.name(op).as_str());
    // A space before each piece but closers and commas, none after openers.
    let mut after_open = false;
    for piece in &pieces {
        let lead = if after_open { "" } else { " " };
        after_open = false;
        match *piece {
            Piece::Operand(n) => {
                p.w(lead);
                p.value(*operand(n)?);
            }
            Piece::Symbol(s) => {
                p.w(lead);
                p.symbol(m.attr(op, s)?.as_symbol()?);
            }
            Piece::OperandType(n) => {
                p.w(lead);
                p.ty(m.value_type(*operand(n)?));
            }
            Piece::ResultType => {
                p.w(lead);
                p.ty(m.value_type(*results.first()?));
            }
            Piece::AttrDict => p.attr_dict(op, &symbols),
            Piece::Punct(c @ (b',' | b']' | b')')) => p.w(punct(c)),
            Piece::Punct(c @ (b'[' | b'(')) => {
                p.w(punct(c));
                after_open = true;
            }
            Piece::Punct(c) => {
                p.w(lead);
                p.w(punct(c));
            }
            Piece::Arrow => {
                p.w(lead);
                p.w("->");
            }
            Piece::Keyword(k) => {
                p.w(lead);
                p.w(k);
            }
        }
    }
    Some(())
}

fn punct(c: u8) -> &'static str {
    match c {
        b',' => ",",
        b':' => ":",
        b'[' => "[",
        b']' => "]",
        b'(' => "(",
        _ => ")",
    }
}

pub(crate) fn parse(p: &mut Parser<'_>, name: &str) -> PResult<OpId> {
    let Some((pieces, same_type)) = format_of(name) else {
        return Err(p.err(&format!("'{name}' has no declarative format")));
    };
    let mut refs = Vec::new();
    let mut operand_types: Vec<(&str, Type)> = Vec::new();
    let mut result_type = None;
    let mut attrs: Vec<(Sym, Attribute)> = Vec::new();
    for piece in &pieces {
        match *piece {
            Piece::Operand(n) => refs.push((n, p.operand()?)),
            Piece::Symbol(s) => {
                let sym = p.symbol_ref()?;
                attrs.push((Sym::new(s), Attribute::symbol(&sym)));
            }
            Piece::OperandType(n) => operand_types.push((n, p.parse_type()?)),
            Piece::ResultType => result_type = Some(p.parse_type()?),
            Piece::AttrDict => p.opt_attr_dict(&mut attrs)?,
            Piece::Punct(c) => p.expect_punct(c)?,
            Piece::Arrow => p.expect_arrow()?,
            Piece::Keyword(k) => p.expect_keyword(k)?,
        }
    }
    let shared = same_type
        .then(|| {
            operand_types
                .first()
                .map(|(_, t)| t.clone())
                .or(result_type.clone())
        })
        .flatten();
    let mut operands: Vec<ValueId> = Vec::with_capacity(refs.len());
    for (n, r) in &refs {
        let ty = operand_types
            .iter()
            .find(|(x, _)| x == n)
            .map(|(_, t)| t.clone())
            .or_else(|| shared.clone())
            .ok_or_else(|| p.err(&format!("the format of '{name}' gives no type for ${n}")))?;
        operands.push(p.resolve(r, &ty)?);
    }
    let results = match result_count(&pieces, same_type) {
        0 => Vec::new(),
        _ => vec![result_type
            .or(shared)
            .ok_or_else(|| p.err(&format!("the format of '{name}' gives no result type")))?],
    };
    super::forms::simple(p, name, operands, results, attrs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::CoreOp;

    /// Every format in the table reads, names each operand once and gives
    /// every type it needs.
    #[test]
    fn table_formats_are_well_formed() {
        let mut seen = 0;
        for op in CoreOp::ALL {
            let def = op.def();
            let Syntax::Format(f) = def.syntax else {
                continue;
            };
            seen += 1;
            let pieces = pieces(f).unwrap_or_else(|e| panic!("{}: {e}", op.name()));
            let names = operand_names(&pieces);
            let same_type = def.traits.contains(Traits::SAME_TYPE);
            for (i, n) in names.iter().enumerate() {
                assert!(!names[..i].contains(n), "{}: ${n} twice", op.name());
                let typed = pieces.contains(&Piece::OperandType(n));
                assert!(typed || same_type, "{}: no type for ${n}", op.name());
            }
            for piece in &pieces {
                if let Piece::OperandType(n) = piece {
                    assert!(names.contains(n), "{}: type(${n}) of no operand", op.name());
                }
            }
        }
        assert!(seen >= 5, "only {seen} ops use a declarative format");
    }

    #[test]
    fn malformed_formats_are_rejected() {
        assert!(pieces("$a : type($a").is_err());
        assert!(pieces("$ : type(x)").is_err());
        assert!(pieces("$a % b").is_err());
        assert_eq!(
            pieces("$a, $b attr-dict : type($a) to type(result)"),
            Ok(vec![
                Piece::Operand("a"),
                Piece::Punct(b','),
                Piece::Operand("b"),
                Piece::AttrDict,
                Piece::Punct(b':'),
                Piece::OperandType("a"),
                Piece::Keyword("to"),
                Piece::ResultType,
            ])
        );
    }
}
