//! The int8 GEMM of MatMulInteger and QLinearMatMul against constant
//! weights: `Y[m, n] = Σ_k (A[m, k] - za) · (B[k, n] - zb[n])` with A's
//! rows (u8 or s8) read in place and B packed at compile time, summed in
//! i32 by byte dot products (`vpdpbusd` where the target has VNNI), then
//! stored as i32 or requantized to 8 bits.
//!
//! The dot product multiplies unsigned bytes by signed ones, so A is
//! taken as unsigned and B as signed: an s8 A is shifted by +128 on the
//! fly (one xor per broadcast), a u8 B by -128 when packed. With the
//! shifted operands A', B' and their zero points α = za + 128·[A s8],
//! β = zb - 128·[B u8]:
//!
//! `Y = Σ A'B' - α·colsum(B') + β·(K·α - rowsum(A'))`
//!
//! colsum(B') is a compile-time constant; rowsum(A') is summed beside the
//! products, only when some β is non-zero (symmetric s8 weights have none).
//!
//! Layout of packed B: panels of NR columns; per panel, per quad of
//! depth (K rounded up to 4), the NR columns' four bytes (one i32 lane
//! each), zero past K and N.

pub mod conv;
mod micro;
pub mod ops;

use crate::kernels::linalg::gemm::{flat, split};
use crate::kernels::support::index::product;
use ir::builder::Cmp;
use ir::dialects::func;
use ir::{Builder, Type, ValueId};

/// Operand positions of an int8 op: the runtime operand and the constant
/// weights, each with its zero point.
pub(crate) struct Slots {
    data: usize,
    data_zp: usize,
    weights: usize,
    weights_zp: usize,
}

/// How the sums leave the kernel.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum QOut {
    /// i32 sums (MatMulInteger).
    I32,
    /// `saturate(round_even(sum · sa·sb[n] / sy) + zy)` as `elem`
    /// (QLinearMatMul), the scale in f32.
    Requant { elem: Type },
}

/// The static shape of one int8 GEMM function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct QVariant {
    /// A's elements are signed.
    pub a_signed: bool,
    pub k: i64,
    pub n: i64,
    /// Some β is non-zero: rowsum(A') is needed.
    pub row_sums: bool,
    pub out: QOut,
    /// i32 lanes per vector.
    pub vw: i64,
    pub mr: i64,
    pub nv: i64,
    /// `x86vector.vpdpbusd` exists; else the dot is widened arithmetic.
    pub vnni: bool,
}

impl QVariant {
    pub fn new(vector_bits: u32, vnni: bool, (k, n): (i64, i64), a_signed: bool) -> QVariant {
        let vw = i64::from(vector_bits / 32).max(4);
        // Accumulators + B vectors + a broadcast fit the register file.
        let (mr, nv) = if vector_bits >= 512 { (8, 3) } else { (4, 2) };
        QVariant {
            a_signed,
            k,
            n,
            row_sums: false,
            out: QOut::I32,
            vw,
            mr,
            nv,
            vnni,
        }
    }
    pub fn nr(&self) -> i64 {
        self.vw * self.nv
    }
    /// The VNNI variant at 512 bits over the same packed B (the same NR:
    /// one 16-lane vector per 16 columns) and eight rows.
    fn with_vnni(&self) -> QVariant {
        let lanes = i64::from(func::X86_VNNI.vector_bits / 32);
        let (vw, nv, mr) = match self.nr() % lanes {
            0 => (lanes, self.nr() / lanes, 8),
            _ => (self.vw, self.nv, self.mr),
        };
        QVariant {
            vnni: true,
            vw,
            nv,
            mr,
            ..self.clone()
        }
    }
    /// Depth quads (K rounded up to 4, over 4).
    pub fn quads(&self) -> i64 {
        (self.k + 3) / 4
    }
    pub fn panels(&self) -> i64 {
        (self.n + self.nr() - 1) / self.nr()
    }
    /// The row tile: fewer rows when their sums take registers too.
    fn rows(&self) -> i64 {
        if self.row_sums {
            self.mr * 3 / 4
        } else {
            self.mr
        }
    }
    fn name(&self) -> String {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.hash(&mut h);
        format!(
            "__onnxc_qgemm_k{}_n{}_v{}_{:016x}",
            self.k,
            self.n,
            self.vw,
            h.finish()
        )
    }
}

