//! A packed, cache-blocked GEMM, `C = epilogue(A · B)`, with a
//! register-blocked vector micro-kernel (the BLIS structure, written in
//! our IR): B is packed into panels of NR columns and A into panels of MR
//! rows for one (KC × NC) and (MC × KC) block at a time; the micro-kernel
//! keeps an MR × NR tile of C in vector registers while it walks KC.
//!
//! Every size (M, N, K, leading dims, offsets) is a runtime argument: the
//! loop structure comes only from what is static (element type, vector
//! width, where B's elements come from, the epilogue), so a model with
//! dynamic dims runs the same code as one compiled for fixed sizes.
//!
//! B is either a matrix with runtime strides (any transpose) or, for
//! convolution, the implicit im2col view of an image (see `pack`): the
//! packer gathers `x[c, oh·s + kh·d - p, ...]` directly, with the zero
//! padding, so no im2col buffer is made.

mod gemv;
mod micro;
mod pack;
mod tail;

use ir::dialects::func::{level_variant, X86_LEVELS};
use ir::{Builder, Type, ValueId};

pub(in crate::kernels) use pack::window_origins;
pub use pack::{ConvGeometry, PackedA, PackedB};

/// The vector widths a GEMM function is built for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Isa {
    /// The target's one width (bits).
    Fixed(u32),
    /// One variant per x86-64 level (v2, v3, v4: 128-, 256- and 512-bit
    /// vectors), the one for the running CPU chosen at each call (the
    /// level is read once, `func::CPU_LEVEL_FN`). Operands packed at
    /// compile time use v4's panels; each variant's register tile
    /// covers them in parts.
    X86Levels,
}

impl Isa {
    /// The width packed layouts are made for.
    pub fn layout_bits(self) -> u32 {
        match self {
            Isa::Fixed(bits) => bits,
            Isa::X86Levels => X86_LEVELS[0].vector_bits,
        }
    }
}

/// Register and cache blocking for one vector width.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Blocking {
    /// Lanes per vector.
    pub vw: i64,
    /// Rows of the register tile.
    pub mr: i64,
    /// Vectors per row of the register tile (NR = nv · vw).
    pub nv: i64,
    /// Rows of a packed A panel: MR, or a multiple of it when the
    /// layout is shared with wider variants.
    pub panel_rows: i64,
    /// Columns of a packed B panel: NR, or a multiple of it.
    pub panel_cols: i64,
    /// Depth of one packed block (fits L1 with an A and a B panel).
    pub kc: i64,
    /// Rows of A packed at once (fits L2).
    pub mc: i64,
    /// Columns of B packed at once (fits L3).
    pub nc: i64,
    /// Fewer micro-kernel sizes for edge tiles (a full one and one of a
    /// single vector): the narrower levels of a multi-level build, whose
    /// code would otherwise double the compile time.
    pub compact: bool,
}

impl Blocking {
    /// The blocking for `bits`-wide vector registers and `elem`
    /// (`mr · nv` accumulators plus `nv` B vectors and a broadcast fit the
    /// register file: 16 registers below 512 bits, 32 at 512).
    pub fn for_target(bits: u32, elem: &Type) -> Blocking {
        let vw = lanes(bits, elem);
        let (mr, nv) = if bits >= 512 { (8, 3) } else { (6, 2) };
        Blocking {
            vw,
            mr,
            nv,
            panel_rows: mr,
            panel_cols: vw * nv,
            kc: 256,
            mc: mr * 12,
            nc: vw * nv * 64,
            compact: false,
        }
    }
    /// The layout packed operands of `isa` share.
    pub fn of(isa: Isa, elem: &Type) -> Blocking {
        Blocking::for_target(isa.layout_bits(), elem)
    }
    /// The blocking of one level of a multi-level build over `layout`,
    /// the panels of operands packed at compile time (`shared`: A's rows,
    /// B's columns). The register tile is the level's own (6 × 2 vectors
    /// at 256 bits, as many accumulators as fit 16 registers; 4 × 1 at
    /// 128, the baseline of CPUs from before 2013, small for compile
    /// time), narrowed to divide a shared panel (4 × 3 at 256); operands
    /// packed at run time get panels of the tile's own size, which a tile
    /// reads whole (a part of a wider panel costs a cache line per half
    /// line read).
    fn within(bits: u32, layout: Blocking, elem: &Type, shared: (bool, bool)) -> Blocking {
        let vw = lanes(bits, elem);
        let (mut mr, mut nv) = match bits {
            512.. => (8, 3),
            256..=511 => (6, 2),
            _ => (4, 1),
        };
        if shared.0 || shared.1 {
            if (256..512).contains(&bits) {
                (mr, nv) = (4, 3);
            }
            while mr > 1 && layout.panel_rows % mr != 0 {
                mr -= 1;
            }
            while nv > 1 && layout.panel_cols % (vw * nv) != 0 {
                nv -= 1;
            }
        }
        let (panel_rows, mc) = match shared.0 {
            true => (layout.panel_rows, layout.mc),
            false => (mr, mr * 12),
        };
        let (panel_cols, nc) = match shared.1 {
            true => (layout.panel_cols, layout.nc),
            false => (vw * nv, vw * nv * 64),
        };
        Blocking {
            vw,
            mr,
            nv,
            panel_rows,
            panel_cols,
            mc,
            nc,
            compact: vw < layout.vw,
            ..layout
        }
    }
    pub fn nr(&self) -> i64 {
        self.vw * self.nv
    }
    /// Vectors per row of a packed B panel.
    pub fn panel_vectors(&self) -> i64 {
        self.panel_cols / self.vw
    }
}

