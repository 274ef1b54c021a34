//! Lazily transformed views (a chain of element-wise steps over a stored
//! base view, applied in chunks when read in bulk) and the odometer over
//! strided views.

use super::codec::push_raw;
use super::{decode, encode, row_major, DType, Elements, ElementsData, WideNum};
use bytes::Bytes;
use std::sync::Arc;

/// An element-wise function on widened numbers (input in the class of the
/// previous dtype, output in the class of the step's dtype).
pub type MapFn = Arc<dyn Fn(WideNum) -> WideNum + Send + Sync>;

/// One transform of a lazy chain; its result is rounded to `dtype`.
#[derive(Clone)]
pub(super) enum Step {
    /// `x * scale[b] + shift[b]` for `b = (flat / block) % scale.len()`
    /// (row-major): per output channel of a Conv weight (one block per
    /// channel) or per column of a matrix (blocks of 1, cycling).
    Blocks {
        block: usize,
        scale: Arc<[f64]>,
        shift: Arc<[f64]>,
        dtype: DType,
    },
    /// `f(x)`, independent of the position.
    Map { f: MapFn, dtype: DType },
}

impl std::fmt::Debug for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Blocks { block, dtype, .. } => write!(f, "Blocks({block}, {dtype:?})"),
            Step::Map { dtype, .. } => write!(f, "Map({dtype:?})"),
        }
    }
}

impl Step {
    pub fn dtype(&self) -> DType {
        match self {
            Step::Blocks { dtype, .. } | Step::Map { dtype, .. } => *dtype,
        }
    }
    pub fn params_bytes(&self) -> usize {
        match self {
            Step::Blocks { scale, .. } => 16 * scale.len(),
            Step::Map { .. } => 0,
        }
    }
}

/// Values of `base` (a stored, non-lazy view) through `steps` in order.
#[derive(Clone, Debug)]
pub(super) struct Lazy {
    pub base: Elements,
    pub steps: Vec<Step>,
}

/// Rounds a value to what `dtype` stores, integers wrapping to its width
/// (dtypes `encode` refuses keep it).
pub(super) fn round(dtype: DType, w: WideNum) -> WideNum {
    let bits = dtype.bits();
    let mask = if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    encode(dtype, w).map_or(w, |raw| decode(dtype, raw & mask))
}

/// Elements per bulk step: small enough to stay in cache.
const CHUNK: usize = 4096;

impl Lazy {
    /// Whether every step ignores the position (views may then be taken
    /// of the base instead of materializing).
    pub fn position_free(&self) -> bool {
        self.steps.iter().all(|s| matches!(s, Step::Map { .. }))
    }

    /// Applies the steps to `vals`, the elements from row-major `first`.
    fn apply(&self, first: usize, vals: &mut [WideNum]) {
        let mut class = self.base.dtype().class();
        for step in &self.steps {
            match step {
                Step::Blocks {
                    block,
                    scale,
                    shift,
                    dtype,
                } => {
                    for (i, v) in vals.iter_mut().enumerate() {
                        let b = (first + i) / (*block).max(1) % scale.len().max(1);
                        let s = scale.get(b).copied().unwrap_or(1.0);
                        let t = shift.get(b).copied().unwrap_or(0.0);
                        let x = v.to_f64(class) * s + t;
                        *v = round(*dtype, WideNum::from_f64(x));
                    }
                }
                Step::Map { f, dtype } => {
                    for v in vals.iter_mut() {
                        *v = round(*dtype, f(*v));
                    }
                }
            }
            class = step.dtype().class();
        }
    }

    pub fn get(&self, flat: usize) -> Option<WideNum> {
        let mut v = [self.base.get(flat)?];
        self.apply(flat, &mut v);
        Some(v[0])
    }

    /// Elements `[start, start + n)`, computed a chunk at a time.
    pub fn values(&self, start: usize, n: usize) -> impl Iterator<Item = WideNum> + '_ {
        let mut buf: Vec<WideNum> = Vec::new();
        let mut at = start;
        let end = start + n;
        std::iter::from_fn(move || {
            if buf.is_empty() {
                if at >= end {
                    return None;
                }
                let m = CHUNK.min(end - at);
                buf.extend(self.base.iter_range(at, m));
                self.apply(at, &mut buf);
                buf.reverse();
                at += m;
            }
            buf.pop()
        })
    }

    /// Appends the packed bytes of elements `[start, start + n)` in `dtype`
    /// (`start` a multiple of 8 for sub-byte dtypes).
    pub fn pack_range(&self, start: usize, n: usize, dtype: DType, out: &mut Vec<u8>) {
        if self.pack_f32_blocks(start, n, dtype, out) {
            return;
        }
        for (i, v) in self.values(start, n).enumerate() {
            push_raw(out, dtype, i, encode(dtype, v).unwrap_or(0));
        }
    }

    /// Fast path of BatchNormalization-fused f32 weights: one block step
    /// over contiguous f32 data; false when it does not apply.
    fn pack_f32_blocks(&self, start: usize, n: usize, dtype: DType, out: &mut Vec<u8>) -> bool {
        let [Step::Blocks {
            block,
            scale,
            shift,
            dtype: DType::F32,
        }] = self.steps.as_slice()
        else {
            return false;
        };
        let Some(src) = self.base.contiguous_bytes() else {
            return false;
        };
        let Some(src) = src.get(start * 4..(start + n) * 4) else {
            return false;
        };
        if dtype != DType::F32 || self.base.dtype() != DType::F32 || *block == 0 {
            return false;
        }
        // Written in place (no per-element capacity checks), so the
        // conversions vectorize.
        let at = out.len();
        out.resize(at + src.len(), 0);
        let Some(dst) = out.get_mut(at..) else {
            return false;
        };
        let affine = |dst: &mut [u8], src: &[u8], s: f64, t: f64| {
            for (d, x) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
                let v = f64::from(f32::from_le_bytes([x[0], x[1], x[2], x[3]]));
                d.copy_from_slice(&((v * s + t) as f32).to_le_bytes());
            }
        };
        if *block == 1 {
            // Per column of a matrix: the parameters cycle every element.
            let c = scale.len().max(1);
            let params = scale.iter().zip(shift.iter()).cycle().skip(start % c);
            for ((d, x), (&s, &t)) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)).zip(params) {
                affine(d, x, s, t);
            }
            return true;
        }
        let mut flat = start;
        let mut done = 0;
        while done < src.len() {
            let q = flat / block;
            let take = ((q + 1) * block - flat).min((src.len() - done) / 4);
            let b = q % scale.len().max(1);
            let s = scale.get(b).copied().unwrap_or(1.0);
            let t = shift.get(b).copied().unwrap_or(0.0);
            let end = done + take * 4;
            let (Some(d), Some(x)) = (dst.get_mut(done..end), src.get(done..end)) else {
                break;
            };
            affine(d, x, s, t);
            flat += take;
            done = end;
        }
        true
    }
}

