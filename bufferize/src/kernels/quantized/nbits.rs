//! MatMulNBits (onnxruntime's `com.microsoft` op of int4/int8 language
//! models): `Y[.., n] = bias[n] + Σ_k A[.., k] · W[n, k]`, where
//! `W[n, k] = (q[n, k] - zp[n, b]) · scale[n, b]` for the block `b = k /
//! block_size`, and `q` are `bits`-bit codes packed low bits first in
//! `B [N, ⌈K / block_size⌉, block_size · bits / 8]`.
//!
//! Never a dequantized copy of the weights. Few rows (a decode step):
//! register tiles, 16 codes per step unpacked in registers and
//! dequantized by one FMA (`q · scale + shift`, `shift = -zp · scale` per
//! block), each feeding the tile's independent accumulators. 12 rows or
//! more (a prompt): the threads share out panels of weight columns (512
//! KiB); each dequantizes its panel straight into the GEMM's packed B
//! layout (16 columns × 16 codes transposed in registers), then runs the
//! GEMM on it. Zero points are absent (the code midpoint),
//! packed codes like `q` (`uint8`), or values of A's type.

use crate::convert::{dims, Lowering};
use crate::kernels::{linalg::gemm, support::alloc_result, support::checks, support::elem_of};
use crate::loops::{loop_nest_by_work, Bounds, GEMM_MIN_WORK};
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
/// time (a mismatch would read out of bounds); scales and zero points as
/// flat (1-D) views.
struct Operands {
    a: ValueId,
    codes: ValueId,
    scales: ValueId,
    zero_points: Option<ValueId>,
    bias: Option<ValueId>,
}