/// Where a tile's part of a packed block starts: row or column `at` of
/// the block lies in panel `at / panel`, `at % panel` into it, and panels
/// are `kcur · panel` elements apart (`at · kcur` when tiles are whole
/// panels).
pub(in crate::kernels) fn panel_start(
    b: &mut Builder<'_>,
    at: ValueId,
    kcur: ValueId,
    panel: i64,
    tile: i64,
) -> ValueId {
    if panel == tile {
        return b.muli(at, kcur);
    }
    let panel = b.const_index(panel);
    let within = b.remui(at, panel);
    let first = b.subi(at, within);
    let start = b.muli(first, kcur);
    b.addi(start, within)
}

fn lanes(bits: u32, elem: &Type) -> i64 {
    let elem_bits = i64::from(elem.bit_width().unwrap_or(32));
    (i64::from(bits) / elem_bits).max(1)
}

/// Where the elements of B come from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BSource {
    /// `B[k, n] = b[off + k·rs + n·cs]`; `unit_n`: `cs` is 1 (vector loads).
    Matrix { unit_n: bool },
    /// The im2col view of one image group of a convolution.
    Conv(ConvGeometry),
}

/// What is added to `alpha · A · B` before C is written, scaled by beta.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Bias {
    None,
    /// `bias[off + m·rs]`, one per row (a convolution's per-channel bias;
    /// `rs` 0 for a scalar).
    Row,
    /// `bias[off + m·rs + n]`: a row vector (`rs` 0) or a matrix.
    Col,
}

/// The runtime operands of a bias: element `(m, n)` per [`Bias`].
#[derive(Copy, Clone)]
pub struct BiasArg {
    pub buf: ValueId,
    pub off: ValueId,
    pub rs: ValueId,
}

pub use crate::kernels::support::epilogue::Act;

/// The static shape of one GEMM function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Variant {
    pub elem: Type,
    pub isa: Isa,
    /// The layout of packed operands, and the register tile of a single
    /// width (each variant of [`Isa::X86Levels`] gets its own tile).
    pub blocking: Blocking,
    pub b: BSource,
    pub bias: Bias,
    /// A value of C's layout added after the bias (a residual connection).
    pub residual: bool,
    /// A is a constant packed at compile time ([`PackedA`]): no
    /// packing at run time; `a_rs` carries its padded row count.
    pub a_packed: bool,
    /// B is a constant packed at compile time ([`PackedB`]); the
    /// first of `b_args` carries its padded column count.
    pub b_packed: bool,
    /// A is row-major (`a_cs` is 1) and read in place by the
    /// micro-kernel: packing it cost as much as the products when N is a
    /// few panels (a transformer's activations against its weights).
    pub a_direct: bool,
    pub act: Act,
    /// `alpha · A · B` (Gemm's alpha), exact bits.
    pub alpha_bits: u64,
    /// `beta · bias` (Gemm's beta), exact bits.
    pub beta_bits: u64,
}

