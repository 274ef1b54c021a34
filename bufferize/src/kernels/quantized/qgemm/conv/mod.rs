//! ConvInteger and QLinearConv on byte dot products: per image and group,
//! `Y[m, p] = Σ_k (W[m, k] - wz[m]) · (Xcol[k, p] - xz)`. The constant
//! weights are packed at compile time into panels of MR rows (one i32
//! word per row and depth quad); the im2col view of the image is gathered
//! panel by panel into quads of NR positions, padding read as the zero
//! point.
//!
//! The image is the unsigned side of the dot and the weights the signed
//! one: a u8 W is shifted by -128 when packed, an s8 image by +128 when
//! gathered. With α[m] = wz[m] - 128·[W u8] and β = xz + 128·[X s8]:
//!
//! `Y = Σ W'X' + β·(K·α - rowsum(W')) - α·colsum(X')`
//!
//! The middle factor is a constant per row; colsum(X') is summed while
//! packing, only when some α is non-zero (symmetric s8 weights have none).

mod ops;
mod panel;

pub use ops::{conv_integer, qlinear_conv};

use super::micro::{dot_planar, requantize};
use super::QOut;
use crate::kernels::linalg::gemm::{split, ConvGeometry};
use crate::kernels::support::index::product;
use ir::builder::Cmp;
use ir::{Builder, Type, ValueId};

/// The static shape of one int8 convolution function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct QConvVariant {
    pub geometry: ConvGeometry,
    pub groups: i64,
    /// Input channels per group.
    pub cg: i64,
    /// Output channels per group.
    pub mg: i64,
    pub x_elem: Type,
    /// Some α is non-zero: colsum(X') is needed.
    pub col_sums: bool,
    pub bias: bool,
    pub out: QOut,
    pub vw: i64,
    pub mr: i64,
    pub nv: i64,
    pub vnni: bool,
}

impl QConvVariant {
    /// A 1×1, stride-1 window.
    fn pointwise(&self) -> bool {
        self.geometry
            .kernel
            .iter()
            .chain(&self.geometry.strides)
            .all(|&k| k == 1)
    }
    fn taps(&self) -> i64 {
        self.geometry.kernel.iter().product()
    }
    /// Depth of one group's product.
    fn k(&self) -> i64 {
        self.cg * self.taps()
    }
    fn quads(&self) -> i64 {
        (self.k() + 3) / 4
    }
    fn nr(&self) -> i64 {
        self.vw * self.nv
    }
    /// Output channels per group, rounded up to MR.
    fn mg_padded(&self) -> i64 {
        (self.mg + self.mr - 1) / self.mr * self.mr
    }
    /// The VNNI variant at 512 bits (three vectors, as the native build):
    /// the panels are packed at run time, the weights' layout depends on
    /// MR only.
    fn with_vnni(&self) -> QConvVariant {
        QConvVariant {
            vnni: true,
            vw: i64::from(ir::dialects::func::X86_VNNI.vector_bits / 32),
            nv: 3,
            ..self.clone()
        }
    }
    /// `acc` plus the byte dot of a panel vector by a broadcast word:
    /// `vpdpbusd`, else over the panels' two byte planes.
    fn dot(&self, b: &mut Builder<'_>, acc: ValueId, panel: ValueId, w: ValueId) -> ValueId {
        match self.vnni {
            true => b.vpdpbusd(acc, panel, w),
            false => dot_planar(b, self.vw, acc, panel, w),
        }
    }
    fn x_signed(&self) -> bool {
        self.x_elem == Type::i(8)
    }
    fn name(&self) -> String {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.hash(&mut h);
        format!("__onnxc_qconv_{}_{:016x}", self.geometry.tag(), h.finish())
    }
}

/// The compile-time parts: packed weights (`[g][row panel][quad][MR]`
/// i32 words), `K·α - rowsum(W')` and α per padded row.
pub(super) struct Packed {
    words: Vec<u8>,
    rowfix: Vec<i32>,
    alpha: Vec<i32>,
}

pub(super) fn pack_weights(
    src: &[u8],
    w_signed: bool,
    wz: &[i64],
    v: &QConvVariant,
) -> Option<Packed> {
    let (k, mg, mr) = (v.k() as usize, v.mg as usize, v.mr as usize);
    let (quads, padded, groups) = (
        v.quads() as usize,
        v.mg_padded() as usize,
        v.groups as usize,
    );
    if src.len() != groups * mg * k || wz.len() != groups * mg {
        return None;
    }
    let mut words = vec![0u8; groups * padded * quads * 4];
    let (mut rowfix, mut alpha) = (vec![0i32; groups * padded], vec![0i32; groups * padded]);
    for (i, &byte) in src.iter().enumerate() {
        let (row, kk) = (i / k, i % k);
        let (g, m) = (row / mg, row % mg);
        let shifted = if w_signed { byte } else { byte ^ 0x80 };
        let (panel, r) = (m / mr, m % mr);
        let word = (g * padded + panel * mr) * quads + (kk / 4) * mr + r;
        words[word * 4 + kk % 4] = shifted;
        rowfix[g * padded + m] -= i32::from(shifted as i8);
    }
    for (row, &z) in wz.iter().enumerate() {
        let at = (row / mg) * padded + row % mg;
        let a = i32::try_from(z).ok()? - if w_signed { 0 } else { 128 };
        alpha[at] = a;
        rowfix[at] = rowfix[at].wrapping_add((k as i32).wrapping_mul(a));
    }
    Some(Packed {
        words,
        rowfix,
        alpha,
    })
}