fn operands(cx: &Lowering, b: &mut Builder<'_>, op: OpId, l: &Layout) -> Result<Operands> {
    let m = &*b.m;
    let mut o = Operands {
        a: cx.input(m, op, ops::MatMulNBits::A)?,
        codes: cx.input(m, op, ops::MatMulNBits::B)?,
        scales: cx.input(m, op, ops::MatMulNBits::SCALES)?,
        zero_points: cx.optional_input(m, op, ops::MatMulNBits::ZERO_POINTS)?,
        bias: cx.optional_input(m, op, ops::MatMulNBits::BIAS)?,
    };
    if cx.optional_input(m, op, ops::MatMulNBits::G_IDX)?.is_some() {
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
    // The flat view of `v`, once its size is checked.
    let flat = |b: &mut Builder<'_>, v: ValueId, want: i64, what: &str| -> Result<ValueId> {
        let ds = dims(b, v);
        let n = crate::kernels::support::index::product(b, &ds);
        let w = b.const_index(want);
        let msg = format!("{what} does not match N and the blocks");
        checks::equal(b, op, n, w, &msg)?;
        Ok(gemm::flat(b, v, w))
    };
    expect(b, o.codes, &[l.n, l.blocks, l.blob], "B")?;
    o.scales = flat(b, o.scales, l.n * l.blocks, "scales")?;
    if let (Some(z), Some(len)) = (o.zero_points, zp_len) {
        o.zero_points = Some(flat(b, z, len, "zero_points")?);
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

/// Code number `at` of a packed run of `bits`-bit codes starting at byte
/// `base` of `v` (flat, `u8` codes), as an f32.
fn code(b: &mut Builder<'_>, v: ValueId, base: ValueId, at: ValueId, bits: i64) -> ValueId {
    let per_byte = b.const_index(8 / bits);
    let byte_at = b.divui(at, per_byte);
    let byte_at = b.addi(base, byte_at);
    let byte = b.load(v, &[byte_at]);
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
        let v = b.load(z, &[at]);
        return crate::kernels::support::scalar::fcast(b, v, &Type::f32());
    }
    let row_bytes = b.const_index((l.blocks * l.bits + 7) / 8);
    let base = b.muli(n, row_bytes);
    code(b, z, base, blk, l.bits)
}

/// Codes, and lanes of A, per step of the dot products.
const LANES: i64 = 16;
/// Register tiles (rows of A, weight columns): each dequantized vector
/// serves the tile's rows, each A vector its columns, and the R·C
/// accumulators are independent chains (one chain is FMA-latency bound).
/// Few rows (a decode step) take the first, more the second.
const FEW_ROWS: (i64, i64) = (1, 4);
const MANY_ROWS: (i64, i64) = (4, 2);
/// Rows from which Y is a GEMM over dequantized panels of the weights:
/// the panels cost about as much as 10 rows of tiles (4096 × 4096, one
/// thread: 8 rows 3.2 ms as a GEMM, 2.7 in tiles; 16 rows 4.3 and 5.1).
const GEMM_ROWS: i64 = 12;
/// Bytes of one dequantized panel (weight columns × K, f32): a few
/// columns at a time, never the whole weight.
const PANEL_BYTES: i64 = 512 << 10;

pub fn matmul_nbits(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    let l = layout(b, op)?;
    let o = operands(cx, b, op, &l)?;
    let elem = elem_of(b.m, o.a);
    let da = dims(b, o.a);
    let lead = da[..da.len() - 1].to_vec();
    let n_v = b.const_index(l.n);
    let mut out_dims = lead.clone();
    out_dims.push(n_v);
    let out = alloc_result(b, op, 0, &out_dims)?;
    let k = Kernel {
        o,
        l,
        out,
        elem,
        lead,
    };
    let Some(&rows) = k.lead.last() else {
        k.tiles(b, FEW_ROWS);
        return Ok(vec![out]);
    };
    // Few rows: register tiles; many (a prompt): a GEMM.
    let gemm = (k.elem == Type::f32()).then_some(cx.gemm);
    let pick = |b: &mut Builder<'_>,
                at_least: i64,
                yes: &dyn Fn(&mut Builder<'_>),
                no: &dyn Fn(&mut Builder<'_>)| {
        let bound = b.const_index(at_least);
        let many = b.cmp(ir::builder::Cmp::Ge, rows, bound);
        b.scf_if(
            many,
            &[],
            &mut |b| {
                yes(b);
                Vec::new()
            },
            Some(&mut |b| {
                no(b);
                Vec::new()
            }),
        );
    };
    let tiles = |b: &mut Builder<'_>| {
        pick(b, MANY_ROWS.0, &|b| k.tiles(b, MANY_ROWS), &|b| {
            k.tiles(b, FEW_ROWS)
        })
    };
    match gemm {
        Some(isa) => pick(b, GEMM_ROWS, &|b| k.panels(b, isa), &tiles),
        None => tiles(b),
    }
    Ok(vec![out])
}

struct Kernel {
    o: Operands,
    l: Layout,
    out: ValueId,
    elem: Type,
    /// A's dims but the last (the rows are the last of them).
    lead: Vec<ValueId>,
}

impl Kernel {
    /// Y as GEMMs over panels of weight columns, the panels shared out to
    /// the threads: each dequantizes its panel straight into the GEMM's
    /// packed B layout (no copy to pack again), then multiplies every row
    /// of A by it on its own thread.
    fn panels(&self, b: &mut Builder<'_>, isa: gemm::Isa) {
        let (o, l) = (&self.o, &self.l);
        let f32 = Type::f32();
        let mut v = gemm::Variant::plain(&f32, isa, gemm::BSource::Matrix { unit_n: true });
        v.a_direct = true;
        v.b_packed = true;
        let nr = v.blocking.panel_cols;
        let width = panel_width(l, nr);
        let (k_v, n_v, np) = (b.const_index(l.k), b.const_index(l.n), b.const_index(width));
        let rows = crate::kernels::support::index::product(b, &self.lead);
        let a_len = b.muli(rows, k_v);
        let af = gemm::flat(b, o.a, a_len);
        let y_len = b.muli(rows, n_v);
        let yf = gemm::flat(b, self.out, y_len);
        let bias = o.bias.map(|bias| {
            v.bias = gemm::Bias::Col;
            gemm::flat(b, bias, n_v)
        });
        let bounds = Bounds::new(b);
        let (zero, one) = (bounds.zero, bounds.one);
        let count = b.ceildivsi(n_v, np);
        let work = [n_v, k_v, rows];
        loop_nest_by_work(b, &bounds, &[count], &work, GEMM_MIN_WORK, &mut |b, ivs| {
            let n0 = b.muli(ivs[0], np);
            let left = b.subi(n_v, n0);
            let cols = b.minui(left, np);
            let len = b.const_index(width * l.k);
            let panel = crate::kernels::support::alloc_sized(b, &f32, &[len]);
            let packed = Packed {
                buf: panel,
                width,
                nr,
                kc: v.blocking.kc,
            };
            self.dequantize_packed(b, &packed, n0, cols);
            let call = gemm::Call {
                a: af,
                a_off: zero,
                a_rs: k_v,
                a_cs: one,
                b: panel,
                b_off: zero,
                b_args: vec![np, one],
                c: yf,
                c_off: n0,
                ldc: n_v,
                bias: bias.map(|buf| gemm::BiasArg {
                    buf,
                    off: n0,
                    rs: zero,
                }),
                residual: None,
                m: rows,
                n: cols,
                k: k_v,
            };
            gemm::call(b, &v, &call);
        });
    }

    /// Weight columns `n0 .. n0 + cols` as f32 into `p`, LANES columns at a
    /// time: LANES codes along K of each column, dequantized, transposed
    /// in registers into LANES columns at each K, stored as the packed
    /// layout has them. Every NR panel the GEMM reads is written whole
    /// (columns past the end repeat the last).
    fn dequantize_packed(&self, b: &mut Builder<'_>, p: &Packed, n0: ValueId, cols: ValueId) {
        let (o, l) = (&self.o, &self.l);
        let nr_v = b.const_index(p.nr);
        let covered = b.ceildivsi(cols, nr_v);
        let covered = b.muli(covered, nr_v);
        let lanes = b.const_index(LANES);
        let groups = b.ceildivsi(covered, lanes);
        let (zero, one) = (b.const_index(0), b.const_index(1));
        let last = b.const_index(l.n - 1);
        b.scf_for(zero, groups, one, &[], |b, g, _| {
            let j0 = b.muli(g, lanes);
            let first = b.addi(n0, j0);
            let columns: Vec<ValueId> = (0..LANES)
                .map(|c| {
                    let off = b.const_index(c);
                    let n = b.addi(first, off);
                    b.minui(n, last)
                })
                .collect();
            let per_block = |b: &mut Builder<'_>, blk| -> Vec<(ValueId, ValueId)> {
                columns
                    .iter()
                    .map(|&n| scale_shift(b, o, l, n, blk))
                    .collect()
            };
            let step =
                |b: &mut Builder<'_>, dq: &Vec<(ValueId, ValueId)>, st: &Step, _: &[ValueId]| {
                    let along_k: Vec<ValueId> = columns
                        .iter()
                        .zip(dq)
                        .map(|(&n, &(scale, shift))| {
                            let q = codes(b, o.codes, (n, st.blk, st.s), l.bits);
                            b.vfma(q, scale, shift)
                        })
                        .collect();
                    let at_k = transpose(b, along_k);
                    let valid = match st.mask {
                        None => LANES,
                        Some(_) => l.k % LANES,
                    };
                    p.store_rows(b, &at_k[..valid as usize], st.k0, j0, l.k);
                    Vec::new()
                };
            walk_k(b, l, &[], &per_block, &step);
            Vec::new()
        });
    }

    /// Y by tiles of `(rows, cols)`: column tiles outermost, the parallel
    /// loop when there is work (a decode step's one row still splits
    /// over N), then batch dims, then row tiles.
    fn tiles(&self, b: &mut Builder<'_>, (rows, cols): (i64, i64)) {
        let bounds = Bounds::new(b);
        let n_v = b.const_index(self.l.n);
        let c = b.const_index(cols);
        let mut ubs = vec![b.ceildivsi(n_v, c)];
        let row_count = self.lead.last().copied();
        if let Some((&m_v, batch)) = self.lead.split_last() {
            ubs.extend_from_slice(batch);
            let r = b.const_index(rows);
            ubs.push(b.ceildivsi(m_v, r));
        }
        let mut work = vec![n_v, b.const_index(self.l.k)];
        work.extend_from_slice(&self.lead);
        loop_nest_by_work(b, &bounds, &ubs, &work, GEMM_MIN_WORK, &mut |b, ivs| {
            let last = ivs.len() - 1;
            let tile = Tile {
                cols: span(b, ivs[0], cols, n_v),
                batch: ivs[1..last.max(1)].to_vec(),
                rows: row_count.map(|m| span(b, ivs[last], rows, m)),
            };
            let sums = row_dots(b, &self.o, &self.l, &tile);
            store_tile(b, self, &tile, &sums);
        });
    }
}

