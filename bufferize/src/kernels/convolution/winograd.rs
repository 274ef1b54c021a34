//! 3×3 stride-1 convolution by Winograd F(2×2, 3×3): each 2×2 output tile
//! is `Aᵀ [(G g Gᵀ) ⊙ (Bᵀ d B)] A` of its 4×4 input tile `d`, so the
//! products become 16 GEMMs, one per position ξ of the transformed tile:
//! `M[ξ] (K × T) = U[ξ] (K × C) · V[ξ] (C × T)` over the T tiles, 16
//! multiply-adds per 2×2 outputs and channel pair instead of 36.
//!
//! The weights' transform U is computed at compile time (the weights are
//! constants). The tiles go in blocks of whole tile rows whose V and M
//! take at most `BLOCK_BYTES`, each through the three steps. The input and
//! output transforms are vector loops over a row of tiles (a lane per
//! tile): a row of the input is read as two masked vectors and split into
//! the tiles' columns by shuffles, so the zero padding and the ragged last
//! tiles are masks, and every size runs the same code.

use crate::convert::Lowering;
use crate::kernels::convolution::conv::{Epilogue, Operands};
use crate::kernels::convolution::window::Placement;
use crate::kernels::linalg::gemm;
use crate::kernels::support::epilogue;
use crate::kernels::{support::elem_of, support::shape_of};
use crate::loops::{loop_nest_by_work, Bounds, PARALLEL_MIN_WORK};
use ir::builder::Cmp;
use ir::dialects::func;
use ir::elements::DType;
use ir::{Builder, OpId, Result, Type, ValueId, DYN};
use onnx::ops;

/// Output tiles below which the im2col GEMM is used.
const MIN_TILES: i64 = 16;
/// Bytes of V and M one block of tile rows may take: the transforms and
/// the GEMMs' packing find them in the last-level cache, and the scratch
/// stays bounded whatever the image size (blocks small enough for L2 made
/// the GEMMs too short to pay for their packing, measured on ResNet-18).
const BLOCK_BYTES: i64 = 4 * 1024 * 1024;
/// Channels (in and out) below which the transforms outweigh the saving.
const MIN_CHANNELS: i64 = 8;
/// `G` of F(2, 3): the 3-tap filter to its 4-point transform.
const G: [[f64; 3]; 4] = [
    [1.0, 0.0, 0.0],
    [0.5, 0.5, 0.5],
    [0.5, -0.5, 0.5],
    [0.0, 0.0, 1.0],
];

/// Whether the Winograd path runs: known at compile time or a condition.
pub enum Choice {
    Static(bool),
    Runtime(ValueId),
}

/// A convolution the Winograd path can compute.
#[derive(Clone)]
pub struct Plan {
    /// U as a flat `memref<?xf32>`, packed at compile time into the
    /// GEMM's A panels: `U[ξ]` (K × C), the 16 positions one after the
    /// other.
    u: ValueId,
    /// The layout of one position's U in `u`: its padded rows and its
    /// elements.
    u_layout: (i64, i64),
    k: i64,
    c: i64,
    vector_bits: u32,
    gemm: gemm::Isa,
    /// Tiles per row when the image size is static.
    tiles_per_row: Option<i64>,
}

