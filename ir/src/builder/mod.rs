//! Builder: creates ops at an insertion point that advances past each new op.

use crate::attr::Attribute;
use crate::diag::Location;
use crate::module::{BlockId, InsertPoint, Module, OpId, OpSpec, ValueId};
use crate::ops::{ArithOp, FuncOp, ScfOp};
use crate::sym::Sym;
use crate::types::Type;

pub struct Builder<'m> {
    pub m: &'m mut Module,
    ip: InsertPoint,
    pub loc: Location,
}

impl<'m> Builder<'m> {
    pub fn new(m: &'m mut Module, ip: InsertPoint) -> Builder<'m> {
        Builder {
            m,
            ip,
            loc: Location::Unknown,
        }
    }
    pub fn at_end(m: &'m mut Module, b: BlockId) -> Builder<'m> {
        Builder::new(m, InsertPoint::End(b))
    }
    pub fn ip(&self) -> InsertPoint {
        self.ip
    }
    pub fn set_ip(&mut self, ip: InsertPoint) {
        self.ip = ip;
    }
    /// The block ops are placed in.
    pub fn block(&self) -> Option<BlockId> {
        match self.ip {
            InsertPoint::End(blk) | InsertPoint::Start(blk) => Some(blk),
            InsertPoint::Before(o) | InsertPoint::After(o) => self.m.op_block(o),
        }
    }
    pub fn with_loc(mut self, loc: Location) -> Self {
        self.loc = loc;
        self
    }

    /// Creates an op from a full spec and places it at the insertion point.
    pub fn create(&mut self, name: impl Into<Sym>, mut spec: OpSpec) -> OpId {
        if !spec.loc.is_known() {
            spec.loc = self.loc.clone();
        }
        let op = self.m.create_op(name.into(), spec);
        self.m.insert(op, self.ip);
        if let InsertPoint::Start(_) | InsertPoint::After(_) = self.ip {
            self.ip = InsertPoint::After(op);
        }
        op
    }

    pub fn op(
        &mut self,
        name: impl Into<Sym>,
        operands: &[ValueId],
        results: &[Type],
        attrs: &[(&'static str, Attribute)],
    ) -> OpId {
        self.create(
            name,
            OpSpec {
                operands: operands.to_vec(),
                result_types: results.to_vec(),
                attrs: attrs
                    .iter()
                    .map(|(k, v)| (Sym::new(k), v.clone()))
                    .collect(),
                ..OpSpec::default()
            },
        )
    }

    /// An op with exactly one result; returns that result.
    pub fn op1(
        &mut self,
        name: impl Into<Sym>,
        operands: &[ValueId],
        result: Type,
        attrs: &[(&'static str, Attribute)],
    ) -> ValueId {
        let op = self.op(name, operands, &[result], attrs);
        self.m.results(op)[0]
    }

    /// `op` on operands of one type, result of that type.
    pub fn same(&mut self, name: impl Into<Sym>, operands: &[ValueId]) -> ValueId {
        let ty = operands
            .first()
            .map_or(Type::None, |&v| self.m.value_type(v).clone());
        self.op1(name, operands, ty, &[])
    }

    pub fn const_index(&mut self, v: i64) -> ValueId {
        self.op1(
            ArithOp::Constant,
            &[],
            Type::Index,
            &[("value", Attribute::index(v))],
        )
    }
    pub fn const_int(&mut self, v: i64, ty: Type) -> ValueId {
        self.op1(
            ArithOp::Constant,
            &[],
            ty.clone(),
            &[("value", Attribute::Int(v, ty))],
        )
    }
    pub fn const_float(&mut self, v: f64, ty: Type) -> ValueId {
        self.op1(
            ArithOp::Constant,
            &[],
            ty.clone(),
            &[("value", Attribute::Float(v, ty))],
        )
    }
    pub fn const_bool(&mut self, v: bool) -> ValueId {
        self.const_int(i64::from(v), Type::i1())
    }

    /// A `func.func` with an entry block; returns the op and the entry block.
    pub fn func(&mut self, name: &str, inputs: Vec<Type>, results: Vec<Type>) -> (OpId, BlockId) {
        let fty = Type::function(inputs.clone(), results);
        let f = self.create(
            FuncOp::Func,
            OpSpec {
                attrs: vec![
                    (Sym::new("sym_name"), Attribute::string(name)),
                    (Sym::new("function_type"), Attribute::Type(fty)),
                ],
                regions: 1,
                ..OpSpec::default()
            },
        );
        let r = self.m.regions(f)[0];
        let entry = self.m.append_block(r, &inputs);
        (f, entry)
    }

    /// `scf.for %iv = lb to ub step s iter_args(inits)`; `body` builds the
    /// loop body and returns the values to yield.
    pub fn scf_for(
        &mut self,
        lb: ValueId,
        ub: ValueId,
        step: ValueId,
        inits: &[ValueId],
        body: impl FnOnce(&mut Builder<'_>, ValueId, &[ValueId]) -> Vec<ValueId>,
    ) -> OpId {
        let types: Vec<Type> = inits
            .iter()
            .map(|&v| self.m.value_type(v).clone())
            .collect();
        let mut operands = vec![lb, ub, step];
        operands.extend_from_slice(inits);
        let iv_ty = self.m.value_type(lb).clone();
        let op = self.create(
            ScfOp::For,
            OpSpec {
                operands,
                result_types: types.clone(),
                regions: 1,
                ..OpSpec::default()
            },
        );
        let r = self.m.regions(op)[0];
        let mut arg_types = vec![iv_ty];
        arg_types.extend(types);
        let b = self.m.append_block(r, &arg_types);
        let args: Vec<ValueId> = self.m.block_args(b).to_vec();
        let mut inner = Builder::at_end(self.m, b);
        inner.loc = self.loc.clone();
        let yields = body(&mut inner, args[0], &args[1..]);
        inner.op(ScfOp::Yield, &yields, &[], &[]);
        op
    }

    pub fn ret(&mut self, values: &[ValueId]) -> OpId {
        self.op(FuncOp::Return, values, &[], &[])
    }
}

mod arith;
mod control;
mod dealloc;
mod memref;
mod vector;

pub use arith::{is_unsigned, Cmp, CmpF, CmpI};
pub use control::{RegionFn, WhileBodyFn, WhileCondFn};
pub use memref::{ViewLayout, ViewOffset};
pub use vector::Reduce;