/// Columns per panel: whole NR panels and LANES groups, PANEL_BYTES of
/// f32, but at least 8 panels when N has them (every thread gets some).
fn panel_width(l: &Layout, nr: i64) -> i64 {
    let unit = nr * LANES / gcd(nr, LANES);
    let by_bytes = (PANEL_BYTES / (4 * l.k)).max(unit) / unit * unit;
    let by_share = ((l.n + 7) / 8 + unit - 1) / unit * unit;
    by_bytes.min(by_share).max(unit)
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// A panel of B in the GEMM's packed layout: per depth block of `kc` at
/// `pc · width`, per NR columns at `col · kcur` in it, NR columns a step.
struct Packed {
    buf: ValueId,
    width: i64,
    nr: i64,
    kc: i64,
}

impl Packed {
    /// Stores `rows[i]` (LANES columns from `j0`) as row `k0 + i` of B;
    /// `k0` is a multiple of LANES, so all lie in one depth block.
    fn store_rows(&self, b: &mut Builder<'_>, rows: &[ValueId], k0: ValueId, j0: ValueId, k: i64) {
        let (kc, nr, width) = (
            b.const_index(self.kc),
            b.const_index(self.nr),
            b.const_index(self.width),
        );
        // Depth block `pc`, `within` steps into it.
        let within = b.remui(k0, kc);
        let pc = b.subi(k0, within);
        let left = b.const_index(k);
        let left = b.subi(left, pc);
        let kcur = b.minui(left, kc);
        let block = b.muli(pc, width);
        let step = b.muli(within, nr);
        let block = b.addi(block, step);
        let chunk = self.nr.min(LANES);
        for c in 0..LANES / chunk {
            let off = b.const_index(c * chunk);
            let j = b.addi(j0, off);
            let at = gemm::panel_start(b, j, kcur, self.nr, chunk);
            let base = b.addi(block, at);
            for (i, &row) in rows.iter().enumerate() {
                let part = match chunk == LANES {
                    true => row,
                    false => {
                        let lanes: Vec<i64> = (c * chunk..(c + 1) * chunk).collect();
                        b.shuffle(row, row, &lanes)
                    }
                };
                let at = b.const_index(i as i64 * self.nr);
                let at = b.addi(base, at);
                b.vstore(part, self.buf, &[at]);
            }
        }
    }
}

/// The transpose of a square of LANES vectors: bit `d` of the vector
/// index and of the lane index swap, one bit a round.
fn transpose(b: &mut Builder<'_>, mut v: Vec<ValueId>) -> Vec<ValueId> {
    let n = v.len();
    let mut d = 1;
    while d < n {
        for i in (0..n).filter(|i| i & d == 0) {
            let (x, y) = (v[i], v[i | d]);
            let low: Vec<i64> = (0..n)
                .map(|c| if c & d == 0 { c } else { n + c - d } as i64)
                .collect();
            let high: Vec<i64> = (0..n)
                .map(|c| if c & d == 0 { c + d } else { n + c } as i64)
                .collect();
            v[i] = b.shuffle(x, y, &low);
            v[i | d] = b.shuffle(x, y, &high);
        }
        d <<= 1;
    }
    v
}

/// The `size` indices of tile `t` along a dim of `len`: each clamped to
/// the last (a tail tile computes a valid one twice) with whether it is
/// real (`None` when the tile cannot pass the end).
type Span = Vec<(ValueId, Option<ValueId>)>;

fn span(b: &mut Builder<'_>, t: ValueId, size: i64, len: ValueId) -> Span {
    let per = b.const_index(size);
    let first = b.muli(t, per);
    let one = b.const_index(1);
    let last = b.subi(len, one);
    (0..size)
        .map(|i| {
            let off = b.const_index(i);
            let at = b.addi(first, off);
            let real = (size > 1).then(|| b.cmp(ir::builder::Cmp::Lt, at, len));
            (b.minui(at, last), real)
        })
        .collect()
}

/// Weight columns by rows of A.
struct Tile {
    cols: Span,
    batch: Vec<ValueId>,
    /// None: A is one row (rank 1).
    rows: Option<Span>,
}

impl Tile {
    fn row_count(&self) -> usize {
        self.rows.as_ref().map_or(1, Vec::len)
    }
    /// The index of row `r` in A (or Y) without its last dim.
    fn row(&self, r: usize) -> Vec<ValueId> {
        let mut idx = self.batch.clone();
        idx.extend(self.rows.as_ref().and_then(|s| s.get(r)).map(|x| x.0));
        idx
    }
    /// Whether row `r` is real (None: it always is).
    fn row_real(&self, r: usize) -> Option<ValueId> {
        self.rows.as_ref().and_then(|s| s.get(r)).and_then(|x| x.1)
    }
}

/// The dot products of the tile, each a vector of partial sums, columns
/// by rows (index `c · rows + r`).
fn row_dots(b: &mut Builder<'_>, o: &Operands, l: &Layout, t: &Tile) -> Vec<ValueId> {
    let zero = b.const_float(0.0, Type::f32());
    let zeros = b.broadcast(zero, LANES);
    let inits = vec![zeros; t.cols.len() * t.row_count()];
    let per_block = |b: &mut Builder<'_>, blk| -> Vec<(ValueId, ValueId)> {
        t.cols
            .iter()
            .map(|&(n, _)| scale_shift(b, o, l, n, blk))
            .collect()
    };
    let step = |b: &mut Builder<'_>, dq: &Vec<(ValueId, ValueId)>, st: &Step, accs: &[ValueId]| {
        let a_rows: Vec<ValueId> = (0..t.row_count())
            .map(|r| load_a(b, o.a, &t.row(r), st.k0, st.mask))
            .collect();
        let mut out = accs.to_vec();
        for (c, (&(n, _), &(scale, shift))) in t.cols.iter().zip(dq).enumerate() {
            let q = codes(b, o.codes, (n, st.blk, st.s), l.bits);
            let w = b.vfma(q, scale, shift);
            for (r, &a) in a_rows.iter().enumerate() {
                let i = c * a_rows.len() + r;
                out[i] = b.vfma(w, a, out[i]);
            }
        }
        out
    };
    walk_k(b, l, &inits, &per_block, &step)
}

