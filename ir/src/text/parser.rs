//! The parser core: tokens, diagnostics, operations (result binding, the
//! generic form) and the file. Names and labels are in `scope`, regions and
//! blocks in `region`, types in `parse_type`, attributes and locations in
//! `parse_attr`, dense literals in `dense`, pretty forms in `forms`.
//!
//! Regions are parsed into scratch regions and moved into their op once its
//! result types are known; uses before definitions get placeholders. Both
//! leave unreachable arena entries that `compact()` drops at the end.

use super::lexer::{Kind, Lexer, Token};
use super::scope::{Label, ValueScope};
use crate::attr::Attribute;
use crate::diag::{Diagnostic, Location};
use crate::module::{BlockId, InsertPoint, Module, OpId, OpSpec, RegionId};
use crate::ops::{BuiltinOp, CfOp, CoreOp};
use crate::registry::{self, Traits};
use crate::sym::Sym;
use crate::types::Type;
use std::collections::HashMap;
use std::sync::Arc;

/// Errors are boxed: a small `Result` keeps the frames of the recursive
/// descent small (debug builds give every temporary its own slot).
pub(crate) type PResult<T> = Result<T, Box<Diagnostic>>;

/// Deepest nesting of regions, types and attributes accepted: the parser is
/// recursive, and a hostile file must get a diagnostic, not a stack overflow.
pub(crate) const MAX_DEPTH: usize = 256;

/// A use of a value by name, resolved once its type is known.
#[derive(Clone, Debug)]
pub(crate) struct OperandRef {
    pub name: String,
    pub index: u32,
    pub pos: usize,
}

/// A block argument being defined: `%name: type`.
#[derive(Clone, Debug)]
pub(crate) struct ArgDef {
    pub name: String,
    pub ty: Type,
    pub pos: usize,
}

/// Explicit successor arguments: names and their types.
type SuccArgs = (Vec<OperandRef>, Vec<Type>);

/// What precedes the regions of a generic op.
struct GenericHead {
    pos: usize,
    name: String,
    operand_refs: Vec<OperandRef>,
    succs: Vec<(BlockId, Option<SuccArgs>)>,
    attrs: Vec<(Sym, Attribute)>,
}