impl Variant {
    /// A plain product of `elem` for the target's vector width.
    pub fn plain(elem: &Type, isa: Isa, b: BSource) -> Variant {
        Variant {
            elem: elem.clone(),
            isa,
            blocking: Blocking::of(isa, elem),
            b,
            bias: Bias::None,
            residual: false,
            a_packed: false,
            b_packed: false,
            a_direct: false,
            act: Act::None,
            alpha_bits: 1f64.to_bits(),
            beta_bits: 1f64.to_bits(),
        }
    }
    pub fn alpha(&self) -> f64 {
        f64::from_bits(self.alpha_bits)
    }
    pub fn beta(&self) -> f64 {
        f64::from_bits(self.beta_bits)
    }
    /// A symbol name unique to the variant and its count of B arguments
    /// (the function's signature).
    fn name(&self, b_args: usize) -> String {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (self, b_args).hash(&mut h);
        let b = match &self.b {
            BSource::Matrix { unit_n: true } => "m1".to_string(),
            BSource::Matrix { unit_n: false } => "ms".to_string(),
            BSource::Conv(g) => format!("c{}", g.tag()),
        };
        format!(
            "__onnxc_gemm_{}_v{}_{b}_{:016x}",
            crate::kernels::support::type_tag(&self.elem),
            self.blocking.vw,
            h.finish()
        )
    }
}

/// The runtime operands of one call. Offsets and strides are in elements
/// of flat (1-D) views of the buffers.
#[derive(Clone)]
pub struct Call {
    pub a: ValueId,
    pub a_off: ValueId,
    /// `A[m, k] = a[a_off + m·a_rs + k·a_cs]`.
    pub a_rs: ValueId,
    pub a_cs: ValueId,
    pub b: ValueId,
    pub b_off: ValueId,
    /// Matrix B: `B[k, n] = b[b_off + k·b_rs + n·b_cs]`. Conv B: the
    /// image's runtime extents (see [`ConvGeometry::runtime_args`]).
    pub b_args: Vec<ValueId>,
    pub c: ValueId,
    pub c_off: ValueId,
    pub ldc: ValueId,
    pub bias: Option<BiasArg>,
    /// `res[c_off + m·ldc + n]`, added after the bias.
    pub residual: Option<ValueId>,
    pub m: ValueId,
    pub n: ValueId,
    pub k: ValueId,
}

/// Emits a call of the GEMM function of `v`, creating it at the end of the
/// module on first use.
pub fn call(b: &mut Builder<'_>, v: &Variant, c: &Call) {
    let name = v.name(c.b_args.len());
    if b.m.lookup_symbol(&name).is_none() {
        define(b, v, &name, c);
    }
    let c_view = crate::kernels::support::any_layout(b, c.c);
    let mut args = vec![c.a, c.b, c_view];
    if let Some(bias) = c.bias {
        args.push(bias.buf);
    }
    args.extend(c.residual);
    args.extend([c.m, c.n, c.k, c.a_off, c.a_rs, c.a_cs, c.b_off]);
    args.extend(&c.b_args);
    args.extend([c.c_off, c.ldc]);
    if let Some(bias) = c.bias {
        args.extend([bias.off, bias.rs]);
    }
    b.call(&name, &args, &[]);
}

/// The function's parameters, in `call`'s order.
struct Params {
    a: ValueId,
    b: ValueId,
    c: ValueId,
    bias: Option<BiasArg>,
    residual: Option<ValueId>,
    m: ValueId,
    n: ValueId,
    k: ValueId,
    a_off: ValueId,
    a_rs: ValueId,
    a_cs: ValueId,
    b_off: ValueId,
    b_args: Vec<ValueId>,
    c_off: ValueId,
    ldc: ValueId,
}

/// Defines the GEMM function `name`: for [`Isa::X86Levels`], one function
/// per level, each compiled for its CPU, and `name` calling the one for
/// the running CPU.
fn define(b: &mut Builder<'_>, v: &Variant, name: &str, c: &Call) {
    if v.isa != Isa::X86Levels {
        return define_one(b, v, name, c, None);
    }
    let shared = (v.a_packed, v.b_packed);
    let mut variants = Vec::new();
    for l in X86_LEVELS {
        let mut variant = v.clone();
        variant.blocking = Blocking::within(l.vector_bits, v.blocking, &v.elem, shared);
        let vname = level_variant(name, l.level);
        define_one(b, &variant, &vname, c, Some(l.cpu));
        variants.push((l.level, vname));
    }
    let (mut fb, args) = crate::kernels::support::private_func(b.m, name, signature(b, c));
    fb.call_for_cpu_level(&variants, &args);
    fb.ret(&[]);
}