/// The plan for `op` when it is a 2-D 3×3 stride-1 undilated single-group
/// f32 convolution with constant weights of at least `MIN_CHANNELS` in
/// and out channels.
pub fn plan(
    cx: &mut Lowering,
    b: &mut Builder<'_>,
    op: OpId,
    ops: &Operands,
    kernel: &[i64],
    group: i64,
) -> Result<Option<Plan>> {
    let win = &ops.win;
    let elem = elem_of(b.m, ops.x);
    let shape = shape_of(b.m, ops.w);
    let eligible = kernel == [3, 3]
        && group == 1
        && win.strides == [1, 1]
        && win.dilations == [1, 1]
        && elem == Type::f32();
    let (k, c) = match shape[..] {
        [k, c, 3, 3] if eligible && k != DYN && c != DYN => (k, c),
        _ => return Ok(None),
    };
    if k < MIN_CHANNELS || c < MIN_CHANNELS {
        return Ok(None);
    }
    let Some(w) = crate::kernels::support::constant_elements(b.m, op, ops::Conv::W) else {
        return Ok(None);
    };
    let (ku, cu) = (k as usize, c as usize);
    if w.dtype() != DType::F32 || w.len() != ku * cu * 9 {
        return Ok(None);
    }
    // Packing U at run time copied all 16 positions on every call: 16/9
    // of the weights, most of a small image's time.
    let bl = gemm::Blocking::of(cx.gemm, &Type::f32());
    let Some(layout) = gemm::PackedA::new(4, (16, ku, cu), bl) else {
        return Ok(None);
    };
    let source = (w, layout.elements());
    let transform = move |w: &[u8], out: &mut Vec<u8>| {
        let mut u = Vec::new();
        transform_weights(w, ku, cu, &mut u);
        layout.pack(&u, out);
    };
    let Some((global, len)) = crate::kernels::support::packed_global(cx, b, source, transform)
    else {
        return Ok(None);
    };
    let (Ok(padded), Ok(elements)) = (
        i64::try_from(layout.padded),
        i64::try_from(layout.elements() / 16),
    ) else {
        return Ok(None);
    };
    let len = b.const_index(len);
    Ok(Some(Plan {
        u: gemm::flat(b, global, len),
        u_layout: (padded, elements),
        k,
        c,
        vector_bits: cx.vector_bits,
        gemm: cx.gemm,
        tiles_per_row: None,
    }))
}

/// `U[ξ = 4i + j][k][c] = (G g Gᵀ)[i][j]` of each filter `g = w[k][c]`
/// (f32 bytes, little-endian), computed in f64 and rounded to f32 once,
/// appended to `out`. Bytes in, bytes out: no decoding of the model's
/// weights element by element.
fn transform_weights(w: &[u8], k: usize, c: usize, out: &mut Vec<u8>) {
    let plane = k * c;
    let start = out.len();
    out.resize(start + 16 * plane * 4, 0);
    let u = out.get_mut(start..).unwrap_or_default();
    for at in 0..plane {
        let Some(filter) = w.get(at * 36..at * 36 + 36) else {
            continue;
        };
        let mut g = [0.0f64; 9];
        for (x, b) in g.iter_mut().zip(filter.chunks_exact(4)) {
            *x = f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        }
        let mut gg = [[0.0; 3]; 4];
        for (i, row) in gg.iter_mut().enumerate() {
            for (s, v) in row.iter_mut().enumerate() {
                *v = (0..3).map(|r| G[i][r] * g[r * 3 + s]).sum();
            }
        }
        for (i, row) in gg.iter().enumerate() {
            for (j, gj) in G.iter().enumerate() {
                let v: f64 = (0..3).map(|s| row[s] * gj[s]).sum();
                let o = ((i * 4 + j) * plane + at) * 4;
                if let Some(dst) = u.get_mut(o..o + 4) {
                    dst.copy_from_slice(&(v as f32).to_le_bytes());
                }
            }
        }
    }
}

/// What a Winograd convolution reads and writes: the input and its dims,
/// the bias, the output dims and begin pads, the output, the residual.
struct RunArgs {
    x: ValueId,
    dx: Vec<ValueId>,
    bias: Option<ValueId>,
    outs: Vec<ValueId>,
    begins: Vec<ValueId>,
    out: ValueId,
    residual: Option<ValueId>,
}

impl RunArgs {
    /// `u` and these, as a per-level function's arguments.
    fn values(&self, u: ValueId) -> Vec<ValueId> {
        let mut v = vec![u, self.x, self.out];
        v.extend(self.bias);
        v.extend(self.residual);
        v.extend(self.dx.iter().chain(&self.outs).chain(&self.begins));
        v
    }

    /// `u` and the arguments read back from `params` (`values`' order).
    fn read_back(&self, params: &[ValueId]) -> (ValueId, RunArgs) {
        let mut it = params.iter().copied();
        let mut next = || it.next().unwrap_or(self.x);
        let (u, x, out) = (next(), next(), next());
        let bias = self.bias.map(|_| next());
        let residual = self.residual.map(|_| next());
        let mut take = |n: usize| (0..n).map(|_| next()).collect::<Vec<_>>();
        let (dx, outs, begins) = (
            take(self.dx.len()),
            take(self.outs.len()),
            take(self.begins.len()),
        );
        let args = RunArgs {
            x,
            dx,
            bias,
            outs,
            begins,
            out,
            residual,
        };
        (u, args)
    }
}