pub(crate) struct Parser<'a> {
    pub(crate) lex: Lexer<'a>,
    pub(crate) tok: Token,
    file: Arc<str>,
    line_starts: Vec<usize>,
    pub(crate) m: Module,
    pub(super) cur_block: BlockId,
    /// Start of the op being parsed, for errors found when creating it.
    op_start: usize,
    depth: usize,
    pub(super) scopes: Vec<ValueScope>,
    pub(super) labels: Vec<HashMap<String, Label>>,
    pub(crate) type_aliases: HashMap<String, Type>,
    pub(crate) attr_aliases: HashMap<String, Attribute>,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(src: &'a str, file: &str) -> Parser<'a> {
        let mut lex = Lexer::new(src);
        let tok = lex.next_token();
        let mut line_starts = vec![0];
        line_starts.extend(
            src.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
        let m = Module::new();
        let cur_block = m.body();
        Parser {
            lex,
            tok,
            file: Arc::from(file),
            line_starts,
            m,
            cur_block,
            op_start: 0,
            depth: 0,
            scopes: Vec::new(),
            labels: Vec::new(),
            type_aliases: HashMap::new(),
            attr_aliases: HashMap::new(),
        }
    }

    // ---- tokens ----

    pub(crate) fn bump(&mut self) -> Token {
        let t = self.tok;
        self.tok = self.lex.next_token();
        t
    }
    /// Re-lexes from byte offset `pos` (after a character-level scan).
    pub(crate) fn reset_to(&mut self, pos: usize) {
        self.lex.set_pos(pos);
        self.tok = self.lex.next_token();
    }
    pub(crate) fn text(&self) -> &'a str {
        self.lex.text(self.tok)
    }
    pub(crate) fn is(&self, kind: Kind) -> bool {
        self.tok.kind == kind
    }
    pub(crate) fn is_punct(&self, c: u8) -> bool {
        self.tok.kind == Kind::Punct(c)
    }
    pub(crate) fn eat_punct(&mut self, c: u8) -> bool {
        let yes = self.is_punct(c);
        if yes {
            self.bump();
        }
        yes
    }
    pub(crate) fn expect_punct(&mut self, c: u8) -> PResult<()> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            Err(self.err(&format!("expected '{}'", c as char)))
        }
    }
    pub(crate) fn expect_arrow(&mut self) -> PResult<()> {
        if self.is(Kind::Arrow) {
            self.bump();
            Ok(())
        } else {
            Err(self.err("expected '->'"))
        }
    }
    pub(crate) fn is_keyword(&self, kw: &str) -> bool {
        self.tok.kind == Kind::BareIdent && self.text() == kw
    }
    pub(crate) fn eat_keyword(&mut self, kw: &str) -> bool {
        let yes = self.is_keyword(kw);
        if yes {
            self.bump();
        }
        yes
    }
    pub(crate) fn expect_keyword(&mut self, kw: &str) -> PResult<()> {
        if self.eat_keyword(kw) {
            Ok(())
        } else {
            Err(self.err(&format!("expected '{kw}'")))
        }
    }
    /// The decoded value of the current string token, consumed.
    pub(crate) fn string(&mut self) -> PResult<String> {
        if !self.is(Kind::String) {
            return Err(self.err("expected string literal"));
        }
        let t = self.bump();
        super::lexer::decode_string(self.lex.src().as_bytes(), t.start)
            .map(|(s, _)| s)
            .map_err(|(at, msg)| self.err_at(at, msg))
    }
    /// A non-negative decimal integer token, consumed.
    pub(crate) fn uint(&mut self) -> PResult<u64> {
        if !self.is(Kind::Integer) || self.text().starts_with("0x") {
            return Err(self.err("expected integer"));
        }
        let t = self.bump();
        self.lex
            .text(t)
            .parse::<u64>()
            .map_err(|_| self.err_at(t.start, "integer is too large"))
    }
    /// An optionally negative decimal integer, consumed.
    pub(crate) fn int(&mut self) -> PResult<i64> {
        let start = self.tok.start;
        let neg = self.eat_punct(b'-');
        let v = self.uint()?;
        let v = i128::from(v);
        i64::try_from(if neg { -v } else { v })
            .map_err(|_| self.err_at(start, "integer is too large"))
    }

    // ---- diagnostics ----

    pub(crate) fn loc_at(&self, pos: usize) -> Location {
        let line = self.line_starts.partition_point(|&s| s <= pos).max(1);
        let start = self.line_starts.get(line - 1).copied().unwrap_or(0);
        Location::File {
            file: self.file.clone(),
            line: u32::try_from(line).unwrap_or(u32::MAX),
            col: u32::try_from(pos.saturating_sub(start) + 1).unwrap_or(u32::MAX),
        }
    }
    pub(crate) fn err_at(&self, pos: usize, msg: &str) -> Box<Diagnostic> {
        Box::new(Diagnostic::error(msg).at(self.loc_at(pos)))
    }
    /// An error at the current token (the lexer's message if it is bad input).
    pub(crate) fn err(&self, msg: &str) -> Box<Diagnostic> {
        if self.tok.kind == Kind::Error {
            return self.err_at(self.tok.start, &self.lex.error);
        }
        self.err_at(self.tok.start, msg)
    }

    /// Enters one level of nesting; fails past `MAX_DEPTH`.
    pub(crate) fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err(&format!("nesting is deeper than {MAX_DEPTH} levels")));
        }
        Ok(())
    }
    pub(crate) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
    }

    // ---- ops ----

    /// Creates `name` at the end of the current block, moving the blocks of
    /// the scratch `regions` into it.
    pub(crate) fn create(
        &mut self,
        name: &str,
        mut spec: OpSpec,
        regions: Vec<RegionId>,
    ) -> PResult<OpId> {
        let mut keys: Vec<&str> = spec.attrs.iter().map(|(k, _)| k.as_str()).collect();
        keys.sort_unstable();
        if let Some(w) = keys.windows(2).find(|w| w[0] == w[1]) {
            return Err(self.err_at(
                self.op_start,
                &format!("attribute '{}' occurs more than once", w[0]),
            ));
        }
        spec.regions = regions.len();
        let op = self.m.create_op(Sym::intern_text(name), spec);
        for (i, r) in regions.into_iter().enumerate() {
            if let Some(dst) = self.m.region(op, i) {
                self.m.take_blocks(r, dst);
            }
        }
        self.m.insert(op, InsertPoint::End(self.cur_block));
        Ok(op)
    }

    /// `(%results =)? op-form loc?` appended to the current block. The
    /// work before and after the (recursive) op form is in separate
    /// functions to keep this frame small.
    pub(crate) fn parse_operation(&mut self) -> PResult<()> {
        let groups = self.result_groups()?;
        let pos = self.tok.start;
        let saved = std::mem::replace(&mut self.op_start, pos);
        let op = match self.tok.kind {
            Kind::String => self.parse_generic_op()?,
            Kind::BareIdent => super::forms::parse_custom(self)?,
            _ => return Err(self.err("expected operation name")),
        };
        self.op_start = saved;
        self.finish_operation(op, pos, groups)
    }

    /// `%a, %b:2 =` (empty if the op binds no names).
    #[inline(never)]
    fn result_groups(&mut self) -> PResult<Vec<(String, usize, usize)>> {
        let mut groups = Vec::new();
        if !self.is(Kind::PercentId) {
            return Ok(groups);
        }
        loop {
            let (name, at) = self.def_name()?;
            let count = if self.eat_punct(b':') {
                let n = self.uint()?;
                if n == 0 {
                    return Err(
                        self.err_at(at, "expected named result group of at least one value")
                    );
                }
                usize::try_from(n).unwrap_or(usize::MAX)
            } else {
                1
            };
            groups.push((name, count, at));
            if !self.eat_punct(b',') {
                break;
            }
        }
        self.expect_punct(b'=')?;
        Ok(groups)
    }

    /// Trailing location, then binds the result names.
    #[inline(never)]
    fn finish_operation(
        &mut self,
        op: OpId,
        pos: usize,
        groups: Vec<(String, usize, usize)>,
    ) -> PResult<()> {
        let loc = match self.parse_trailing_loc()? {
            Some(l) => l,
            None => self.loc_at(pos),
        };
        self.m.set_loc(op, loc);
        let results = self.m.results(op).to_vec();
        let want: usize = groups.iter().fold(0usize, |a, g| a.saturating_add(g.1));
        if !groups.is_empty() && want != results.len() {
            let msg = format!(
                "operation defines {} results but was provided {want} to bind",
                results.len()
            );
            return Err(self.err_at(pos, &msg));
        }
        let mut start = 0;
        for (name, count, at) in groups {
            let vals = results.get(start..start + count).unwrap_or(&[]).to_vec();
            self.define(&name, &vals, at)?;
            start += count;
        }
        Ok(())
    }

    fn parse_generic_op(&mut self) -> PResult<OpId> {
        let head = self.generic_head()?;
        let mut regions = Vec::new();
        if self.eat_punct(b'(') {
            let isolated = registry::lookup_name(&head.name)
                .is_some_and(|d| d.traits.contains(Traits::ISOLATED));
            loop {
                let r = self.scratch_region();
                self.parse_region(r, None, isolated)?;
                regions.push(r);
                if !self.eat_punct(b',') {
                    break;
                }
            }
            self.expect_punct(b')')?;
        }
        self.generic_tail(head, regions)
    }

    /// `"name"(operands)[successors] <{props}>`.
    #[inline(never)]
    fn generic_head(&mut self) -> PResult<GenericHead> {
        let pos = self.tok.start;
        let name = self.string()?;
        if name.is_empty() {
            return Err(self.err_at(pos, "empty operation name"));
        }
        self.expect_punct(b'(')?;
        let operand_refs = self.operand_list()?;
        self.expect_punct(b')')?;

        // Successors; explicit arguments in brackets are our extension for
        // unregistered branch ops.
        let mut succs: Vec<(BlockId, Option<SuccArgs>)> = Vec::new();
        if self.eat_punct(b'[') {
            loop {
                let block = self.block_ref()?;
                let args = if self.eat_punct(b'(') {
                    let refs = self.operand_list()?;
                    let tys = if refs.is_empty() {
                        Vec::new()
                    } else {
                        self.expect_punct(b':')?;
                        self.type_list()?
                    };
                    self.expect_punct(b')')?;
                    Some((refs, tys))
                } else {
                    None
                };
                succs.push((block, args));
                if !self.eat_punct(b',') {
                    break;
                }
            }
            self.expect_punct(b']')?;
        }
        let mut attrs = Vec::new();
        if self.is_punct(b'<') {
            self.bump();
            self.attr_dict_into(&mut attrs)?;
            self.expect_punct(b'>')?;
        }
        Ok(GenericHead {
            pos,
            name,
            operand_refs,
            succs,
            attrs,
        })
    }

    /// `{attrs} : (T) -> R`, then creates the op.
    #[inline(never)]
    fn generic_tail(&mut self, head: GenericHead, regions: Vec<RegionId>) -> PResult<OpId> {
        let GenericHead {
            pos,
            name,
            operand_refs,
            succs,
            mut attrs,
        } = head;
        if self.is_punct(b'{') {
            self.attr_dict_into(&mut attrs)?;
        }
        self.expect_punct(b':')?;
        let ty_pos = self.tok.start;
        let Type::Function(fty) = self.parse_type()? else {
            return Err(self.err_at(ty_pos, "expected function type"));
        };
        let mut operands = self.resolve_list(&operand_refs, &fty.inputs, ty_pos)?;

        let explicit = succs.iter().any(|s| s.1.is_some());
        let mut successors = Vec::new();
        if explicit || succs.is_empty() {
            for (block, args) in succs {
                let vals = match args {
                    Some((refs, tys)) => self.resolve_list(&refs, &tys, pos)?,
                    None => Vec::new(),
                };
                successors.push((block, vals));
            }
        } else {
            let counts =
                self.successor_split(&name, operands.len(), succs.len(), &mut attrs, pos)?;
            let mut rest = operands.split_off(operands.len() - counts.iter().sum::<usize>());
            for ((block, _), n) in succs.into_iter().zip(counts) {
                let tail = rest.split_off(n.min(rest.len()));
                successors.push((block, std::mem::replace(&mut rest, tail)));
            }
        }
        let spec = OpSpec {
            operands,
            result_types: fty.results.clone(),
            attrs,
            successors,
            ..OpSpec::default()
        };
        self.create(&name, spec, regions)
    }

    /// How many trailing operands of a generic branch op belong to each
    /// successor: `cf.br` passes all, `cf.cond_br` says so in its segments.
    fn successor_split(
        &self,
        name: &str,
        n_operands: usize,
        n_succ: usize,
        attrs: &mut Vec<(Sym, Attribute)>,
        pos: usize,
    ) -> PResult<Vec<usize>> {
        let mut counts = vec![0; n_succ];
        match (CoreOp::from_name(name), n_succ) {
            (Some(CoreOp::Cf(CfOp::Br)), 1) => counts[0] = n_operands,
            (Some(CoreOp::Cf(CfOp::CondBr)), 2) => {
                let seg = attrs
                    .iter()
                    .position(|(k, _)| k.as_str() == "operandSegmentSizes")
                    .ok_or_else(|| {
                        self.err_at(pos, "'cf.cond_br' requires 'operandSegmentSizes'")
                    })?;
                let (_, a) = attrs.remove(seg);
                match a.as_dense_array() {
                    Some(&[c, t, f])
                        if c >= 0
                            && t >= 0
                            && f >= 0
                            && c.checked_add(t).and_then(|x| x.checked_add(f))
                                == i64::try_from(n_operands).ok() =>
                    {
                        counts = vec![t as usize, f as usize];
                    }
                    _ => {
                        return Err(
                            self.err_at(pos, "invalid 'operandSegmentSizes' for 'cf.cond_br'")
                        )
                    }
                }
            }
            _ => {}
        }
        Ok(counts)
    }

    // ---- the file ----

    /// Parses a whole file: a `module {...}` or a bare list of ops.
    pub(crate) fn parse_file(mut self) -> PResult<Module> {
        self.push_scope(true);
        while !self.is(Kind::Eof) {
            match self.tok.kind {
                Kind::HashId | Kind::ExclId => self.parse_alias_def()?,
                _ => self.parse_operation()?,
            }
        }
        self.pop_scope(true)?;
        let mut m = self.m;
        unwrap_single_module(&mut m);
        m.compact();
        Ok(m)
    }

    /// `#name = attr` or `!name = type` at the top level.
    fn parse_alias_def(&mut self) -> PResult<()> {
        let t = self.bump();
        let name = self.lex.text(t).get(1..).unwrap_or("").to_string();
        self.expect_punct(b'=')?;
        if t.kind == Kind::ExclId {
            let ty = self.parse_type()?;
            self.type_aliases.insert(name, ty);
        } else if self.is_keyword("loc") {
            // Location aliases are dropped: ops referring to them get no location.
            self.bump();
            self.expect_punct(b'(')?;
            self.skip_balanced()?;
            self.expect_punct(b')')?;
        } else {
            let a = self.parse_attribute()?;
            self.attr_aliases.insert(name, a);
        }
        Ok(())
    }
}

/// A file holding one `module` op is that module, as in mlir-opt.
fn unwrap_single_module(m: &mut Module) {
    let body = m.body();
    let ops: Vec<OpId> = m.block_ops(body).collect();
    let [only] = ops[..] else { return };
    let single_block = m.regions(only).len() == 1
        && m.region(only, 0).is_some_and(|r| {
            m.region_blocks(r).len() == 1
                && m.entry_block(r).is_some_and(|b| m.block_args(b).is_empty())
        });
    if !m.is(only, BuiltinOp::Module)
        || !m.results(only).is_empty()
        || !m.operands(only).is_empty()
        || !single_block
    {
        return;
    }
    let Some(inner) = m.region(only, 0).and_then(|r| m.entry_block(r)) else {
        return;
    };
    let top = m.top();
    for (k, v) in m.attrs(only).to_vec() {
        m.set_attr(top, k.as_str(), v);
    }
    let loc = m.loc(only).clone();
    m.set_loc(top, loc);
    m.splice_ops(inner, None, body);
    m.erase_op(only);
}
