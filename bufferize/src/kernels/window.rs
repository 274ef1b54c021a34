//! Sliding-window geometry shared by Conv and the pools: strides,
//! dilations and begin pads (auto_pad resolved), and the in-bounds input
//! index of an output position plus a kernel offset.

use super::{attr_ints, attr_str};
use crate::loops;
use ir::dialects::op_error;
use ir::{Builder, Module, OpId, Result, ValueId, DYN};

pub struct Window {
    pub kernel: Vec<i64>,
    pub strides: Vec<i64>,
    pub dilations: Vec<i64>,
    pub pad_begin: Vec<i64>,
}

impl Window {
    /// Reads the window attributes for `spatial` dims of `in_shape` (N, C, D...).
    pub fn new(
        m: &Module,
        op: OpId,
        kernel: Vec<i64>,
        in_shape: &[i64],
        out_shape: &[i64],
    ) -> Result<Window> {
        let s = kernel.len();
        let strides = attr_ints(m, op, "strides").unwrap_or_else(|| vec![1; s]);
        let dilations = attr_ints(m, op, "dilations").unwrap_or_else(|| vec![1; s]);
        if strides.len() != s
            || dilations.len() != s
            || in_shape.len() != s + 2
            || out_shape.len() != s + 2
        {
            return Err(op_error(
                m,
                op,
                "strides, dilations and kernel rank must match the spatial rank",
            ));
        }
        let auto_pad = attr_str(m, op, "auto_pad").unwrap_or("NOTSET");
        let pad_begin = match auto_pad {
            "NOTSET" => {
                let pads = attr_ints(m, op, "pads").unwrap_or_else(|| vec![0; 2 * s]);
                if pads.len() != 2 * s {
                    return Err(op_error(
                        m,
                        op,
                        "pads must have two entries per spatial dim",
                    ));
                }
                pads[..s].to_vec()
            }
            "VALID" => vec![0; s],
            "SAME_UPPER" | "SAME_LOWER" => {
                let mut begin = Vec::with_capacity(s);
                for i in 0..s {
                    let (inp, out) = (in_shape[i + 2], out_shape[i + 2]);
                    if inp == DYN || out == DYN {
                        return Err(op_error(m, op, "auto_pad SAME needs static spatial dims"));
                    }
                    let eff = (kernel[i] - 1) * dilations[i] + 1;
                    let total = ((out - 1) * strides[i] + eff - inp).max(0);
                    begin.push(if auto_pad == "SAME_UPPER" {
                        total / 2
                    } else {
                        total - total / 2
                    });
                }
                begin
            }
            other => return Err(op_error(m, op, format!("unknown auto_pad '{other}'"))),
        };
        Ok(Window {
            kernel,
            strides,
            dilations,
            pad_begin,
        })
    }

    /// For output position `o` and kernel offset `k` in spatial dim `i`:
    /// the input index clamped into range and whether it was in range.
    pub fn input_index(
        &self,
        b: &mut Builder<'_>,
        i: usize,
        o: ValueId,
        k: ValueId,
        size: ValueId,
        zero: ValueId,
    ) -> (ValueId, ValueId) {
        let base = loops::scale_add(b, None, o, self.strides[i]);
        let pos = loops::scale_add(b, Some(base), k, self.dilations[i]);
        let pos = if self.pad_begin[i] != 0 {
            let p = b.const_index(self.pad_begin[i]);
            loops::sub(b, pos, p)
        } else {
            pos
        };
        let ge = loops::cmp(b, "sge", pos, zero);
        let lt = loops::cmp(b, "slt", pos, size);
        let ok = loops::and(b, ge, lt);
        let clamped = loops::select(b, ok, pos, zero);
        (clamped, ok)
    }
}
