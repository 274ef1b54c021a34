//! MatMulNBits (onnxruntime's `com.microsoft` op of int4/int8 language
//! models): `Y[.., n] = bias[n] + Σ_k A[.., k] · W[n, k]`, where
//! `W[n, k] = (q[n, k] - zp[n, b]) · scale[n, b]` for the block `b = k /
//! block_size`, and `q` are `bits`-bit codes packed low bits first in
//! `B [N, ⌈K / block_size⌉, block_size · bits / 8]`.
//!
//! Never a dequantized copy of the weights: each block is dequantized in
//! registers as the dot product reads it. Per block the kernel sums
//! `q · a` and `a`, then adds `scale · (Σ q·a - zp · Σ a)`, so a zero
//! point costs one multiply per block. Zero points are absent (the code
//! midpoint), packed codes like `q` (`uint8`), or values of A's type.

use super::{alloc_result, checks, elem_of};
use crate::convert::{dims, Lowering};
use crate::loops::{loop_nest_by_work, reduce_nest, Bounds, GEMM_MIN_WORK};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId};
use onnx::ops;

/// The attributes, checked, and what follows from them.
struct Layout {
    k: i64,
    n: i64,
    bits: i64,
    block: i64,
    /// Blocks per row: ⌈K / block⌉.
    blocks: i64,
    /// Bytes per block of codes.
    blob: i64,
}

fn layout(b: &Builder<'_>, op: OpId) -> Result<Layout> {
    let v = ops::MatMulNBits::of(b.m, op);
    let (k, n, bits, block) = (v.k(), v.n(), v.bits(), v.block_size());
    let err = |msg: String| Err(op_error(b.m, op, msg));
    if !matches!(bits, 2 | 4 | 8) {
        return err(format!("bits must be 2, 4 or 8, not {bits}"));
    }
    if block < 16 || block.count_ones() != 1 {
        return err(format!(
            "block_size must be a power of two of at least 16, not {block}"
        ));
    }
    if k < 1 || n < 1 {
        return err(format!("K and N must be positive (K = {k}, N = {n})"));
    }
    let blocks = (k + block - 1) / block;
    Ok(Layout {
        k,
        n,
        bits,
        block,
        blocks,
        blob: block * bits / 8,
    })
}

/// The operands, with their dims checked against the attributes at run
/// time (a mismatch would read out of bounds).
struct Operands {
    a: ValueId,
    codes: ValueId,
    scales: ValueId,
    zero_points: Option<ValueId>,
    bias: Option<ValueId>,
}

fn operands(cx: &Lowering, b: &mut Builder<'_>, op: OpId, l: &Layout) -> Result<Operands> {
    let m = &*b.m;
    let o = Operands {
        a: cx.input(m, op, 0)?,
        codes: cx.input(m, op, 1)?,
        scales: cx.input(m, op, 2)?,
        zero_points: cx.optional_input(m, op, 3)?,
        bias: cx.optional_input(m, op, 5)?,
    };
    if cx.optional_input(m, op, 4)?.is_some() {
        return Err(op_error(
            m,
            op,
            "g_idx (act-order block indices) is not supported",
        ));
    }
    let zp_len = match o.zero_points.map(|z| elem_of(m, z)) {
        Some(t) if t.is_float() => Some(l.n * l.blocks),
        Some(t) if t == Type::i(8) || t == Type::ui(8) => Some(l.n * ((l.blocks * l.bits + 7) / 8)),
        Some(t) => return Err(op_error(m, op, format!("zero_points of type {t}"))),
        None => None,
    };
    let expect = |b: &mut Builder<'_>, v: ValueId, want: &[i64], what: &str| -> Result<()> {
        let have = dims(b, v);
        if have.len() != want.len() {
            return Err(op_error(
                b.m,
                op,
                format!("{what} must have rank {}", want.len()),
            ));
        }
        for (&d, &w) in have.iter().zip(want) {
            let w = b.const_index(w);
            checks::equal(
                b,
                op,
                d,
                w,
                &format!("{what} does not match K, N and block_size"),
            )?;
        }
        Ok(())
    };
    let total = |b: &mut Builder<'_>, v: ValueId, want: i64, what: &str| -> Result<()> {
        let n = dims(b, v).into_iter().reduce(|x, y| b.muli(x, y));
        let w = b.const_index(want);
        let n = n.unwrap_or_else(|| b.const_index(1));
        checks::equal(
            b,
            op,
            n,
            w,
            &format!("{what} does not match N and the blocks"),
        )
    };
    expect(b, o.codes, &[l.n, l.blocks, l.blob], "B")?;
    total(b, o.scales, l.n * l.blocks, "scales")?;
    if let (Some(z), Some(len)) = (o.zero_points, zp_len) {
        total(b, z, len, "zero_points")?;
    }
    if let Some(bias) = o.bias {
        expect(b, bias, &[l.n], "bias")?;
    }
    let da = dims(b, o.a);
    let Some(&last) = da.last() else {
        return Err(op_error(b.m, op, "A must have rank >= 1"));
    };
    let k = b.const_index(l.k);
    checks::equal(b, op, last, k, "the last dim of A must be K")?;
    Ok(o)
}

/// Element `flat` of `v` read as a flat array whatever its rank.
fn load_flat(b: &mut Builder<'_>, v: ValueId, flat: ValueId) -> ValueId {
    let ds = dims(b, v);
    let mut idx = vec![flat; ds.len()];
    let mut rest = flat;
    for i in (0..ds.len()).rev() {
        if i == 0 {
            idx[0] = rest;
        } else {
            idx[i] = b.remui(rest, ds[i]);
            rest = b.divui(rest, ds[i]);
        }
    }
    b.load(v, &idx)
}