/// The tile grid of one convolution, and the block of tile rows being
/// computed.
#[derive(Clone, Copy)]
struct Grid {
    h: ValueId,
    w: ValueId,
    oh: ValueId,
    ow: ValueId,
    pad_top: ValueId,
    pad_left: ValueId,
    /// Tiles per row.
    tw: ValueId,
    /// The block: its first tile row, its rows, and its tiles (`rows · tw`,
    /// the leading dimension of V and M).
    ty0: ValueId,
    rows: ValueId,
    t: ValueId,
}

fn tiles(b: &mut Builder<'_>, outs: &[ValueId]) -> (ValueId, ValueId, ValueId) {
    let two = b.const_index(2);
    let th = b.ceildivsi(outs[0], two);
    let tw = b.ceildivsi(outs[1], two);
    let t = b.muli(th, tw);
    (th, tw, t)
}

impl Plan {
    /// Enough tiles for the transforms to pay off.
    pub fn worthwhile(&self, b: &mut Builder<'_>, outs: &[ValueId]) -> Choice {
        let (_, _, t) = tiles(b, outs);
        match b.index_value(t) {
            Some(t) => Choice::Static(t >= MIN_TILES),
            None => {
                let min = b.const_index(MIN_TILES);
                Choice::Runtime(b.cmp(Cmp::Ge, t, min))
            }
        }
    }

    /// Tiles per vector: a 32-bit lane each, except at 256 bits, where it
    /// is 4: there clang 19 built the upper half of an input row's
    /// 16-lane masked load as a plain load for a 7-wide image (ResNet-50's
    /// last stage read the next row into the padding: wrong sums at
    /// x86-64-v3, found by `cpu_levels.rs`); 8-lane loads are correct.
    /// A row of few tiles (a small image) takes a narrower vector, which
    /// AVX-512's masked forms run as fast: 16 lanes over a 4-tile row
    /// left 12 empty (ResNet-50's 7×7 stage, DenseNet's 14×14).
    fn lanes(&self) -> i64 {
        let widest = match self.vector_bits {
            256 => 4,
            bits => i64::from(bits / 32).max(4),
        };
        match self.tiles_per_row {
            Some(t) => widest.min(t.max(4).unsigned_abs().next_power_of_two() as i64),
            None => widest,
        }
    }

    /// The convolution into `out`, image by image: inline, or in a
    /// multi-level build a function per x86-64 level, each with its own
    /// tiles per vector (16 at AVX-512; the portable 256-bit code's 4
    /// ran at level 4 too, as slow as at level 3).
    pub fn run(
        &self,
        b: &mut Builder<'_>,
        ops: &Operands,
        place: &Placement,
        out: ValueId,
        epi: Epilogue,
    ) {
        let plan = Plan {
            tiles_per_row: place
                .outs
                .get(1)
                .and_then(|&w| b.index_value(w))
                .map(|w| (w + 1) / 2),
            ..self.clone()
        };
        let args = RunArgs {
            x: ops.x,
            dx: ops.dx.clone(),
            bias: ops.bias,
            outs: place.outs.clone(),
            begins: place.begins.clone(),
            out,
            residual: epi.residual,
        };
        match plan.gemm {
            gemm::Isa::X86Levels => plan.call_per_level(b, &args, epi.act),
            _ => plan.run_with(b, &args, epi.act),
        }
    }

