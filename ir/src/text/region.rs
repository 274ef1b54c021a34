//! Regions and blocks: `{ ^bb0(%a: T): ops ... }`.

use super::lexer::Kind;
use super::parser::{ArgDef, PResult, Parser};
use super::scope::Label;
use crate::module::{BlockId, InsertPoint, OpSpec, RegionId};
use crate::sym::Sym;
use crate::types::Type;

impl<'a> Parser<'a> {
    /// A detached region to parse into before its op exists.
    pub(crate) fn scratch_region(&mut self) -> RegionId {
        let op = self.m.create_op(
            Sym::new("text.scratch"),
            OpSpec {
                regions: 1,
                ..OpSpec::default()
            },
        );
        self.m.regions(op)[0]
    }

    /// Appends an empty `term` op to the last block of `r` unless it already
    /// ends with a terminator (MLIR's implicit `scf.yield`).
    pub(crate) fn ensure_terminator(&mut self, r: RegionId, term: &'static str) {
        let block = match self.m.region_blocks(r).last() {
            Some(&b) => b,
            None => self.m.append_block(r, &[]),
        };
        if self
            .m
            .last_op(block)
            .is_some_and(|o| self.m.is_terminator(o))
        {
            return;
        }
        let t = self.m.create_op(Sym::new(term), OpSpec::default());
        self.m.insert(t, InsertPoint::End(block));
    }

    /// `{ blocks }`. `entry` gives the entry block's arguments when the op
    /// prints them in its header (then the entry block is never labeled).
    pub(crate) fn parse_region(
        &mut self,
        region: RegionId,
        entry: Option<Vec<ArgDef>>,
        isolated: bool,
    ) -> PResult<()> {
        self.expect_punct(b'{')?;
        self.enter()?;
        self.push_scope(isolated);
        if let Some(args) = entry {
            let types: Vec<Type> = args.iter().map(|a| a.ty.clone()).collect();
            let b = self.m.append_block(region, &types);
            let vals = self.m.block_args(b).to_vec();
            for (a, v) in args.iter().zip(vals) {
                self.define(&a.name, &[v], a.pos)?;
            }
            if self.is(Kind::CaretId) {
                return Err(self.err("invalid block name in region with named arguments"));
            }
            self.parse_block_ops(b)?;
        } else if !self.is_punct(b'}') && !self.is(Kind::CaretId) {
            let b = self.m.append_block(region, &[]);
            self.parse_block_ops(b)?;
        }
        while self.is(Kind::CaretId) {
            self.parse_labeled_block(region)?;
        }
        self.expect_punct(b'}')?;
        self.pop_scope(isolated)?;
        self.leave();
        Ok(())
    }

    fn parse_labeled_block(&mut self, region: RegionId) -> PResult<()> {
        let t = self.bump();
        let name = self.lex.text(t);
        let existing = self.labels.last_mut().and_then(|ls| ls.get_mut(name));
        let block = match existing {
            Some(l) => match l.pending.take() {
                Some(scratch) => {
                    let b = l.block;
                    self.m.take_blocks(scratch, region);
                    b
                }
                None => {
                    return Err(self.err_at(t.start, &format!("redefinition of block '{name}'")))
                }
            },
            None => {
                let b = self.m.append_block(region, &[]);
                if let Some(ls) = self.labels.last_mut() {
                    ls.insert(
                        name.to_string(),
                        Label {
                            block: b,
                            pending: None,
                            pos: t.start,
                        },
                    );
                }
                b
            }
        };
        if self.eat_punct(b'(') && !self.eat_punct(b')') {
            loop {
                let a = self.arg_def()?;
                let v = self.m.add_block_arg(block, a.ty);
                self.define(&a.name, &[v], a.pos)?;
                if !self.eat_punct(b',') {
                    break;
                }
            }
            self.expect_punct(b')')?;
        }
        self.expect_punct(b':')?;
        self.parse_block_ops(block)
    }

    /// `%name: type loc(...)?`
    pub(crate) fn arg_def(&mut self) -> PResult<ArgDef> {
        let (name, pos) = self.def_name()?;
        self.expect_punct(b':')?;
        let ty = self.parse_type()?;
        self.parse_trailing_loc()?;
        Ok(ArgDef { name, ty, pos })
    }

    fn parse_block_ops(&mut self, b: BlockId) -> PResult<()> {
        let saved = std::mem::replace(&mut self.cur_block, b);
        while !self.is_punct(b'}') && !self.is(Kind::CaretId) && !self.is(Kind::Eof) {
            self.parse_operation()?;
        }
        self.cur_block = saved;
        Ok(())
    }
}
