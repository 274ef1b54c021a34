//! Typed builders for the ops of buffer deallocation and its lowering:
//! `bufferization.dealloc` / `bufferization.clone`, and the `memref` ops
//! only deallocation makes (`memref.realloc`,
//! `memref.extract_aligned_pointer_as_index`).

use super::Builder;
use crate::dialects::bufferization::segment_attr;
use crate::module::{OpId, OpSpec, ValueId};
use crate::ops::{BufferizationOp, MemrefOp};
use crate::sym::Sym;
use crate::types::Type;

impl Builder<'_> {
    /// `bufferization.dealloc (memrefs) if (conds) retain (retained)`; the
    /// op has one `i1` result per retained value (read them with
    /// `m.results(op)`).
    pub fn bufferization_dealloc(
        &mut self,
        memrefs: &[ValueId],
        conds: &[ValueId],
        retained: &[ValueId],
    ) -> OpId {
        let mut operands = Vec::with_capacity(memrefs.len() + conds.len() + retained.len());
        operands.extend_from_slice(memrefs);
        operands.extend_from_slice(conds);
        operands.extend_from_slice(retained);
        self.create(
            BufferizationOp::Dealloc,
            OpSpec {
                operands,
                result_types: vec![Type::i1(); retained.len()],
                attrs: vec![(
                    Sym::new("operandSegmentSizes"),
                    segment_attr(memrefs.len(), retained.len()),
                )],
                ..OpSpec::default()
            },
        )
    }
    /// `bufferization.clone v : T to ty` (`ty` may differ from `T` in its
    /// layout only).
    pub fn bufferization_clone(&mut self, v: ValueId, ty: Type) -> ValueId {
        self.op1(BufferizationOp::Clone, &[v], ty, &[])
    }
    /// `memref.realloc src (new_size) : T to ty`; `new_size` is the dynamic
    /// size of a `?`-sized result.
    pub fn realloc(&mut self, src: ValueId, new_size: Option<ValueId>, ty: Type) -> ValueId {
        let mut operands = vec![src];
        operands.extend(new_size);
        self.op1(MemrefOp::Realloc, &operands, ty, &[])
    }
    /// `memref.dim m, d` with the index `d` already built (`dim` makes
    /// its own constant).
    pub fn dim_at(&mut self, m: ValueId, d: ValueId) -> ValueId {
        self.op1(MemrefOp::Dim, &[m, d], Type::Index, &[])
    }
    /// `memref.extract_aligned_pointer_as_index m`: the buffer's aligned
    /// base address, to compare buffers at run time.
    pub fn extract_aligned_pointer_as_index(&mut self, m: ValueId) -> ValueId {
        self.op1(
            MemrefOp::ExtractAlignedPointerAsIndex,
            &[m],
            Type::Index,
            &[],
        )
    }
}