    /// `run` as `NAME_v4`, `NAME_v3` and `NAME_v2`, each built for its
    /// level at its vector width, and the call of the one the CPU runs.
    fn call_per_level(&self, b: &mut Builder<'_>, a: &RunArgs, act: epilogue::Act) {
        let values = a.values(self.u);
        let key = format!(
            "{} {} {:?} {act:?} {} {}",
            self.k,
            self.c,
            self.tiles_per_row,
            a.bias.is_some(),
            a.residual.is_some()
        );
        let name = crate::kernels::support::kernel_symbol(b, "winograd", &key, &values);
        crate::kernels::support::call_per_level(
            b,
            (&name, &values),
            &func::X86_LEVELS,
            &|fb, params, l| {
                let (u, inner) = a.read_back(&params);
                let plan = Plan {
                    u,
                    vector_bits: l.vector_bits,
                    ..self.clone()
                };
                plan.run_with(fb, &inner, act);
            },
        );
    }

    fn run_with(&self, b: &mut Builder<'_>, a: &RunArgs, act: epilogue::Act) {
        let (th, tw, _) = tiles(b, &a.outs);
        // Tile rows per block: as many as fit BLOCK_BYTES, at least one.
        let per_tile = 16 * (self.c + self.k) * 4;
        let budget = b.const_index((BLOCK_BYTES / per_tile).max(1));
        let one = b.const_index(1);
        let rows = b.divui(budget, tw);
        let block_rows = b.maxsi(rows, one);
        let zero = b.const_index(0);
        let full = Grid {
            h: a.dx[2],
            w: a.dx[3],
            oh: a.outs[0],
            ow: a.outs[1],
            pad_top: a.begins[0],
            pad_left: a.begins[1],
            tw,
            ty0: zero,
            rows: block_rows,
            t: b.muli(block_rows, tw),
        };
        let buf_ty = Type::memref(vec![DYN], Type::f32());
        let sixteen = b.const_index(16);
        let (kk, cc) = (b.const_index(self.k), b.const_index(self.c));
        let ct = b.muli(cc, full.t);
        let kt = b.muli(kk, full.t);
        let v_len = b.muli(sixteen, ct);
        let m_len = b.muli(sixteen, kt);
        let v = b.alloc_aligned(&buf_ty, &[v_len], 64);
        let m = b.alloc_aligned(&buf_ty, &[m_len], 64);
        b.scf_for(zero, a.dx[0], one, &[], |b, n, _| {
            b.scf_for(zero, th, block_rows, &[], |b, ty0, _| {
                let left = b.subi(th, ty0);
                let rows = b.minsi(left, block_rows);
                let g = Grid {
                    ty0,
                    rows,
                    t: b.muli(rows, tw),
                    ..full
                };
                self.input_transform(b, a.x, n, &g, v);
                self.products(b, &g, v, m);
                let epi = Epilogue {
                    act,
                    residual: a.residual,
                };
                self.output_transform(b, a.bias, &g, m, (n, a.out), epi);
                Vec::new()
            });
            Vec::new()
        });
        // The buffers are freed by the deallocation pass.
    }

    /// `M[ξ] = U[ξ] · V[ξ]` for the 16 positions (`M[ξ][k][t]`). Tiles as
    /// the columns fill the register tile's vectors even for a small
    /// image: the products as `M[ξ]ᵀ = V[ξ]ᵀ · U[ξ]ᵀ` (channels as
    /// columns) were slower at every size measured, 9 to 196 tiles, their
    /// output transform gathering values K apart.
    fn products(&self, b: &mut Builder<'_>, g: &Grid, v: ValueId, m: ValueId) {
        let mut variant = gemm::Variant::plain(
            &Type::f32(),
            self.gemm,
            gemm::BSource::Matrix { unit_n: true },
        );
        variant.a_packed = true;
        let (kk, cc, one) = (
            b.const_index(self.k),
            b.const_index(self.c),
            b.const_index(1),
        );
        let ct = b.muli(cc, g.t);
        let kt = b.muli(kk, g.t);
        let (padded, u_block) = self.u_layout;
        let padded = b.const_index(padded);
        for xi in 0..16 {
            let x = b.const_index(xi);
            let (v_off, u_off) = (b.muli(x, ct), b.const_index(xi * u_block));
            let c_off = b.muli(x, kt);
            let call = gemm::Call {
                a: self.u,
                a_off: u_off,
                a_rs: padded,
                a_cs: one,
                b: v,
                b_off: v_off,
                b_args: vec![g.t, one],
                c: m,
                c_off,
                ldc: g.t,
                bias: None,
                residual: None,
                m: kk,
                n: g.t,
                k: cc,
            };
            gemm::call(b, &variant, &call);
        }
    }