/// B's bytes (`[K, N]` row-major, `signed` or not) packed as the
/// micro-kernel reads them, as little-endian i32 words, and the column
/// sums of the shifted B' (length panels · NR, zero past N).
pub fn pack_b(src: &[u8], signed: bool, v: &QVariant) -> Option<(Vec<u8>, Vec<i32>)> {
    let (k, n) = (usize::try_from(v.k).ok()?, usize::try_from(v.n).ok()?);
    let (nr, quads, panels) = (
        usize::try_from(v.nr()).ok()?,
        usize::try_from(v.quads()).ok()?,
        usize::try_from(v.panels()).ok()?,
    );
    if src.len() != k.checked_mul(n)? {
        return None;
    }
    let mut out = vec![0u8; panels.checked_mul(quads)?.checked_mul(nr)?.checked_mul(4)?];
    let mut sums = vec![0i32; panels * nr];
    for (i, &byte) in src.iter().enumerate() {
        let (kk, col) = (i / n, i % n);
        let shifted = if signed { byte } else { byte ^ 0x80 };
        let (p, c, q, j) = (col / nr, col % nr, kk / 4, kk % 4);
        out[((p * quads + q) * nr + c) * 4 + j] = shifted;
        sums[col] += i32::from(shifted as i8);
    }
    Some((out, sums))
}

/// The runtime operands of one call; the buffers are flat 1-D views.
pub struct QCall {
    pub a: ValueId,
    /// Packed B ([`pack_b`]), i32 words.
    pub b: ValueId,
    /// colsum(B'), i32 per column (panels · NR).
    pub colsum: ValueId,
    /// β per column (i32), with `row_sums`.
    pub beta: Option<ValueId>,
    /// Requantized output: sb per column (f32), then sa, sy (f32) and zy
    /// (f32) scalars.
    pub requant: Option<(ValueId, [ValueId; 3])>,
    pub c: ValueId,
    /// Rows of A and C (index).
    pub m: ValueId,
    /// α (i32).
    pub alpha: ValueId,
}

impl QCall {
    fn args(&self) -> Vec<ValueId> {
        let mut a = vec![self.a, self.b, self.colsum];
        a.extend(self.beta);
        if let Some((sb, _)) = self.requant {
            a.push(sb);
        }
        a.extend([self.c, self.m, self.alpha]);
        if let Some((_, s)) = self.requant {
            a.extend(s);
        }
        a
    }
}

/// Calls the int8 kernel `name` on `args`, defining it on first use with
/// `body(builder, params, vnni)`. A multi-level build (`levels`, whose
/// kernels have no VNNI) gets it per level (`crate::kernels::support::call_per_level`):
/// `NAME_v5` with `vpdpbusd`, over the same packed weights, built for
/// [`func::X86_VNNI`] and taken on CPUs that have AVX512-VNNI; below
/// that `NAME_v3` (taken at levels 3 and 4) and `NAME_v2`, not
/// multiversioned: at level 4 without VNNI, LLVM joined the 128-bit
/// `pmaddwd` parts into a 512-bit one and split it again (QDQ
/// ResNet-50: 161 ms, 91 ms with the AVX2 code on the same CPU).
pub(crate) fn call_kernel(
    b: &mut Builder<'_>,
    (name, args): (&str, &[ValueId]),
    levels: bool,
    body: &dyn Fn(&mut Builder<'_>, Vec<ValueId>, bool),
) {
    if !levels {
        if b.m.lookup_symbol(name).is_none() {
            let types: Vec<Type> = args.iter().map(|&a| b.m.value_type(a).clone()).collect();
            let (mut fb, params) = crate::kernels::support::private_func(b.m, name, types);
            body(&mut fb, params, false);
            fb.ret(&[]);
        }
        b.call(name, args, &[]);
        return;
    }
    let chain = [func::X86_VNNI, func::X86_LEVELS[1], func::X86_LEVELS[2]];
    crate::kernels::support::call_per_level(b, (name, args), &chain, &|fb, params, l| {
        body(fb, params, l.level == func::X86_VNNI.level)
    });
}

/// Whether the int8 kernels get a VNNI variant beside the generic one:
/// a multi-level build, whose generic kernels have no VNNI.
pub(crate) fn with_vnni_level(cx: &crate::convert::Lowering) -> bool {
    cx.gemm == crate::kernels::linalg::gemm::Isa::X86Levels && !cx.int8_dot
}

/// Emits a call of the function of `v` (and, with `levels`, of its VNNI
/// variant: [`call_kernel`]).
pub fn call(b: &mut Builder<'_>, v: &QVariant, c: &QCall, levels: bool) {
    let body = |fb: &mut Builder<'_>, params: Vec<ValueId>, vnni: bool| {
        let v = match vnni {
            true => v.with_vnni(),
            false => v.clone(),
        };
        define(fb, &v, c, params);
    };
    call_kernel(b, (&v.name(), &c.args()), levels, &body);
}