/// The runtime operands of one call (flat buffers).
pub(super) struct QConvCall {
    x: ValueId,
    w: ValueId,
    rowfix: ValueId,
    alpha: Option<ValueId>,
    bias: Option<ValueId>,
    /// Requantized output: w's scale per output channel (f32), then x's
    /// scale, y's scale and y's zero point (f32 scalars).
    requant: Option<(ValueId, [ValueId; 3])>,
    y: ValueId,
    batch: ValueId,
    /// Input extents, output extents and begin pads per spatial axis.
    geometry: Vec<ValueId>,
    /// β (i32).
    beta: ValueId,
}

impl QConvCall {
    fn args(&self) -> Vec<ValueId> {
        let mut a = vec![self.x, self.w, self.rowfix];
        a.extend(self.alpha);
        a.extend(self.bias);
        a.extend(self.requant.map(|r| r.0));
        a.extend([self.y, self.batch]);
        a.extend(&self.geometry);
        a.push(self.beta);
        if let Some((_, s)) = self.requant {
            a.extend(s);
        }
        a
    }
    /// The same call on the function's parameters.
    fn on(&self, params: Vec<ValueId>) -> QConvCall {
        let mut it = params.into_iter();
        let mut next = || it.next().unwrap_or(self.x);
        let (x, w, rowfix) = (next(), next(), next());
        let alpha = self.alpha.map(|_| next());
        let bias = self.bias.map(|_| next());
        let scale = self.requant.map(|_| next());
        let (y, batch) = (next(), next());
        let geometry = self.geometry.iter().map(|_| next()).collect();
        let beta = next();
        let requant = scale.map(|s| (s, [next(), next(), next()]));
        QConvCall {
            x,
            w,
            rowfix,
            alpha,
            bias,
            requant,
            y,
            batch,
            geometry,
            beta,
        }
    }
    fn spatial(&self) -> (&[ValueId], &[ValueId], &[ValueId]) {
        let s = self.geometry.len() / 3;
        let (ins, rest) = self.geometry.split_at(s);
        let (outs, pads) = rest.split_at(s);
        (ins, outs, pads)
    }
}

/// Emits a call of the function of `v` (and, with `levels`, of its VNNI
/// variant: [`super::call_kernel`]).
pub(super) fn call(b: &mut Builder<'_>, v: &QConvVariant, c: &QConvCall, levels: bool) {
    let define = |fb: &mut Builder<'_>, params: Vec<ValueId>, vnni: bool| {
        let v = match vnni {
            true => v.with_vnni(),
            false => v.clone(),
        };
        body(fb, &v, &c.on(params));
    };
    super::call_kernel(b, (&v.name(), &c.args()), levels, &define);
}

/// Threads share the (image, group, panel) units; each packs its panels
/// into a buffer of its own.
fn body(b: &mut Builder<'_>, v: &QConvVariant, p: &QConvCall) {
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let (_, outs, _) = p.spatial();
    let positions = product(b, outs);
    let nr = b.const_index(v.nr());
    let panels = b.ceildivsi(positions, nr);
    let groups = b.const_index(v.groups);
    let per_image = b.muli(groups, panels);
    let units = b.muli(p.batch, per_image);
    let depth = b.const_index(v.groups * v.mg * v.k());
    let work = b.muli(units, nr);
    let work = b.muli(work, depth);
    let (parts, per) = split(b, work, units);
    b.scf_parallel_for(zero, parts, one, |b, t| {
        let ty = Type::memref(vec![ir::DYN], Type::i(32));
        let words = b.const_index(v.quads() * v.nr());
        let buf = b.alloc_aligned(&ty, &[words], 64);
        let lo = b.muli(t, per);
        let lo = b.minsi(lo, units);
        let hi = b.addi(lo, per);
        let hi = b.minsi(hi, units);
        b.scf_for(lo, hi, one, &[], |b, u, _| {
            let n = b.divui(u, per_image);
            let rest = b.remui(u, per_image);
            let g = b.divui(rest, panels);
            let panel = b.remui(rest, panels);
            let col0 = b.muli(panel, nr);
            let at = Unit {
                n,
                g,
                col0,
                positions,
            };
            let sums = panel::pack_panel(b, v, p, buf, &at);
            let mr = b.const_index(v.mr);
            let rows = b.const_index(v.mg_padded());
            b.scf_for(zero, rows, mr, &[], |b, r0, _| {
                tile(b, v, p, (buf, &sums), &at, r0);
                Vec::new()
            });
            Vec::new()
        });
    });
}