    /// `body(b, [channel, ty, tx])` for every channel, tile row of the block
    /// and run of `lanes` tiles from `tx`, the channels and rows in
    /// parallel.
    fn for_tile_runs(
        &self,
        b: &mut Builder<'_>,
        channels: i64,
        g: &Grid,
        body: &mut dyn FnMut(&mut Builder<'_>, [ValueId; 3]),
    ) {
        let chans = b.const_index(channels);
        let bounds = Bounds::new(b);
        let sixteen = b.const_index(16);
        let work = [chans, g.rows, g.tw, sixteen];
        let lanes = self.lanes();
        let nest = |b: &mut Builder<'_>, ivs: &[ValueId]| {
            let step = b.const_index(lanes);
            let ty = b.addi(g.ty0, ivs[1]);
            b.scf_for(bounds.zero, g.tw, step, &[], |b, tx, _| {
                body(b, [ivs[0], ty, tx]);
                Vec::new()
            });
        };
        let mut nest = nest;
        loop_nest_by_work(
            b,
            &bounds,
            &[chans, g.rows],
            &work,
            PARALLEL_MIN_WORK,
            &mut nest,
        );
    }

    /// The tiles of a run that exist, and the index of each position ξ of
    /// the run's first tile in `[ξ][channel][tile of the block]`
    /// (`channels` per ξ).
    fn run_slots(
        &self,
        b: &mut Builder<'_>,
        g: &Grid,
        [ch, ty, tx]: [ValueId; 3],
        channels: i64,
    ) -> (ValueId, Vec<ValueId>) {
        let left = b.subi(g.tw, tx);
        let mask = b.create_mask(left, self.lanes());
        let local = b.subi(ty, g.ty0);
        let row = b.muli(local, g.tw);
        let tile = b.addi(row, tx);
        let chans = b.const_index(channels);
        let chan = b.muli(ch, g.t);
        let base = b.addi(chan, tile);
        let block = b.muli(chans, g.t);
        (mask, positions(b, base, block))
    }

    /// `V[ξ][c][t] = (Bᵀ d B)[ξ]` of every input tile `d` of image `n`.
    fn input_transform(&self, b: &mut Builder<'_>, x: ValueId, n: ValueId, g: &Grid, v: ValueId) {
        self.for_tile_runs(b, self.c, g, &mut |b, run| {
            let d = self.input_tile(b, x, n, run, g);
            let rows = d.map(|row| winograd_bt(b, row));
            // cols[j][i] is position (i, j).
            let cols: Vec<[ValueId; 4]> = (0..4)
                .map(|j| winograd_bt(b, [rows[0][j], rows[1][j], rows[2][j], rows[3][j]]))
                .collect();
            let (mask, at) = self.run_slots(b, g, run, self.c);
            for (xi, &idx) in at.iter().enumerate() {
                b.masked_store(cols[xi % 4][xi / 4], v, &[idx], mask);
            }
        });
    }