/// The parameter types of a GEMM function, in `call`'s order.
fn signature(b: &Builder<'_>, c: &Call) -> Vec<Type> {
    let flat = |x: ValueId| b.m.value_type(x).clone();
    let mut inputs = vec![
        flat(c.a),
        flat(c.b),
        crate::kernels::support::any_layout_type(&flat(c.c)),
    ];
    if let Some(bias) = c.bias {
        inputs.push(flat(bias.buf));
    }
    if let Some(r) = c.residual {
        inputs.push(flat(r));
    }
    inputs.extend(std::iter::repeat_n(Type::Index, 7 + c.b_args.len() + 2));
    if c.bias.is_some() {
        inputs.extend([Type::Index, Type::Index]);
    }
    inputs
}

/// One GEMM function, for `cpu` when given (else the module's).
fn define_one(b: &mut Builder<'_>, v: &Variant, name: &str, c: &Call, cpu: Option<&str>) {
    let n_b_args = c.b_args.len();
    let inputs = signature(b, c);
    let (mut fb, args) = crate::kernels::support::private_func(b.m, name, inputs);
    if let (Some(cpu), Some(f)) = (cpu, fb.m.lookup_symbol(name)) {
        fb.m.set_attr(
            f,
            ir::dialects::func::TARGET_CPU,
            ir::Attribute::string(cpu),
        );
    }
    // The parameters in `call`'s order (the count matches `inputs`).
    let nb = usize::from(c.bias.is_some());
    let nr = usize::from(c.residual.is_some());
    let rest = &args[3 + nb + nr..];
    let p = Params {
        a: args[0],
        b: args[1],
        c: args[2],
        bias: c.bias.map(|_| BiasArg {
            buf: args[3],
            off: rest[rest.len() - 2],
            rs: rest[rest.len() - 1],
        }),
        residual: c.residual.map(|_| args[3 + nb]),
        m: rest[0],
        n: rest[1],
        k: rest[2],
        a_off: rest[3],
        a_rs: rest[4],
        a_cs: rest[5],
        b_off: rest[6],
        b_args: rest[7..7 + n_b_args].to_vec(),
        c_off: rest[7 + n_b_args],
        ldc: rest[8 + n_b_args],
    };
    body(&mut fb, v, &p);
    fb.ret(&[]);
}

/// Threads split C into bands, one each: columns (whole vectors) when N
/// has at least as many NR-wide tiles as M has MR-high ones, else rows
/// (whole register tiles). A band is a GEMM of its own, with its own packing
/// buffers (allocated inside the parallel loop).
/// A single row against a matrix of contiguous rows (a classifier head,
/// batch-1 decoding) takes the unpacked path; the rest, `blocked`.
fn body(b: &mut Builder<'_>, v: &Variant, p: &Params) {
    if v.b != (BSource::Matrix { unit_n: true }) || v.a_packed {
        return bands(b, v, p);
    }
    let gemv = match v.b_packed {
        true => gemv::gemv_packed,
        false => gemv::gemv,
    };
    let one = b.const_index(1);
    let single = b.cmp(ir::builder::Cmp::Eq, p.m, one);
    b.scf_if(
        single,
        &[],
        &mut |b| {
            gemv(b, v, p);
            Vec::new()
        },
        Some(&mut |b| {
            bands(b, v, p);
            Vec::new()
        }),
    );
}