/// Where one step of a walk over K stands: block `blk`, step `s` of it,
/// its first index `k0`, and the lane mask of a partial block's last step.
struct Step {
    blk: ValueId,
    s: ValueId,
    k0: ValueId,
    mask: Option<ValueId>,
}

/// One step of [`walk_k`]: the block's data, where it stands, the
/// carried values in, the carried values out.
type StepFn<'a, T> = dyn Fn(&mut Builder<'_>, &T, &Step, &[ValueId]) -> Vec<ValueId> + 'a;

/// Walks K a block at a time and LANES codes a step (a partial last
/// block ends with a masked step), carrying `carried`: `per_block` once
/// per block (its scales), `step` once per step, returning the carried
/// values.
fn walk_k<T>(
    b: &mut Builder<'_>,
    l: &Layout,
    carried: &[ValueId],
    per_block: &dyn Fn(&mut Builder<'_>, ValueId) -> T,
    step: &StepFn<'_, T>,
) -> Vec<ValueId> {
    let block =
        |b: &mut Builder<'_>, blk: ValueId, carried: &[ValueId], (whole, tail): (i64, i64)| {
            let data = per_block(b, blk);
            let size = b.const_index(l.block);
            let k_block = b.muli(blk, size);
            let at = move |b: &mut Builder<'_>, s: ValueId, mask: Option<ValueId>| {
                let lanes = b.const_index(LANES);
                let k_off = b.muli(s, lanes);
                let k0 = b.addi(k_block, k_off);
                Step { blk, s, k0, mask }
            };
            let (lo, one, hi) = (b.const_index(0), b.const_index(1), b.const_index(whole));
            let lp = b.scf_for(lo, hi, one, carried, |b, s, c| {
                let st = at(b, s, None);
                step(b, &data, &st, c)
            });
            let out = b.m.results(lp).to_vec();
            if tail == 0 {
                return out;
            }
            let (s, left) = (b.const_index(whole), b.const_index(tail));
            let mask = b.create_mask(left, LANES);
            let st = at(b, s, Some(mask));
            step(b, &data, &st, &out)
        };
    let (lo, one) = (b.const_index(0), b.const_index(1));
    let full = b.const_index(l.k / l.block);
    let lp = b.scf_for(lo, full, one, carried, |b, blk, c| {
        block(b, blk, c, (l.block / LANES, 0))
    });
    let out = b.m.results(lp).to_vec();
    // The last, partial block: whole steps, then one under a lane mask.
    let rest = l.k % l.block;
    if rest == 0 {
        return out;
    }
    let blk = b.const_index(l.k / l.block);
    block(b, blk, &out, (rest / LANES, rest % LANES))
}

