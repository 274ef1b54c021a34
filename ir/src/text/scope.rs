//! SSA value names and block labels while parsing.
//!
//! Names live per isolated-from-above region tree; each region drops the
//! names it defined when it closes. A use before the definition gets a
//! placeholder (the result of a detached op) that the definition replaces;
//! a block referenced before its label waits in a scratch region.

use super::lexer::Kind;
use super::parser::{OperandRef, PResult, Parser};
use crate::module::{BlockId, OpSpec, RegionId, ValueId};
use crate::sym::Sym;
use crate::types::Type;
use std::collections::HashMap;

pub(super) struct Forward {
    index: u32,
    value: ValueId,
    pos: usize,
}

/// The names visible in one isolated-from-above region tree.
#[derive(Default)]
pub(super) struct ValueScope {
    values: HashMap<String, Vec<ValueId>>,
    /// Names defined in each open region, dropped when it closes.
    region_defs: Vec<Vec<String>>,
    forward: HashMap<String, Vec<Forward>>,
}

pub(super) struct Label {
    pub(super) block: BlockId,
    /// Where a referenced but not yet defined block waits.
    pub(super) pending: Option<RegionId>,
    pub(super) pos: usize,
}

impl<'a> Parser<'a> {
    pub(super) fn push_scope(&mut self, isolated: bool) {
        match self.scopes.last_mut() {
            Some(s) if !isolated => s.region_defs.push(Vec::new()),
            _ => self.scopes.push(ValueScope {
                region_defs: vec![Vec::new()],
                ..ValueScope::default()
            }),
        }
        self.labels.push(HashMap::new());
    }

    pub(super) fn pop_scope(&mut self, isolated: bool) -> PResult<()> {
        if let Some(labels) = self.labels.pop() {
            if let Some(l) = labels
                .values()
                .filter(|l| l.pending.is_some())
                .min_by_key(|l| l.pos)
            {
                return Err(self.err_at(l.pos, "reference to an undefined block"));
            }
        }
        let Some(scope) = self.scopes.last_mut() else {
            return Ok(());
        };
        for name in scope.region_defs.pop().unwrap_or_default() {
            scope.values.remove(&name);
        }
        if isolated || scope.region_defs.is_empty() {
            if let Some(scope) = self.scopes.pop() {
                let first = scope
                    .forward
                    .iter()
                    .flat_map(|(n, fs)| fs.iter().map(move |f| (f.pos, n)))
                    .min();
                if let Some((pos, name)) = first {
                    return Err(
                        self.err_at(pos, &format!("use of undeclared SSA value name '%{name}'"))
                    );
                }
            }
        }
        Ok(())
    }

    /// Parses `%name` or `%name#k`.
    pub(crate) fn operand(&mut self) -> PResult<OperandRef> {
        if !self.is(Kind::PercentId) {
            return Err(self.err("expected SSA operand"));
        }
        let t = self.bump();
        let text = self.lex.text(t).get(1..).unwrap_or("");
        let (name, index) = match text.split_once('#') {
            Some((n, k)) => {
                let k = k
                    .parse::<u32>()
                    .map_err(|_| self.err_at(t.start, "invalid result number"))?;
                (n, k)
            }
            None => (text, 0),
        };
        Ok(OperandRef {
            name: name.to_string(),
            index,
            pos: t.start,
        })
    }

    /// Zero or more comma-separated operands.
    pub(crate) fn operand_list(&mut self) -> PResult<Vec<OperandRef>> {
        let mut out = Vec::new();
        if !self.is(Kind::PercentId) {
            return Ok(out);
        }
        loop {
            out.push(self.operand()?);
            if !self.eat_punct(b',') {
                return Ok(out);
            }
        }
    }