/// Code number `at` of a packed run of `bits`-bit codes starting at byte
/// `base` of the flat view of `v` (`u8` codes), as an f32.
fn code(b: &mut Builder<'_>, v: ValueId, base: ValueId, at: ValueId, bits: i64) -> ValueId {
    let per_byte = b.const_index(8 / bits);
    let byte_at = b.divui(at, per_byte);
    let byte_at = b.addi(base, byte_at);
    let byte = load_flat(b, v, byte_at);
    let byte = b.extui(byte, Type::i(32));
    let q = if bits == 8 {
        byte
    } else {
        let slot = b.remui(at, per_byte);
        let slot = b.index_cast(slot, Type::i(32));
        let width = b.const_int(bits, Type::i(32));
        let shift = b.muli(slot, width);
        let shifted = b.shrui(byte, shift);
        let mask = b.const_int((1 << bits) - 1, Type::i(32));
        b.andi(shifted, mask)
    };
    b.uitofp(q, Type::f32())
}

/// The zero point of block `blk` of row `n`, as an f32.
fn zero_point(b: &mut Builder<'_>, o: &Operands, l: &Layout, n: ValueId, blk: ValueId) -> ValueId {
    let Some(z) = o.zero_points else {
        return b.const_float(f64::from(1u32 << (l.bits - 1)), Type::f32());
    };
    if elem_of(b.m, z).is_float() {
        let per_row = b.const_index(l.blocks);
        let row = b.muli(n, per_row);
        let at = b.addi(row, blk);
        let v = load_flat(b, z, at);
        return super::scalar::fcast(b, v, &Type::f32());
    }
    let row_bytes = b.const_index((l.blocks * l.bits + 7) / 8);
    let base = b.muli(n, row_bytes);
    code(b, z, base, blk, l.bits)
}

pub fn matmul_nbits(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let l = layout(b, op)?;
    let o = operands(cx, b, op, &l)?;
    let elem = elem_of(b.m, o.a);
    let da = dims(b, o.a);
    let lead = &da[..da.len() - 1];
    let n_v = b.const_index(l.n);
    let mut out_dims = lead.to_vec();
    out_dims.push(n_v);
    let out = alloc_result(b, op, 0, &out_dims)?;
    let bounds = Bounds::new(b);
    // Output columns outermost: the parallel loop when there is work (a
    // decode step's one row still splits over N).
    let mut ubs = vec![n_v];
    ubs.extend_from_slice(lead);
    let k_v = b.const_index(l.k);
    let mut work = ubs.clone();
    work.push(k_v);
    loop_nest_by_work(b, &bounds, &ubs, &work, GEMM_MIN_WORK, &mut |b, ivs| {
        let n = ivs[0];
        let row = &ivs[1..];
        let zero = b.const_float(0.0, Type::f32());
        let init = match o.bias {
            Some(bias) => {
                let v = b.load(bias, &[n]);
                super::scalar::fcast(b, v, &Type::f32())
            }
            None => zero,
        };
        let blocks = b.const_index(l.blocks);
        let acc = reduce_nest(b, &bounds, &[blocks], init, &mut |b, blk, acc| {
            block_dot(b, &o, &l, (n, blk[0], row), acc)
        });
        let y = super::scalar::fcast(b, acc, &elem);
        let mut at = row.to_vec();
        at.push(n);
        b.store(y, out, &at);
    });
    Ok(vec![out])
}

/// `acc + scale · (Σ q·a - zp · Σ a)` over block `blk` of row `n` of the
/// weights and the row `row` of A.
fn block_dot(
    b: &mut Builder<'_>,
    o: &Operands,
    l: &Layout,
    (n, blk, row): (ValueId, ValueId, &[ValueId]),
    acc: ValueId,
) -> ValueId {
    let block = b.const_index(l.block);
    let start = b.muli(blk, block);
    // The last block may be partial: K need not be a multiple.
    let k_v = b.const_index(l.k);
    let remaining = b.subi(k_v, start);
    let len = b.minui(remaining, block);
    let row_blocks = b.const_index(l.blocks);
    let blob = b.const_index(l.blob);
    let block_at = b.muli(n, row_blocks);
    let block_at = b.addi(block_at, blk);
    let base = b.muli(block_at, blob);
    let zero = b.const_float(0.0, Type::f32());
    let (one, lo) = (b.const_index(1), b.const_index(0));
    let lp = b.scf_for(lo, len, one, &[zero, zero], |b, j, sums| {
        let q = code(b, o.codes, base, j, l.bits);
        let k = b.addi(start, j);
        let mut at = row.to_vec();
        at.push(k);
        let a = b.load(o.a, &at);
        let a = super::scalar::fcast(b, a, &Type::f32());
        let qa = b.fma(q, a, sums[0]);
        let sa = b.add(sums[1], a);
        vec![qa, sa]
    });
    let (qa, sa) = (b.m.results(lp)[0], b.m.results(lp)[1]);
    let zp = zero_point(b, o, l, n, blk);
    let at = b.muli(n, row_blocks);
    let at = b.addi(at, blk);
    let scale = load_flat(b, o.scales, at);
    let scale = super::scalar::fcast(b, scale, &Type::f32());
    let shifted = b.mul(zp, sa);
    let dot = b.sub(qa, shifted);
    b.fma(scale, dot, acc)
}