/// The scale and `-zp · scale` of block `blk` of weight column `n`, in
/// every lane: a weight is `q · scale + shift`, one FMA.
fn scale_shift(
    b: &mut Builder<'_>,
    o: &Operands,
    l: &Layout,
    n: ValueId,
    blk: ValueId,
) -> (ValueId, ValueId) {
    let row_blocks = b.const_index(l.blocks);
    let at = b.muli(n, row_blocks);
    let at = b.addi(at, blk);
    let scale = b.load(o.scales, &[at]);
    let scale = crate::kernels::support::scalar::fcast(b, scale, &Type::f32());
    let zp = zero_point(b, o, l, n, blk);
    let shift = b.mul(zp, scale);
    let shift = b.negf(shift);
    (b.broadcast(scale, LANES), b.broadcast(shift, LANES))
}

/// LANES elements of row `row` of A from `k0`, as f32 (lanes off in
/// `mask` are zero and not read).
fn load_a(
    b: &mut Builder<'_>,
    a: ValueId,
    row: &[ValueId],
    k0: ValueId,
    mask: Option<ValueId>,
) -> ValueId {
    let mut idx = row.to_vec();
    idx.push(k0);
    let elem = elem_of(b.m, a);
    let v = match mask {
        None => b.vload(a, &idx, LANES),
        Some(mask) => {
            let zero = b.zero(&elem);
            let pass = b.broadcast(zero, LANES);
            b.masked_load(a, &idx, mask, pass)
        }
    };
    match elem == Type::f32() {
        true => v,
        false => b.extf(v, Type::vector(LANES, Type::f32())),
    }
}