fn bands(b: &mut Builder<'_>, v: &Variant, p: &Params) {
    let bl = v.blocking;
    let (zero, one) = (b.const_index(0), b.const_index(1));
    // Bands start at panel boundaries: packed A and B are addressed by
    // whole panels.
    let (nr, mr) = (b.const_index(bl.panel_cols), b.const_index(bl.panel_rows));
    let n_tiles = b.ceildivsi(p.n, nr);
    let m_tiles = b.ceildivsi(p.m, mr);
    let by_cols = b.cmp(ir::builder::Cmp::Ge, n_tiles, m_tiles);
    // Column bands of whole vectors, not whole NR panels: a 28×28 image's
    // 784 columns are 17 panels (9 against 8, the last one a third full)
    // but 49 vectors. Packed-at-compile-time B comes in NR-wide panels.
    let col_unit = match v.b_packed {
        true => nr,
        false => b.const_index(bl.vw),
    };
    let n_units = b.ceildivsi(p.n, col_unit);
    let units = b.select(by_cols, n_units, m_tiles);
    let unit = b.select(by_cols, col_unit, mr);
    let total = b.select(by_cols, p.n, p.m);
    let mn = b.muli(p.m, p.n);
    let mnk = b.muli(mn, p.k);
    let (parts, per) = split(b, mnk, units);
    b.scf_parallel_for(zero, parts, one, |b, t| {
        let first = b.muli(t, per);
        let lo = b.muli(first, unit);
        let lo = b.minsi(lo, total);
        let next = b.addi(first, per);
        let hi = b.muli(next, unit);
        let hi = b.minsi(hi, total);
        let band = Band {
            m0: b.select(by_cols, zero, lo),
            m1: b.select(by_cols, p.m, hi),
            n0: b.select(by_cols, lo, zero),
            n1: b.select(by_cols, hi, p.n),
        };
        blocked(b, v, p, &band);
    });
}

/// How many threads share `units` pieces of a product of `work`
/// multiply-adds (one below `GEMM_MIN_WORK`), and the pieces each takes.
pub(crate) fn split(b: &mut Builder<'_>, work: ValueId, units: ValueId) -> (ValueId, ValueId) {
    let one = b.const_index(1);
    let threads = b.num_threads();
    let min_work = b.const_index(crate::loops::GEMM_MIN_WORK);
    let small = b.cmp(ir::builder::Cmp::Lt, work, min_work);
    let threads = b.select(small, one, threads);
    let parts = b.minsi(threads, units);
    let parts = b.maxsi(parts, one);
    let per = b.ceildivsi(units, parts);
    (parts, per)
}

/// Rows `m0..m1` and columns `n0..n1` of C.
struct Band {
    m0: ValueId,
    m1: ValueId,
    n0: ValueId,
    n1: ValueId,
}

/// `jc → pc → (pack B) → ic → (pack A) → jr → ir → micro-kernel` over a
/// band.
fn blocked(b: &mut Builder<'_>, v: &Variant, p: &Params, band: &Band) {
    let bl = v.blocking;
    let zero = b.const_index(0);
    let (kc, mc, nc) = (
        b.const_index(bl.kc),
        b.const_index(bl.mc),
        b.const_index(bl.nc),
    );
    // Panels sized for the problem when it is smaller than a block.
    let panel_len = |b: &mut Builder<'_>, total: ValueId, step: i64, cap: ValueId| {
        let s = b.const_index(step);
        let rounded = b.ceildivsi(total, s);
        let rounded = b.muli(rounded, s);
        let len = b.minsi(rounded, cap);
        let len = b.maxsi(len, s);
        b.muli(len, kc)
    };
    let m_len = b.subi(band.m1, band.m0);
    let n_len = b.subi(band.n1, band.n0);
    let buf_ty = Type::memref(vec![ir::DYN], v.elem.clone());
    let ap = (!v.a_packed && !v.a_direct).then(|| {
        let ap_len = panel_len(b, m_len, bl.panel_rows, mc);
        b.alloc_aligned(&buf_ty, &[ap_len], 64)
    });
    let bpk = (!v.b_packed).then(|| {
        let bp_len = panel_len(b, n_len, bl.panel_cols, nc);
        b.alloc_aligned(&buf_ty, &[bp_len], 64)
    });
    // K = 0 still takes one depth block, of depth 0: C gets the epilogue
    // of zero sums (the bias, or zeros), not what the buffer held.
    let one = b.const_index(1);
    let depth = b.maxsi(p.k, one);
    b.scf_for(band.n0, band.n1, nc, &[], |b, jc, _| {
        let ncur = min_rest(b, band.n1, jc, nc);
        b.scf_for(zero, depth, kc, &[], |b, pc, _| {
            let kcur = min_rest(b, p.k, pc, kc);
            let b_block = match bpk {
                Some(bpk) => {
                    pack::pack_b(b, v, p, bpk, pc, kcur, jc, ncur);
                    (bpk, zero)
                }
                // Depth block pc at pc · Npad, column jc's panel at jc · kcur.
                None => {
                    let block = b.muli(pc, p.b_args[0]);
                    let col = b.muli(jc, kcur);
                    let at = b.addi(p.b_off, block);
                    (p.b, b.addi(at, col))
                }
            };
            b.scf_for(band.m0, band.m1, mc, &[], |b, ic, _| {
                let mcur = min_rest(b, band.m1, ic, mc);
                let a = match ap {
                    Some(ap) => {
                        pack::pack_a(b, v, p, ap, ic, mcur, pc, kcur);
                        micro::APanels::Packed(ap, zero)
                    }
                    None if v.a_direct => {
                        let row = b.muli(ic, p.a_rs);
                        let at = b.addi(p.a_off, row);
                        micro::APanels::Direct {
                            start: b.addi(at, pc),
                            rs: p.a_rs,
                            rows: mcur,
                        }
                    }
                    // Depth block pc holds every row's panel, kcur deep.
                    None => {
                        let block = b.muli(pc, p.a_rs);
                        let row = b.muli(ic, kcur);
                        let at = b.addi(p.a_off, block);
                        micro::APanels::Packed(p.a, b.addi(at, row))
                    }
                };
                let tile = micro::Tile {
                    pc,
                    kcur,
                    ic,
                    jc,
                    a,
                    b: b_block,
                };
                column_panels(b, v, p, &tile, (ncur, mcur));
                Vec::new()
            });
            Vec::new()
        });
        Vec::new()
    });
    // The packing buffers are freed by the deallocation pass.
}