    pub(crate) fn resolve(&mut self, r: &OperandRef, ty: &Type) -> PResult<ValueId> {
        let Some(scope) = self.scopes.last() else {
            return Err(self.err_at(r.pos, "value used outside of any region"));
        };
        let found = match scope.values.get(&r.name) {
            Some(group) => match group.get(r.index as usize) {
                Some(&v) => Some(v),
                None => return Err(self.err_at(r.pos, "reference to invalid result number")),
            },
            None => scope
                .forward
                .get(&r.name)
                .and_then(|fs| fs.iter().find(|f| f.index == r.index))
                .map(|f| f.value),
        };
        if let Some(v) = found {
            let have = self.m.value_type(v);
            if have != ty {
                return Err(self.err_at(
                    r.pos,
                    &format!("use of value '%{}' expects different type than prior uses: '{ty}' vs '{have}'", r.name),
                ));
            }
            return Ok(v);
        }
        let ph = self.m.create_op(
            Sym::new("text.forward_ref"),
            OpSpec {
                result_types: vec![ty.clone()],
                ..OpSpec::default()
            },
        );
        let v = self.m.results(ph)[0];
        if let Some(scope) = self.scopes.last_mut() {
            scope
                .forward
                .entry(r.name.clone())
                .or_default()
                .push(Forward {
                    index: r.index,
                    value: v,
                    pos: r.pos,
                });
        }
        Ok(v)
    }

    /// Resolves `refs` against `types` (same count, else an error at `pos`).
    pub(crate) fn resolve_list(
        &mut self,
        refs: &[OperandRef],
        types: &[Type],
        pos: usize,
    ) -> PResult<Vec<ValueId>> {
        if refs.len() != types.len() {
            return Err(self.err_at(
                pos,
                &format!(
                    "{} operands present, but expected {} types",
                    refs.len(),
                    types.len()
                ),
            ));
        }
        refs.iter()
            .zip(types)
            .map(|(r, t)| self.resolve(r, t))
            .collect()
    }

    /// Resolves all of `refs` to one type.
    pub(crate) fn resolve_all(&mut self, refs: &[OperandRef], ty: &Type) -> PResult<Vec<ValueId>> {
        refs.iter().map(|r| self.resolve(r, ty)).collect()
    }

    /// Binds `name` to a group of values in the innermost region.
    pub(crate) fn define(&mut self, name: &str, vals: &[ValueId], pos: usize) -> PResult<()> {
        let Some(scope) = self.scopes.last_mut() else {
            return Err(self.err_at(pos, "definition outside of any region"));
        };
        if scope.values.contains_key(name) {
            return Err(self.err_at(pos, &format!("redefinition of SSA value '%{name}'")));
        }
        let fwds = scope.forward.remove(name).unwrap_or_default();
        scope.values.insert(name.to_string(), vals.to_vec());
        if let Some(defs) = scope.region_defs.last_mut() {
            defs.push(name.to_string());
        }
        for f in fwds {
            let Some(&v) = vals.get(f.index as usize) else {
                return Err(self.err_at(f.pos, "reference to invalid result number"));
            };
            let (used, def) = (self.m.value_type(f.value), self.m.value_type(v));
            if used != def {
                return Err(self.err_at(
                    f.pos,
                    &format!(
                        "use of value '%{name}' expects type '{used}' but it is defined as '{def}'"
                    ),
                ));
            }
            self.m.replace_all_uses(f.value, v);
        }
        Ok(())
    }

    /// A reference to a block of the innermost region, defined or not yet.
    pub(crate) fn block_ref(&mut self) -> PResult<BlockId> {
        if !self.is(Kind::CaretId) {
            return Err(self.err("expected block name"));
        }
        let t = self.bump();
        let name = self.lex.text(t);
        if let Some(l) = self.labels.last().and_then(|ls| ls.get(name)) {
            return Ok(l.block);
        }
        let r = self.scratch_region();
        let block = self.m.append_block(r, &[]);
        let Some(labels) = self.labels.last_mut() else {
            return Err(self.err_at(t.start, "block reference outside of a region"));
        };
        labels.insert(
            name.to_string(),
            Label {
                block,
                pending: Some(r),
                pos: t.start,
            },
        );
        Ok(block)
    }

    /// A `%name` being defined (no `#k` suffix).
    pub(crate) fn def_name(&mut self) -> PResult<(String, usize)> {
        let t = self.tok;
        let r = self.operand()?;
        if self.lex.text(t).contains('#') {
            return Err(self.err_at(t.start, "expected a name without '#' suffix"));
        }
        Ok((r.name, r.pos))
    }
}