/// Step `c` of block `blk` of weight row `n`: LANES codes in K order, as
/// f32 lanes. The bytes hold 8 / bits codes each, low bits first: the
/// codes are split by shifts and masks, then interleaved back.
fn codes(
    b: &mut Builder<'_>,
    codes: ValueId,
    (n, blk, c): (ValueId, ValueId, ValueId),
    bits: i64,
) -> ValueId {
    let per = 8 / bits;
    let bytes = LANES / per;
    let width = b.const_index(bytes);
    let at = b.muli(c, width);
    let v = b.vload(codes, &[n, blk, at], bytes);
    // Signless bytes: arith works on those (B is uint8).
    let elem = Type::i(8);
    let v = b.vbitcast(v, bytes, elem.clone());
    let mut parts = Vec::with_capacity(per as usize);
    for i in 0..per {
        let mut p = v;
        if i > 0 {
            let s = b.const_int(i * bits, elem.clone());
            let s = b.broadcast(s, bytes);
            p = b.shrui(p, s);
        }
        if per > 1 {
            let m = b.const_int((1 << bits) - 1, elem.clone());
            let m = b.broadcast(m, bytes);
            p = b.andi(p, m);
        }
        parts.push(p);
    }
    // Concatenate the parts, then pick lane l from part l % per.
    while parts.len() > 2 {
        let n = parts.len() / 2;
        let halves: Vec<ValueId> = (0..n)
            .map(|i| {
                let len =
                    b.m.value_type(parts[2 * i])
                        .as_vector()
                        .map_or(0, |v| v.len());
                let both: Vec<i64> = (0..2 * len).collect();
                b.shuffle(parts[2 * i], parts[2 * i + 1], &both)
            })
            .collect();
        parts = halves;
    }
    let ordered = match parts.as_slice() {
        [one] => *one,
        [x, y] => {
            let mask: Vec<i64> = (0..LANES).map(|l| (l % per) * bytes + l / per).collect();
            b.shuffle(*x, *y, &mask)
        }
        _ => v,
    };
    let wide = b.extui(ordered, Type::vector(LANES, Type::i(32)));
    b.uitofp(wide, Type::vector(LANES, Type::f32()))
}