    /// The 4×4 input tiles of `lanes` tiles from `tx` in tile row `ty`:
    /// `d[i][j]` holds, in lane `l`, `x[n, c, 2ty + i - pt, 2(tx + l) + j - pl]`
    /// (0 outside the image).
    fn input_tile(
        &self,
        b: &mut Builder<'_>,
        x: ValueId,
        n: ValueId,
        [c, ty, tx]: [ValueId; 3],
        g: &Grid,
    ) -> [[ValueId; 4]; 4] {
        let (lanes, wide) = (self.lanes(), 2 * self.lanes());
        let two = b.const_index(2);
        let r0 = b.muli(ty, two);
        let r0 = b.subi(r0, g.pad_top);
        let c0 = b.muli(tx, two);
        let c0 = b.subi(c0, g.pad_left);
        let span = b.const_index(wide);
        let c1 = b.addi(c0, span);
        // Columns of the two loads in the image, and which two lanes of
        // the second are wanted.
        let in_a = columns_inside(b, c0, g.w, wide);
        let in_b = columns_inside(b, c1, g.w, wide);
        let two_lanes = b.create_mask(two, wide);
        let in_b = b.andi(in_b, two_lanes);
        let zero = b.zero(&Type::f32());
        let pass = b.broadcast(zero, wide);
        let (izero, last) = (b.const_index(0), b.const_index(1));
        let last = b.subi(g.h, last);
        let evens: Vec<i64> = (0..lanes).map(|l| 2 * l).collect();
        let odds: Vec<i64> = (0..lanes).map(|l| 2 * l + 1).collect();
        let shifted = |s: &[i64]| s.iter().map(|i| i + 2).collect::<Vec<i64>>();
        let mut d = [[izero; 4]; 4];
        for (i, row) in d.iter_mut().enumerate() {
            let at = b.const_index(i as i64);
            let r = b.addi(r0, at);
            let above = b.cmp(Cmp::Ge, r, izero);
            let below = b.cmp(Cmp::Le, r, last);
            let ok = b.andi(above, below);
            let ok = b.broadcast(ok, wide);
            let rc = b.maxsi(r, izero);
            let rc = b.minsi(rc, last);
            let ma = b.andi(in_a, ok);
            let mb = b.andi(in_b, ok);
            let la = b.masked_load(x, &[n, c, rc, c0], ma, pass);
            let lb = b.masked_load(x, &[n, c, rc, c1], mb, pass);
            row[0] = b.shuffle(la, la, &evens);
            row[1] = b.shuffle(la, la, &odds);
            row[2] = b.shuffle(la, lb, &shifted(&evens));
            row[3] = b.shuffle(la, lb, &shifted(&odds));
        }
        d
    }

    /// `out[n, k, 2ty + a, 2tx + b] = act(bias[k] + (Aᵀ m A)[a][b] +
    /// residual[n, k, 2ty + a, 2tx + b])` of the products `m` of every tile.
    fn output_transform(
        &self,
        b: &mut Builder<'_>,
        bias: Option<ValueId>,
        g: &Grid,
        m: ValueId,
        (n, out): (ValueId, ValueId),
        epi: Epilogue,
    ) {
        let (lanes, wide) = (self.lanes(), 2 * self.lanes());
        let interleave: Vec<i64> = (0..lanes).flat_map(|l| [l, l + lanes]).collect();
        self.for_tile_runs(b, self.k, g, &mut |b, run| {
            let [k, ty, tx] = run;
            let shift = bias.map(|bv| {
                let s = b.load(bv, &[k]);
                b.broadcast(s, wide)
            });
            let y = self.output_tile(b, m, run, g);
            let two = b.const_index(2);
            let col = b.muli(tx, two);
            let cols = b.subi(g.ow, col);
            let zero = b.const_index(0);
            let last = b.const_index(1);
            let last = b.subi(g.oh, last);
            for (a, pair) in y.iter().enumerate() {
                let at = b.const_index(a as i64);
                let row = b.muli(ty, two);
                let row = b.addi(row, at);
                let inside = b.cmp(Cmp::Lt, row, g.oh);
                let count = b.select(inside, cols, zero);
                let mask = b.create_mask(count, wide);
                let row = b.minsi(row, last);
                let mut v = b.shuffle(pair[0], pair[1], &interleave);
                if let Some(s) = shift {
                    v = b.addf(v, s);
                }
                if let Some(res) = epi.residual {
                    let z = b.zero(&Type::f32());
                    let pass = b.broadcast(z, wide);
                    let r = b.masked_load(res, &[n, k, row, col], mask, pass);
                    v = b.addf(v, r);
                }
                let v = epi.act.apply(b, v);
                b.masked_store(v, out, &[n, k, row, col], mask);
            }
        });
    }