/// Image `n`, group `g`, the panel of positions from `col0`.
pub(super) struct Unit {
    n: ValueId,
    g: ValueId,
    col0: ValueId,
    positions: ValueId,
}

/// Output rows `r0..r0+MR` of the group against the packed panel.
fn tile(
    b: &mut Builder<'_>,
    v: &QConvVariant,
    p: &QConvCall,
    (buf, sums): (ValueId, &[ValueId]),
    at: &Unit,
    r0: ValueId,
) {
    let (zero, one) = (b.const_index(0), b.const_index(1));
    let mr = b.const_index(v.mr);
    let padded = b.const_index(v.mg_padded());
    let group_row = b.muli(at.g, padded);
    let row0 = b.addi(group_row, r0);
    let quads = b.const_index(v.quads());
    let w_base = b.muli(row0, quads);
    let vzero = {
        let z = b.const_int(0, Type::i(32));
        b.broadcast(z, v.vw)
    };
    let inits = vec![vzero; (v.mr * v.nv) as usize];
    let nr = b.const_index(v.nr());
    let lp = b.scf_for(zero, quads, one, &inits, |b, q, acc| {
        let at_b = b.muli(q, nr);
        let bvec: Vec<ValueId> = (0..v.nv)
            .map(|j| {
                let o = b.const_index(j * v.vw);
                let o = b.addi(at_b, o);
                b.vload(buf, &[o], v.vw)
            })
            .collect();
        let at_w = b.muli(q, mr);
        let at_w = b.addi(w_base, at_w);
        let mut next = acc.to_vec();
        for r in 0..v.mr {
            let rc = b.const_index(r);
            let i = b.addi(at_w, rc);
            let w = b.load(p.w, &[i]);
            let w = b.broadcast(w, v.vw);
            for (j, &bv) in bvec.iter().enumerate() {
                let i = (r * v.nv) as usize + j;
                next[i] = v.dot(b, next[i], bv, w);
            }
        }
        next
    });
    let acc = b.m.results(lp).to_vec();
    store(b, v, p, (&acc, sums), at, (r0, row0));
}

/// Adds the zero-point terms and the bias, and stores the rows of the
/// group that exist, positions under the lane masks.
fn store(
    b: &mut Builder<'_>,
    v: &QConvVariant,
    p: &QConvCall,
    (acc, sums): (&[ValueId], &[ValueId]),
    at: &Unit,
    (r0, row0): (ValueId, ValueId),
) {
    let mg = b.const_index(v.mg);
    let first_out = b.muli(at.g, mg);
    let channels = b.const_index(v.groups * v.mg);
    let image_out = b.muli(at.n, channels);
    let cols: Vec<(ValueId, ValueId)> = (0..v.nv)
        .map(|j| {
            let o = b.const_index(j * v.vw);
            let col = b.addi(at.col0, o);
            let left = b.subi(at.positions, col);
            (col, b.create_mask(left, v.vw))
        })
        .collect();
    for r in 0..v.mr {
        let rc = b.const_index(r);
        let m = b.addi(r0, rc);
        let inside = b.cmp(Cmp::Lt, m, mg);
        b.scf_if(
            inside,
            &[],
            &mut |b| {
                let prow = b.addi(row0, rc);
                let co = b.addi(first_out, m);
                let fix = b.load(p.rowfix, &[prow]);
                let mut fix = b.muli(fix, p.beta);
                if let Some(bias) = p.bias {
                    let x = b.load(bias, &[co]);
                    fix = b.addi(fix, x);
                }
                let fix = b.broadcast(fix, v.vw);
                let alpha = p.alpha.map(|a| {
                    let x = b.load(a, &[prow]);
                    b.broadcast(x, v.vw)
                });
                let scale = output_scale(b, v, p, co);
                let oc = b.addi(image_out, co);
                let row_at = b.muli(oc, at.positions);
                for (j, &(col, mask)) in cols.iter().enumerate() {
                    let mut y = b.addi(acc[(r * v.nv) as usize + j], fix);
                    if let (Some(a), Some(&s)) = (alpha, sums.get(j)) {
                        let t = b.muli(a, s);
                        y = b.subi(y, t);
                    }
                    let y = match (&v.out, scale) {
                        (QOut::Requant { elem }, Some((scale, zy))) => {
                            requantize(b, y, scale, zy, elem)
                        }
                        _ => y,
                    };
                    let o = b.addi(row_at, col);
                    b.masked_store(y, p.y, &[o], mask);
                }
                Vec::new()
            },
            None,
        );
    }
}

/// `x_scale · w_scale[co] / y_scale` as a vector, and y's zero point.
fn output_scale(
    b: &mut Builder<'_>,
    v: &QConvVariant,
    p: &QConvCall,
    co: ValueId,
) -> Option<(ValueId, ValueId)> {
    let (ws, [xs, ys, zy]) = p.requant?;
    let w = b.load(ws, &[co]);
    let s = b.mulf(xs, w);
    let s = b.divf(s, ys);
    Some((b.broadcast(s, v.vw), zy))
}
