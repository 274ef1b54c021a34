//! Typed builders for `memref` ops.

use super::Builder;
use crate::attr::Attribute;
use crate::elements::Elements;
use crate::module::{OpId, ValueId};
use crate::ops::MemrefOp;
use crate::types::{Type, DYN};
use std::sync::Arc;

/// A view's offset: a constant, or an index value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewOffset {
    Static(i64),
    Value(ValueId),
}

/// Static offsets, sizes and strides of a view op, with `DYN` where the
/// value is one of the op's operands.
pub struct ViewLayout<'a> {
    pub offsets: &'a [i64],
    pub sizes: &'a [i64],
    pub strides: &'a [i64],
}

/// The operand segment sizes of a view op: the source, then the dynamic
/// offsets, sizes and strides.
fn segments(n: [usize; 4]) -> Attribute {
    let v: Vec<i64> = n.iter().map(|&x| x as i64).collect();
    Attribute::DenseArray(Type::i(32), Arc::from(v.as_slice()))
}

impl Builder<'_> {
    /// `memref.alloc` of `ty` with the sizes of its dynamic dims.
    pub fn alloc(&mut self, ty: &Type, dyn_dims: &[ValueId]) -> ValueId {
        self.op1(MemrefOp::Alloc, dyn_dims, ty.clone(), &[])
    }
    /// `memref.alloc` with an `alignment` in bytes.
    pub fn alloc_aligned(&mut self, ty: &Type, dyn_dims: &[ValueId], align: i64) -> ValueId {
        let attrs = [("alignment", Attribute::i64(align))];
        self.op1(MemrefOp::Alloc, dyn_dims, ty.clone(), &attrs)
    }
    pub fn alloca(&mut self, ty: &Type, dyn_dims: &[ValueId]) -> ValueId {
        self.op1(MemrefOp::Alloca, dyn_dims, ty.clone(), &[])
    }
    pub fn dealloc(&mut self, m: ValueId) {
        self.op(MemrefOp::Dealloc, &[m], &[], &[]);
    }
    /// `memref.load m[idx]`.
    pub fn load(&mut self, m: ValueId, idx: &[ValueId]) -> ValueId {
        let elem = self.m.value_type(m).element_type().clone();
        let mut operands = Vec::with_capacity(idx.len() + 1);
        operands.push(m);
        operands.extend_from_slice(idx);
        self.op1(MemrefOp::Load, &operands, elem, &[])
    }
    /// `memref.store v, m[idx]`.
    pub fn store(&mut self, v: ValueId, m: ValueId, idx: &[ValueId]) {
        let mut operands = Vec::with_capacity(idx.len() + 2);
        operands.extend([v, m]);
        operands.extend_from_slice(idx);
        self.op(MemrefOp::Store, &operands, &[], &[]);
    }
    /// `memref.copy from, to`.
    pub fn copy(&mut self, from: ValueId, to: ValueId) {
        self.op(MemrefOp::Copy, &[from, to], &[], &[]);
    }
    /// `memref.dim m, d` with a constant `d`.
    pub fn dim(&mut self, m: ValueId, d: usize) -> ValueId {
        let i = self.const_index(d as i64);
        self.op1(MemrefOp::Dim, &[m, i], Type::Index, &[])
    }
    /// `memref.cast m : T to ty`.
    pub fn memref_cast(&mut self, m: ValueId, ty: Type) -> ValueId {
        self.op1(MemrefOp::Cast, &[m], ty, &[])
    }
    /// A private constant `memref.global @name : ty = value`, aligned to
    /// `align` bytes.
    pub fn constant_global(&mut self, name: &str, ty: Type, value: Elements, align: i64) -> OpId {
        let attrs = [
            ("sym_name", Attribute::string(name)),
            ("sym_visibility", Attribute::string("private")),
            ("type", Attribute::Type(ty)),
            ("initial_value", Attribute::Elements(value)),
            ("constant", Attribute::Unit),
            ("alignment", Attribute::i64(align)),
        ];
        self.op(MemrefOp::Global, &[], &[], &attrs)
    }
    /// `memref.get_global @name : ty`.
    pub fn get_global(&mut self, name: &str, ty: Type) -> ValueId {
        let attrs = [("name", Attribute::symbol(name))];
        self.op1(MemrefOp::GetGlobal, &[], ty, &attrs)
    }
    /// `memref.subview src[offsets][sizes][strides] : ... to ty`;
    /// `dynamic` holds the offsets then the sizes that are `DYN` in the
    /// layout (strides are static).
    pub fn subview(
        &mut self,
        src: ValueId,
        layout: ViewLayout<'_>,
        n_dyn_offsets: usize,
        dynamic: &[ValueId],
        ty: Type,
    ) -> ValueId {
        let mut operands = Vec::with_capacity(dynamic.len() + 1);
        operands.push(src);
        operands.extend_from_slice(dynamic);
        let n_sizes = dynamic.len().saturating_sub(n_dyn_offsets);
        let attrs = [
            ("static_offsets", Attribute::i64_array(layout.offsets)),
            ("static_sizes", Attribute::i64_array(layout.sizes)),
            ("static_strides", Attribute::i64_array(layout.strides)),
            (
                "operandSegmentSizes",
                segments([1, n_dyn_offsets, n_sizes, 0]),
            ),
        ];
        self.op1(MemrefOp::Subview, &operands, ty, &attrs)
    }
    /// `memref.reinterpret_cast src to offset: [o], sizes, strides` with
    /// the offset `layout.offsets` fixes; `dyn_sizes` and `dyn_strides`
    /// fill the `DYN` entries.
    pub fn reinterpret_cast(
        &mut self,
        src: ValueId,
        layout: ViewLayout<'_>,
        dyn_sizes: &[ValueId],
        dyn_strides: &[ValueId],
        ty: Type,
    ) -> ValueId {
        let offset = match layout.offsets {
            [o] => ViewOffset::Static(*o),
            _ => ViewOffset::Static(0),
        };
        self.reinterpret_cast_with(src, (layout, offset), (dyn_sizes, dyn_strides), ty)
    }
    /// A row-major view of `src`'s memory: shape `shape` (`sizes`, a value
    /// per dim; a dynamic stride is the product of the sizes inside it) of
    /// `elem` at `offset`. Typed as a fresh buffer of that shape at offset
    /// 0 with static strides, else strided.
    pub fn row_major_view(
        &mut self,
        src: ValueId,
        elem: &Type,
        (shape, sizes): (&[i64], &[ValueId]),
        offset: ViewOffset,
    ) -> ValueId {
        let strides = crate::types::identity_strides(shape);
        let dyn_sizes = crate::types::dynamic_sizes(shape, sizes);
        let dyn_strides: Vec<ValueId> = strides
            .iter()
            .enumerate()
            .filter(|(_, &s)| s == DYN)
            .map(|(k, _)| {
                let one = self.const_index(1);
                let inside = sizes.get(k + 1..).unwrap_or(&[]);
                inside.iter().fold(one, |acc, &d| self.muli(acc, d))
            })
            .collect();
        let static_at = match offset {
            ViewOffset::Static(o) => o,
            ViewOffset::Value(_) => DYN,
        };
        let ty = if static_at == 0 && !strides.contains(&DYN) {
            Type::memref(shape.to_vec(), elem.clone())
        } else {
            Type::memref_strided(shape.to_vec(), elem.clone(), static_at, strides.clone())
        };
        let layout = ViewLayout {
            offsets: &[static_at],
            sizes: shape,
            strides: &strides,
        };
        self.reinterpret_cast_with(src, (layout, offset), (&dyn_sizes, &dyn_strides), ty)
    }
    fn reinterpret_cast_with(
        &mut self,
        src: ValueId,
        (layout, offset): (ViewLayout<'_>, ViewOffset),
        (dyn_sizes, dyn_strides): (&[ValueId], &[ValueId]),
        ty: Type,
    ) -> ValueId {
        let mut operands = Vec::with_capacity(2 + dyn_sizes.len() + dyn_strides.len());
        operands.push(src);
        let offsets = match offset {
            ViewOffset::Value(v) => {
                operands.push(v);
                Attribute::i64_array(&[DYN])
            }
            ViewOffset::Static(_) => Attribute::i64_array(layout.offsets),
        };
        operands.extend_from_slice(dyn_sizes);
        operands.extend_from_slice(dyn_strides);
        let n_offsets = usize::from(matches!(offset, ViewOffset::Value(_)));
        let attrs = [
            ("static_offsets", offsets),
            ("static_sizes", Attribute::i64_array(layout.sizes)),
            ("static_strides", Attribute::i64_array(layout.strides)),
            (
                "operandSegmentSizes",
                segments([1, n_offsets, dyn_sizes.len(), dyn_strides.len()]),
            ),
        ];
        self.op1(MemrefOp::ReinterpretCast, &operands, ty, &attrs)
    }
}