fn define(fb: &mut Builder<'_>, v: &QVariant, c: &QCall, params: Vec<ValueId>) {
    let mut it = params.into_iter();
    let mut next = || it.next().unwrap_or(c.a);
    let (a, bp, colsum) = (next(), next(), next());
    let beta = c.beta.map(|_| next());
    let sb = c.requant.map(|_| next());
    let (cbuf, m, alpha) = (next(), next(), next());
    let requant = sb.map(|sb| (sb, [next(), next(), next()]));
    let p = QCall {
        a,
        b: bp,
        colsum,
        beta,
        requant,
        c: cbuf,
        m,
        alpha,
    };
    bands(fb, v, &p);
}

/// Threads take bands of row tiles or of panels, whichever has more.
fn bands(b: &mut Builder<'_>, v: &QVariant, p: &QCall) {
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let mr = b.const_index(v.rows());
    let panels = b.const_index(v.panels());
    let m_tiles = b.ceildivsi(p.m, mr);
    let by_rows = b.cmp(Cmp::Ge, m_tiles, panels);
    let units = b.select(by_rows, m_tiles, panels);
    let kn = b.const_index(v.k * v.n);
    let work = b.muli(p.m, kn);
    let (parts, per) = split(b, work, units);
    b.scf_parallel_for(zero, parts, one, |b, t| {
        let first = b.muli(t, per);
        let next = b.addi(first, per);
        let row_lo = b.muli(first, mr);
        let row_lo = b.minsi(row_lo, p.m);
        let row_hi = b.muli(next, mr);
        let row_hi = b.minsi(row_hi, p.m);
        let pan_lo = b.minsi(first, panels);
        let pan_hi = b.minsi(next, panels);
        let band = Band {
            m0: b.select(by_rows, row_lo, zero),
            m1: b.select(by_rows, row_hi, p.m),
            p0: b.select(by_rows, zero, pan_lo),
            p1: b.select(by_rows, panels, pan_hi),
        };
        panels_of(b, v, p, &band);
    });
}

/// Rows `m0..m1` and panels `p0..p1` of C.
struct Band {
    m0: ValueId,
    m1: ValueId,
    p0: ValueId,
    p1: ValueId,
}

/// Per panel, per row tile: the micro-kernel, as wide as the panel (the
/// last one may be narrower, statically: N is known).
fn panels_of(b: &mut Builder<'_>, v: &QVariant, p: &QCall, band: &Band) {
    let one = b.const_index(1);
    let mr = b.const_index(v.rows());
    let tail = v.n % v.nr();
    let narrow_nv = (tail + v.vw - 1) / v.vw;
    let last = b.const_index(v.panels() - 1);
    b.scf_for(band.p0, band.p1, one, &[], |b, panel, _| {
        let rows = |b: &mut Builder<'_>, nv: i64| {
            b.scf_for(band.m0, band.m1, mr, &[], |b, row, _| {
                micro::kernel(b, v, p, (row, panel), nv);
                Vec::new()
            });
        };
        if tail == 0 {
            rows(b, v.nv);
        } else if v.panels() == 1 {
            rows(b, narrow_nv);
        } else {
            let is_last = b.cmp(Cmp::Eq, panel, last);
            b.scf_if(
                is_last,
                &[],
                &mut |b| {
                    rows(b, narrow_nv);
                    Vec::new()
                },
                Some(&mut |b| {
                    rows(b, v.nv);
                    Vec::new()
                }),
            );
        }
        Vec::new()
    });
}

/// A flat view of a whole buffer (its element count from its dims).
pub fn flat_all(b: &mut Builder<'_>, buf: ValueId) -> ValueId {
    let ds = crate::convert::dims(b, buf);
    let len = product(b, &ds);
    flat(b, buf, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_b_is_quads_of_columns_with_shifted_sums() {
        // K = 5, N = 3, u8: B' = B - 128, two quads, one panel of NR = 8.
        let v = QVariant::new(128, false, (5, 3), false);
        assert_eq!((v.nr(), v.quads(), v.panels()), (8, 2, 1));
        let src: Vec<u8> = (0..15).map(|i| 120 + i as u8).collect();
        let (packed, sums) = pack_b(&src, false, &v).unwrap();
        assert_eq!(packed.len(), 2 * 8 * 4);
        // Column 1, quad 0: rows 0..4 of column 1 (121, 124, 127, 130) - 128.
        let word = &packed[4..8];
        let vals: Vec<i8> = word.iter().map(|&x| x as i8).collect();
        assert_eq!(vals, vec![-7, -4, -1, 2]);
        // Column 1, quad 1: row 4 (133 - 128), then zero padding.
        let word = &packed[(8 + 1) * 4..(8 + 1) * 4 + 4];
        assert_eq!(word, &[5, 0, 0, 0]);
        assert_eq!(sums[1], -7 - 4 - 1 + 2 + 5);
        assert_eq!(sums[3..], [0; 5]);
    }
}