/// The tile's block, panel of NR columns after panel: micro-kernels over
/// the rows, or the tail kernel for a last panel of a few columns.
fn column_panels(
    b: &mut Builder<'_>,
    v: &Variant,
    p: &Params,
    tile: &micro::Tile,
    (ncur, mcur): (ValueId, ValueId),
) {
    let bl = v.blocking;
    let zero = b.const_index(0);
    let (nr, mr) = (b.const_index(bl.nr()), b.const_index(bl.mr));
    b.scf_for(zero, ncur, nr, &[], |b, jr, _| {
        let left = b.subi(ncur, jr);
        let mut panel = |b: &mut Builder<'_>| {
            by_width(b, bl, left, bl.nv, &mut |b, nv| {
                b.scf_for(zero, mcur, mr, &[], |b, ir, _| {
                    let rows_left = b.subi(mcur, ir);
                    by_height(b, v, rows_left, &mut |b, rows| {
                        micro::kernel(b, v, (p, tile), (ir, jr), (rows, nv));
                    });
                    Vec::new()
                });
            });
            Vec::new()
        };
        match tail::columns(v, tile) {
            Some(cols) => {
                let cols = b.const_index(cols);
                let narrow = b.cmp(ir::builder::Cmp::Le, left, cols);
                let mut few = |b: &mut Builder<'_>| {
                    tail::tail(b, v, (p, tile), (jr, left), mcur);
                    Vec::new()
                };
                b.scf_if(narrow, &[], &mut few, Some(&mut panel));
            }
            None => {
                panel(b);
            }
        }
        Vec::new()
    });
}

/// The micro-kernel as wide as the panel's `left` columns need: `nv`
/// vectors, fewer for a narrow last panel (a 7×7 image's 49 columns are
/// one panel of 48 and one of a single vector, not two of 48).
fn by_width(
    b: &mut Builder<'_>,
    bl: Blocking,
    left: ValueId,
    nv: i64,
    body: &mut dyn FnMut(&mut Builder<'_>, i64),
) {
    if nv == 1 {
        return body(b, 1);
    }
    let next = match bl.compact {
        true => 1,
        false => nv - 1,
    };
    let narrower = b.const_index(next * bl.vw);
    let wide = b.cmp(ir::builder::Cmp::Gt, left, narrower);
    specialize(b, wide, body, nv, &mut |b, body| {
        by_width(b, bl, left, next, body)
    });
}

/// Builds a micro-kernel call of one size (rows or vectors).
type SizedBody<'f> = dyn FnMut(&mut Builder<'_>, i64) + 'f;