    /// `(Aᵀ m A)` of `lanes` tiles from `tx`: `[row][col]`, a lane per tile.
    fn output_tile(
        &self,
        b: &mut Builder<'_>,
        m: ValueId,
        [k, ty, tx]: [ValueId; 3],
        g: &Grid,
    ) -> [[ValueId; 2]; 2] {
        let lanes = self.lanes();
        let zero = b.zero(&Type::f32());
        let pass = b.broadcast(zero, lanes);
        let (mask, at) = self.run_slots(b, g, [k, ty, tx], self.k);
        let p: Vec<ValueId> = at
            .iter()
            .map(|&idx| b.masked_load(m, &[idx], mask, pass))
            .collect();
        let p = |i: usize, j: usize| p[i * 4 + j];
        // Aᵀ on the columns, then on the rows.
        let cols: Vec<[ValueId; 2]> = (0..4)
            .map(|j| winograd_at(b, [p(0, j), p(1, j), p(2, j), p(3, j)]))
            .collect();
        let top = winograd_at(b, [cols[0][0], cols[1][0], cols[2][0], cols[3][0]]);
        let bottom = winograd_at(b, [cols[0][1], cols[1][1], cols[2][1], cols[3][1]]);
        [top, bottom]
    }
}

/// `base + ξ · block` for the 16 positions ξ.
fn positions(b: &mut Builder<'_>, base: ValueId, block: ValueId) -> Vec<ValueId> {
    (0..16)
        .map(|xi| {
            let x = b.const_index(xi);
            let off = b.muli(x, block);
            b.addi(off, base)
        })
        .collect()
}

/// Lanes `0..lanes` of `first + lane` that lie in `[0, len)`.
fn columns_inside(b: &mut Builder<'_>, first: ValueId, len: ValueId, lanes: i64) -> ValueId {
    let offsets = b.i64_lanes(0, 1, lanes);
    crate::kernels::support::lanes_inside(b, first, offsets, len, lanes)
}

/// `Bᵀ d` of F(2, 3) on four points.
fn winograd_bt(b: &mut Builder<'_>, [d0, d1, d2, d3]: [ValueId; 4]) -> [ValueId; 4] {
    [
        b.subf(d0, d2),
        b.addf(d1, d2),
        b.subf(d2, d1),
        b.subf(d1, d3),
    ]
}

/// `Aᵀ m` of F(2, 3) on four points.
fn winograd_at(b: &mut Builder<'_>, [m0, m1, m2, m3]: [ValueId; 4]) -> [ValueId; 2] {
    let s = b.addf(m0, m1);
    let first = b.addf(s, m2);
    let d = b.subf(m1, m2);
    let second = b.subf(d, m3);
    [first, second]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_bytes(v: &[f64]) -> Vec<u8> {
        v.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect()
    }

    fn transformed(w: &[u8], k: usize, c: usize) -> Vec<u8> {
        let mut u = Vec::new();
        transform_weights(w, k, c, &mut u);
        u
    }

    fn floats(b: &[u8]) -> Vec<f64> {
        b.chunks_exact(4)
            .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
            .collect()
    }

    /// U packed as the GEMM reads it: position ξ's A panels (MR rows per
    /// depth step, rows past K zero), position after position, depth
    /// blocks KC deep.
    #[test]
    fn packed_u_is_in_the_gemm_panel_order() {
        let (k, c) = (5, 3);
        let w: Vec<f64> = (0..k * c * 9).map(|i| (i as f64 * 0.37).cos()).collect();
        let w = f32_bytes(&w);
        let mut bl = gemm::Blocking::for_target(256, &Type::f32());
        bl.kc = 2;
        let mr = bl.panel_rows as usize;
        let u = floats(&transformed(&w, k, c));
        let layout = gemm::PackedA::new(4, (16, k, c), bl).unwrap();
        let mut packed = Vec::new();
        layout.pack(&transformed(&w, k, c), &mut packed);
        let packed = floats(&packed);
        assert_eq!(packed.len(), layout.elements());
        let (pad, per_position) = (layout.padded, layout.elements() / 16);
        for (xi, ko, ci) in
            (0..16).flat_map(|x| (0..k).flat_map(move |o| (0..c).map(move |i| (x, o, i))))
        {
            let (pc, kk) = (ci / 2 * 2, ci % 2);
            let kcur = 2.min(c - pc);
            let at = pc * pad + ko / mr * mr * kcur + kk * mr + ko % mr;
            let want = u[xi * k * c + ko * c + ci];
            assert_eq!(packed[xi * per_position + at], want, "ξ {xi} k {ko} c {ci}");
        }
    }
}
