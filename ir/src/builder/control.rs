//! Typed builders for `scf`, `cf` and `func` ops with regions or
//! successors.

use super::Builder;
use crate::attr::Attribute;
use crate::module::{BlockId, OpId, OpSpec, ValueId};
use crate::ops::{CfOp, FuncOp, ScfOp};
use crate::sym::Sym;
use crate::types::Type;

/// Builds one region's body and returns the values to yield.
pub type RegionFn<'a> = &'a mut dyn FnMut(&mut Builder<'_>) -> Vec<ValueId>;
/// Builds the `before` region of `scf.while` from the carried values and
/// returns the condition and the values passed on.
pub type WhileCondFn<'a> =
    &'a mut dyn FnMut(&mut Builder<'_>, &[ValueId]) -> (ValueId, Vec<ValueId>);
/// Builds the `after` region of `scf.while` and returns the next values.
pub type WhileBodyFn<'a> = &'a mut dyn FnMut(&mut Builder<'_>, &[ValueId]) -> Vec<ValueId>;

impl Builder<'_> {
    /// `scf.if cond -> (result_types)`: `then` and `els` build each branch
    /// and return the values to yield (`els` is required when there are
    /// results; without results and without `els` the else region stays
    /// empty).
    pub fn scf_if(
        &mut self,
        cond: ValueId,
        result_types: &[Type],
        then: RegionFn<'_>,
        els: Option<RegionFn<'_>>,
    ) -> OpId {
        let op = self.create(
            ScfOp::If,
            OpSpec {
                operands: vec![cond],
                result_types: result_types.to_vec(),
                regions: 2,
                ..OpSpec::default()
            },
        );
        let regions = self.m.regions(op).to_vec();
        let loc = self.m.loc(op).clone();
        let blk = self.m.append_block(regions[0], &[]);
        let mut inner = Builder::at_end(self.m, blk).with_loc(loc.clone());
        let ys = then(&mut inner);
        inner.scf_yield(&ys);
        if let Some(els) = els {
            let blk = self.m.append_block(regions[1], &[]);
            let mut inner = Builder::at_end(self.m, blk).with_loc(loc);
            let ys = els(&mut inner);
            inner.scf_yield(&ys);
        }
        op
    }

    /// `scf.while (inits)`: `before` gets the carried values and returns
    /// `(condition, values passed on)`; `after` gets those and returns the
    /// next carried values. The result types are the inits' types.
    pub fn scf_while(
        &mut self,
        inits: &[ValueId],
        before: WhileCondFn<'_>,
        after: WhileBodyFn<'_>,
    ) -> OpId {
        let types: Vec<Type> = inits
            .iter()
            .map(|&v| self.m.value_type(v).clone())
            .collect();
        let op = self.create(
            ScfOp::While,
            OpSpec {
                operands: inits.to_vec(),
                result_types: types.clone(),
                regions: 2,
                ..OpSpec::default()
            },
        );
        let regions = self.m.regions(op).to_vec();
        let loc = self.m.loc(op).clone();
        let blk = self.m.append_block(regions[0], &types);
        let args = self.m.block_args(blk).to_vec();
        let mut inner = Builder::at_end(self.m, blk).with_loc(loc.clone());
        let (cond, passed) = before(&mut inner, &args);
        inner.scf_condition(cond, &passed);
        let passed_types: Vec<Type> = passed
            .iter()
            .map(|&v| self.m.value_type(v).clone())
            .collect();
        let blk = self.m.append_block(regions[1], &passed_types);
        let args = self.m.block_args(blk).to_vec();
        let mut inner = Builder::at_end(self.m, blk).with_loc(loc);
        let next = after(&mut inner, &args);
        inner.scf_yield(&next);
        op
    }

    pub fn scf_yield(&mut self, values: &[ValueId]) -> OpId {
        self.op(ScfOp::Yield, values, &[], &[])
    }
    pub fn scf_condition(&mut self, cond: ValueId, passed: &[ValueId]) -> OpId {
        let mut operands = Vec::with_capacity(passed.len() + 1);
        operands.push(cond);
        operands.extend_from_slice(passed);
        self.op(ScfOp::Condition, &operands, &[], &[])
    }

    /// `cf.assert cond, "msg"`.
    pub fn cf_assert(&mut self, cond: ValueId, msg: &str) -> OpId {
        self.create(
            CfOp::Assert,
            OpSpec {
                operands: vec![cond],
                attrs: vec![(Sym::new("msg"), Attribute::string(msg))],
                ..OpSpec::default()
            },
        )
    }
    /// `cf.br ^dest(args)`.
    pub fn br(&mut self, dest: BlockId, args: &[ValueId]) -> OpId {
        self.create(
            CfOp::Br,
            OpSpec {
                successors: vec![(dest, args.to_vec())],
                ..OpSpec::default()
            },
        )
    }
    /// `cf.cond_br cond, ^t(targs), ^f(fargs)`.
    pub fn cond_br(
        &mut self,
        cond: ValueId,
        t: (BlockId, &[ValueId]),
        f: (BlockId, &[ValueId]),
    ) -> OpId {
        self.create(
            CfOp::CondBr,
            OpSpec {
                operands: vec![cond],
                successors: vec![(t.0, t.1.to_vec()), (f.0, f.1.to_vec())],
                ..OpSpec::default()
            },
        )
    }

    /// `scf.for %iv = lb to ub step s` marked parallel (see
    /// [`crate::dialects::scf::PARALLEL`]): the caller promises that the
    /// iterations write disjoint memory and share no scratch buffer.
    pub fn scf_parallel_for(
        &mut self,
        lb: ValueId,
        ub: ValueId,
        step: ValueId,
        body: impl FnOnce(&mut Builder<'_>, ValueId),
    ) -> OpId {
        let op = self.scf_for(lb, ub, step, &[], |b, iv, _| {
            body(b, iv);
            Vec::new()
        });
        self.m
            .set_attr(op, crate::dialects::scf::PARALLEL, Attribute::Unit);
        op
    }

    /// The number of threads a parallel loop started here would get
    /// (`func.call @__onnxc_num_threads()`, declared on first use).
    pub fn num_threads(&mut self) -> ValueId {
        self.runtime_query(crate::dialects::scf::NUM_THREADS_FN)
    }

    /// The x86-64 level of the running CPU (`func.call
    /// @__onnxc_cpu_level()`, declared on first use).
    pub fn cpu_level(&mut self) -> ValueId {
        self.runtime_query(crate::dialects::func::CPU_LEVEL_FN)
    }

    /// Calls the first of `variants` (x86-64 level, function; highest
    /// level first) whose level the running CPU has, the last one
    /// otherwise, with `args`.
    pub fn call_for_cpu_level(&mut self, variants: &[(i64, String)], args: &[ValueId]) {
        let have = match variants.len() {
            0 | 1 => None,
            _ => Some(self.cpu_level()),
        };
        self.call_at_level(have, variants, args);
    }

    fn call_at_level(
        &mut self,
        have: Option<ValueId>,
        variants: &[(i64, String)],
        args: &[ValueId],
    ) {
        let Some(((level, name), rest)) = variants.split_first() else {
            return;
        };
        let Some(have) = have.filter(|_| !rest.is_empty()) else {
            self.call(name, args, &[]);
            return;
        };
        let need = self.const_index(*level);
        let fits = self.cmp(super::Cmp::Ge, have, need);
        self.scf_if(
            fits,
            &[],
            &mut |b| {
                b.call(name, args, &[]);
                Vec::new()
            },
            Some(&mut |b| {
                b.call_at_level(Some(have), rest, args);
                Vec::new()
            }),
        );
    }

    /// A call of the `() -> index` function `name` the LLVM emitter
    /// defines, declared on first use.
    fn runtime_query(&mut self, name: &str) -> ValueId {
        if self.m.lookup_symbol(name).is_none() {
            // A declaration: a `func.func` with an empty region.
            let body = self.m.body();
            let fty = Type::function(vec![], vec![Type::Index]);
            let mut top = Builder::new(self.m, crate::module::InsertPoint::Start(body));
            top.create(
                FuncOp::Func,
                OpSpec {
                    attrs: vec![
                        (Sym::new("sym_name"), Attribute::string(name)),
                        (Sym::new("function_type"), Attribute::Type(fty)),
                        (Sym::new("sym_visibility"), Attribute::string("private")),
                    ],
                    regions: 1,
                    ..OpSpec::default()
                },
            );
        }
        self.call(name, &[], &[Type::Index])[0]
    }

    /// `func.call @callee(args) : (...) -> results`; returns the results.
    pub fn call(&mut self, callee: &str, args: &[ValueId], results: &[Type]) -> Vec<ValueId> {
        let attrs = [("callee", Attribute::symbol(callee))];
        let op = self.op(FuncOp::Call, args, results, &attrs);
        self.m.results(op).to_vec()
    }
}