/// Y at the tile's rows and columns: the lanes summed, plus the bias;
/// rows and columns past the ends (tail tiles) are not stored.
fn store_tile(b: &mut Builder<'_>, k: &Kernel, t: &Tile, sums: &[ValueId]) {
    for (c, &(n, col_real)) in t.cols.iter().enumerate() {
        let bias = k.o.bias.map(|bias| {
            let v = b.load(bias, &[n]);
            crate::kernels::support::scalar::fcast(b, v, &Type::f32())
        });
        for r in 0..t.row_count() {
            let row_real = t.row_real(r);
            let mut at = t.row(r);
            at.push(n);
            let Some(&sum) = sums.get(c * t.row_count() + r) else {
                continue;
            };
            let mut y = b.reduction(ir::builder::Reduce::Add, sum);
            if let Some(bias) = bias {
                y = b.addf(y, bias);
            }
            let y = crate::kernels::support::scalar::fcast(b, y, &k.elem);
            let real = match (col_real, row_real) {
                (Some(x), Some(y)) => Some(b.andi(x, y)),
                (x, y) => x.or(y),
            };
            match real {
                None => b.store(y, k.out, &at),
                Some(real) => {
                    b.scf_if(
                        real,
                        &[],
                        &mut |b| {
                            b.store(y, k.out, &at);
                            Vec::new()
                        },
                        None,
                    );
                }
            }
        }
    }
}