/// `body` built twice under `cond`: with `size` where it holds, and by
/// `otherwise` (handed `body`) where it does not.
fn specialize(
    b: &mut Builder<'_>,
    cond: ValueId,
    body: &mut SizedBody<'_>,
    size: i64,
    otherwise: &mut dyn FnMut(&mut Builder<'_>, &mut SizedBody<'_>),
) {
    // Both branches build with `body`, one after the other.
    let body = std::cell::RefCell::new(body);
    b.scf_if(
        cond,
        &[],
        &mut |b| {
            (body.borrow_mut())(b, size);
            Vec::new()
        },
        Some(&mut |b| {
            otherwise(b, *body.borrow_mut());
            Vec::new()
        }),
    );
}

/// The micro-kernel as high as the tile's `left` rows need: with A read
/// in place (activations against weights), a tile of at most half the
/// rows gets a kernel of half the height, so a few rows (a batch of
/// sequences, a handful of tokens) do not multiply the padding rows too.
/// Packed A panels (convolutions) keep one height: their code size is
/// ResNet's compile time.
fn by_height(
    b: &mut Builder<'_>,
    v: &Variant,
    left: ValueId,
    body: &mut dyn FnMut(&mut Builder<'_>, i64),
) {
    let mr = v.blocking.mr;
    if !v.a_direct || mr < 2 || v.blocking.compact {
        return body(b, mr);
    }
    let half = b.const_index(mr / 2);
    let tall = b.cmp(ir::builder::Cmp::Gt, left, half);
    specialize(b, tall, body, mr, &mut |b, body| body(b, mr / 2));
}

/// `min(total - at, step)`.
fn min_rest(b: &mut Builder<'_>, total: ValueId, at: ValueId, step: ValueId) -> ValueId {
    let rest = b.subi(total, at);
    b.minsi(rest, step)
}

/// A flat 1-D view (`memref<?xT>`) of a contiguous buffer, for the GEMM's
/// operands; `len` is its element count.
pub fn flat(b: &mut Builder<'_>, buf: ValueId, len: ValueId) -> ValueId {
    let elem = b.m.value_type(buf).element_type().clone();
    let ty = Type::memref(vec![ir::DYN], elem);
    let layout = ir::builder::ViewLayout {
        offsets: &[0],
        sizes: &[ir::DYN],
        strides: &[1],
    };
    let buf = crate::convert::contiguous(b, buf);
    b.reinterpret_cast(buf, layout, &[len], &[], ty)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each level's register tile covers the shared packed panels in whole
    /// parts, and the widest level's tile is the panel itself; operands
    /// packed at run time get the tile's own panels.
    #[test]
    fn level_tiles_divide_the_shared_panels() {
        for elem in [Type::f32(), Type::f64()] {
            let layout = Blocking::of(Isa::X86Levels, &elem);
            for bits in X86_LEVELS.map(|l| l.vector_bits) {
                for shared in [(true, false), (false, true), (true, true)] {
                    let t = Blocking::within(bits, layout, &elem, shared);
                    assert_eq!(t.panel_rows % t.mr, 0, "{elem} {bits}");
                    assert_eq!(t.panel_cols % t.nr(), 0, "{elem} {bits}");
                    assert_eq!(t.mc % t.panel_rows, 0, "{elem} {bits}");
                    assert_eq!(t.nc % t.panel_cols, 0, "{elem} {bits}");
                    assert_eq!(t.kc, layout.kc);
                    let rows = if shared.0 { layout.panel_rows } else { t.mr };
                    let cols = if shared.1 { layout.panel_cols } else { t.nr() };
                    assert_eq!((t.panel_rows, t.panel_cols), (rows, cols), "{elem} {bits}");
                    assert_eq!(t.compact, bits < 512);
                }
                let own = Blocking::within(bits, layout, &elem, (false, false));
                assert_eq!((own.panel_rows, own.panel_cols), (own.mr, own.nr()));
            }
            let widest = Blocking::within(512, layout, &elem, (true, true));
            assert_eq!(
                (widest.mr, widest.nr()),
                (layout.panel_rows, layout.panel_cols)
            );
        }
    }
}