impl Elements {
    /// `self * scale[b] + shift[b]` per block `b` of `block` consecutive
    /// elements (row-major, cycling through the blocks when the view holds
    /// more), in float `dtype`, computed only when read. Used for weights
    /// scaled per output channel or column (BatchNormalization fusion).
    pub fn affine_blocks(
        &self,
        dtype: DType,
        block: usize,
        scale: Vec<f64>,
        shift: Vec<f64>,
    ) -> Option<Elements> {
        let float = |d: DType| matches!(d, DType::F16 | DType::BF16 | DType::F32 | DType::F64);
        if !float(dtype)
            || !float(self.0.dtype)
            || block == 0
            || scale.is_empty()
            || !self.len().is_multiple_of(block.checked_mul(scale.len())?)
            || shift.len() != scale.len()
        {
            return None;
        }
        Some(self.then(Step::Blocks {
            block,
            scale: scale.into(),
            shift: shift.into(),
            dtype,
        }))
    }

    /// `f` applied to every element, rounded to `dtype`, computed only
    /// when read (chained onto an already lazy view). `None` for dtypes
    /// whose encoding lives outside this module (float8/float4).
    pub fn mapped(&self, dtype: DType, f: MapFn) -> Option<Elements> {
        encode(dtype, WideNum::default())?;
        Some(self.then(Step::Map { f, dtype }))
    }

    /// This view followed by one more lazy step.
    fn then(&self, step: Step) -> Elements {
        let (base, mut steps) = match &self.0.lazy {
            Some(l) => (l.base.clone(), l.steps.clone()),
            None => (self.clone(), Vec::new()),
        };
        let dtype = step.dtype();
        steps.push(step);
        Elements::lazy(dtype, base, steps)
    }

    /// A lazy view. Position-free chains mirror the base's layout (its
    /// strides and offset), so views of them are views of the base and
    /// broadcasts stay visible; chains with position-dependent steps are
    /// row-major.
    pub(super) fn lazy(dtype: DType, base: Elements, steps: Vec<Step>) -> Elements {
        let l = Lazy { base, steps };
        let (strides, offset) = if l.position_free() {
            (l.base.0.strides.clone(), l.base.0.offset)
        } else {
            (row_major(&l.base.0.shape), 0)
        };
        Elements::make(ElementsData {
            dtype,
            shape: l.base.0.shape.clone(),
            strides,
            offset,
            bytes: Bytes::new(),
            lazy: Some(l),
            generated: None,
        })
    }
}

/// Buffer positions of a strided view in row-major order, without a
/// division per element.
pub(super) struct Positions {
    shape: Vec<i64>,
    strides: Vec<i64>,
    idx: Vec<i64>,
    pos: i64,
    done: bool,
}

impl Positions {
    /// Positions from the element at row-major position `flat` on.
    pub fn starting_at(shape: &[i64], strides: &[i64], offset: usize, flat: usize) -> Positions {
        let mut idx = vec![0; shape.len()];
        let mut pos = offset as i64;
        let mut rest = flat as i64;
        for (d, (&n, &s)) in shape.iter().zip(strides).enumerate().rev() {
            let n = n.max(1);
            idx[d] = rest % n;
            pos += idx[d] * s;
            rest /= n;
        }
        Positions {
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            idx,
            pos,
            done: rest > 0 || shape.iter().any(|&d| d <= 0),
        }
    }
}

impl Iterator for Positions {
    type Item = usize;
    fn next(&mut self) -> Option<usize> {
        if self.done {
            return None;
        }
        let here = self.pos.max(0) as usize;
        // Advance the odometer; past the last index the iterator ends.
        let mut d = self.shape.len();
        loop {
            if d == 0 {
                self.done = true;
                break;
            }
            d -= 1;
            self.idx[d] += 1;
            self.pos += self.strides[d];
            if self.idx[d] < self.shape[d] {
                break;
            }
            self.pos -= self.strides[d] * self.shape[d];
            self.idx[d] = 0;
        }
        Some(here)
    }
}
