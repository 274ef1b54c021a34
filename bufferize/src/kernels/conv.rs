//! Conv (1-D/2-D/3-D, groups, strides, pads, dilations, auto_pad).

use super::matmul::{call_gemm, GemmCall};
use super::scalar;
use super::window::Window;
use super::{alloc_result, elem_of, private_func, shape_of, shape_tag, type_tag};
use crate::convert::{contiguous, dims, Lowering};
use crate::loops::{self, loop_nest, reduce_nest, Bounds};
use ir::dialects::op_error;
use ir::{Builder, OpId, Result, Type, ValueId, DYN};
use onnx::ops;

pub fn conv(cx: &mut Lowering, b: &mut Builder<'_>, op: OpId) -> Result<Vec<ValueId>> {
    // The im2col/GEMM path wants unit strides.
    let x = contiguous(b, cx.input(b.m, op, 0)?);
    let w = contiguous(b, cx.input(b.m, op, 1)?);
    let bias = if cx.has_input(b.m, op, 2) {
        Some(cx.input(b.m, op, 2)?)
    } else {
        None
    };
    let (sx, sw) = (shape_of(b.m, x), shape_of(b.m, w));
    if sx.len() < 3 || sw.len() != sx.len() {
        return Err(op_error(b.m, op, "Conv expects X and W of equal rank >= 3"));
    }
    let kernel = sw[2..].to_vec();
    if kernel.contains(&DYN) || sw[1] == DYN || sw[0] == DYN {
        return Err(op_error(b.m, op, "Conv needs a weight of static shape"));
    }
    let attrs = ops::Conv::of(b.m, op);
    let group = attrs.group();
    if group <= 0 || sw[0] % group != 0 {
        return Err(op_error(
            b.m,
            op,
            "group must divide the number of output channels",
        ));
    }
    let out_ty = super::result_memref_type(b.m, op, 0)?;
    let out_shape = out_ty.shape().map(<[i64]>::to_vec).unwrap_or_default();
    let win = Window::new(b.m, op, kernel.clone(), attrs.into(), &sx, &out_shape)?;
    let dx = dims(b, x);
    let c = b.const_index(sw[1].saturating_mul(group));
    let msg = "the input's channels differ from the weight's times group";
    super::checks::equal(b, op, dx[1], c, msg)?;
    let mut out_dims = vec![dx[0], b.const_index(sw[0])];
    for (i, &d) in out_shape[2..].iter().enumerate() {
        if d == DYN {
            // out = floor((in + pads - eff) / stride) + 1.
            let eff = (kernel[i] - 1) * win.dilations[i] + 1;
            let c = b.const_index(win.pad_begin[i] + win.pad_end[i] - eff);
            let t = b.add(dx[i + 2], c);
            let s = b.const_index(win.strides[i]);
            let q = b.divsi(t, s);
            let one = b.const_index(1);
            out_dims.push(b.add(q, one));
        } else {
            out_dims.push(b.const_index(d));
        }
    }
    let out = alloc_result(b, op, 0, &out_dims)?;
    let elem = elem_of(b.m, out);
    if let Some(fast) = FastConv::new(b, x, w, out, &sw, group, &win) {
        fast.emit(b, x, w, bias, out, &win, &elem)?;
        return Ok(vec![out]);
    }
    let (m_per_group, c_per_group) = (sw[0] / group, sw[1]);
    let acc_ty = scalar::acc_type(&elem);
    let bounds = Bounds::new(b);
    let zero = bounds.zero;
    let mut red_dims = vec![b.const_index(c_per_group)];
    for &k in &kernel {
        red_dims.push(b.const_index(k));
    }
    let mpg = b.const_index(m_per_group);
    let cpg = b.const_index(c_per_group);
    loop_nest(b, &bounds, &out_dims, &mut |b, ivs| {
        let (n, mo) = (ivs[0], ivs[1]);
        let g = b.divsi(mo, mpg);
        let c_base = b.mul(g, cpg);
        let init = match bias {
            Some(bv) => {
                let v = b.load(bv, &[mo]);
                scalar::fcast(b, v, &acc_ty)
            }
            None => b.zero(&acc_ty),
        };
        let sum = reduce_nest(b, &bounds, &red_dims, init, &mut |b, r, acc| {
            let c = b.add(c_base, r[0]);
            let (pos, inside) = win.input_indices(b, &ivs[2..], &r[1..], &dx[2..], zero);
            let mut xidx = vec![n, c];
            xidx.extend(pos);
            let xv = b.load(x, &xidx);
            let mut widx = vec![mo, r[0]];
            widx.extend_from_slice(&r[1..]);
            let wv = b.load(w, &widx);
            let zero_v = b.zero(&elem);
            let xv = b.select(inside, xv, zero_v);
            scalar::mul_acc(b, acc, xv, wv)
        });
        let sum = scalar::fcast(b, sum, &elem);
        b.store(sum, out, ivs);
    });
    Ok(vec![out])
}

/// The static geometry of a Conv computed as one GEMM per (image, group):
/// `out[n, g·Mg + m, p] = bias + W[g·Mg + m, k] · col[k, p]`, where `col`
/// is the input itself (1x1, stride 1, no pad) or an im2col scratch buffer
/// with `k = (c, kh, kw)` and `p = (oh, ow)`.
struct FastConv {
    n: i64,
    c: i64,
    spatial_in: Vec<i64>,
    spatial_out: Vec<i64>,
    mg: i64,
    cg: i64,
    kernel_size: i64,
    group: i64,
    direct: bool,
}

impl FastConv {
    /// Applies to float convs of static shape over contiguous x, w, out.
    fn new(
        b: &Builder<'_>,
        x: ValueId,
        w: ValueId,
        out: ValueId,
        sw: &[i64],
        group: i64,
        win: &Window,
    ) -> Option<FastConv> {
        let (sx, so) = (shape_of(b.m, x), shape_of(b.m, out));
        // f16/bf16 take the loop nest, which accumulates in f32.
        let float = matches!(elem_of(b.m, out), t @ Type::Float(_) if scalar::acc_type(&t) == t);
        let identity = |v: ValueId| {
            b.m.value_type(v)
                .as_memref()
                .is_some_and(ir::types::MemRefType::is_identity_layout)
        };
        let contiguous = identity(x) && identity(w) && identity(out);
        if !float || sx.contains(&DYN) || so.contains(&DYN) || !contiguous {
            return None;
        }
        let direct = win.kernel.iter().all(|&k| k == 1)
            && win.strides.iter().all(|&s| s == 1)
            && win.pad_begin.iter().all(|&p| p == 0)
            && sx[2..] == so[2..];
        Some(FastConv {
            n: sx[0],
            c: sx[1],
            spatial_in: sx[2..].to_vec(),
            spatial_out: so[2..].to_vec(),
            mg: sw[0] / group,
            cg: sw[1],
            kernel_size: win.kernel.iter().product(),
            group,
            direct,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn emit(
        &self,
        b: &mut Builder<'_>,
        x: ValueId,
        w: ValueId,
        bias: Option<ValueId>,
        out: ValueId,
        win: &Window,
        elem: &Type,
    ) -> Result<()> {
        let p: i64 = self.spatial_out.iter().product();
        let pin: i64 = self.spatial_in.iter().product();
        let m_all = self.mg * self.group;
        let k = self.cg * self.kernel_size;
        // Row-major views: x [N, C, Pin], out [N, M, P], w [M, K]. The
        // GEMM's right operand is x itself or an im2col scratch [1, K, P].
        let src = if self.direct {
            Source::Input(view(b, x, elem, &[self.n, self.c, pin]))
        } else {
            let ty = Type::memref(vec![1, k, p], elem.clone());
            Source::Im2col(crate::convert::alloc(b, &ty, &[]))
        };
        let out3 = view(b, out, elem, &[self.n, m_all, p]);
        let w2 = view(b, w, elem, &[m_all, k]);
        let bounds = Bounds::new(b);
        let (n_ub, g_ub) = (b.const_index(self.n), b.const_index(self.group));
        let (mgv, cgv) = (b.const_index(self.mg), b.const_index(self.cg));
        let mut failure = None;
        b.scf_for(bounds.zero, n_ub, bounds.one, &[], |b, n, _| {
            b.scf_for(bounds.zero, g_ub, bounds.one, &[], |b, g, _| {
                let m0 = b.mul(g, mgv);
                let c0 = b.mul(g, cgv);
                let (src, xn, xr0) = match src {
                    Source::Im2col(col) => {
                        self.call_im2col(b, x, col, n, c0, win, elem);
                        (col, bounds.zero, bounds.zero)
                    }
                    Source::Input(x3) => (x3, n, c0),
                };
                let call = GemmCall {
                    w: w2,
                    x: src,
                    out: out3,
                    bias,
                    xn,
                    xr0,
                    on: n,
                    or0: m0,
                    m_rows: mgv,
                };
                if let Err(e) = call_gemm(b, elem, &call) {
                    failure = Some(e);
                }
                Vec::new()
            });
            Vec::new()
        });
        // The scratch buffer is freed by the deallocation pass.
        failure.map_or(Ok(()), Err)
    }

    /// A call to the im2col function of this geometry, created at the end
    /// of the module on first use (convs of one shape share it).
    #[allow(clippy::too_many_arguments)]
    fn call_im2col(
        &self,
        b: &mut Builder<'_>,
        x: ValueId,
        col: ValueId,
        n: ValueId,
        c0: ValueId,
        win: &Window,
        elem: &Type,
    ) {
        let name = format!(
            "__onnxc_im2col_{}_x{}_c{}_k{}_s{}_d{}_p{}_o{}",
            type_tag(elem),
            shape_tag(&shape_of(b.m, x)),
            self.cg,
            shape_tag(&win.kernel),
            shape_tag(&win.strides),
            shape_tag(&win.dilations),
            shape_tag(&win.pad_begin),
            shape_tag(&shape_of(b.m, col)),
        );
        if b.m.lookup_symbol(&name).is_none() {
            let inputs = vec![
                b.m.value_type(x).clone(),
                b.m.value_type(col).clone(),
                Type::Index,
                Type::Index,
            ];
            let (mut fb, args) = private_func(b.m, &name, inputs);
            let bounds = Bounds::new(&mut fb);
            self.im2col(
                &mut fb, &bounds, args[0], args[1], args[2], args[3], win, elem,
            );
            fb.ret(&[]);
        }
        b.call(&name, &[x, col, n, c0], &[]);
    }

    /// `col[(c, kh, kw), (oh, ow)] = x[n, c0 + c, oh·s + kh·d - pad, ...]`,
    /// zero outside the input.
    #[allow(clippy::too_many_arguments)]
    fn im2col(
        &self,
        b: &mut Builder<'_>,
        bounds: &Bounds,
        x: ValueId,
        col: ValueId,
        n: ValueId,
        c0: ValueId,
        win: &Window,
        elem: &Type,
    ) {
        let zero = bounds.zero;
        let mut ubs = vec![b.const_index(self.cg)];
        for &kk in &win.kernel {
            ubs.push(b.const_index(kk));
        }
        for &o in &self.spatial_out {
            ubs.push(b.const_index(o));
        }
        let sizes: Vec<ValueId> = self.spatial_in.iter().map(|&s| b.const_index(s)).collect();
        let ks = win.kernel.clone();
        let outs = self.spatial_out.clone();
        let spatial = ks.len();
        loop_nest(b, bounds, &ubs, &mut |b, ivs| {
            let c = b.add(c0, ivs[0]);
            let (pos, inside) =
                win.input_indices(b, &ivs[1 + spatial..], &ivs[1..1 + spatial], &sizes, zero);
            let mut xidx = vec![n, c];
            xidx.extend(pos);
            // Row (c, kh, kw) and column (oh, ow), row-major.
            let mut row = ivs[0];
            for i in 0..spatial {
                row = loops::scale_add(b, Some(ivs[1 + i]), row, ks[i]);
            }
            let mut colx = ivs[1 + spatial];
            for i in 1..spatial {
                colx = loops::scale_add(b, Some(ivs[1 + spatial + i]), colx, outs[i]);
            }
            let v = b.load(x, &xidx);
            let zv = b.zero(elem);
            let v = b.select(inside, v, zv);
            b.store(v, col, &[zero, row, colx]);
        });
    }
}

#[derive(Clone, Copy)]
enum Source {
    Input(ValueId),
    Im2col(ValueId),
}

/// A row-major view of contiguous `v` with a static shape.
pub(super) fn view(b: &mut Builder<'_>, v: ValueId, elem: &Type, shape: &[i64]) -> ValueId {
    let ty = Type::memref(shape.to_vec(), elem.clone());
    let sizes: Vec<ValueId> = shape.iter().map(|&s| b.const_index(s)).collect();
    super::shape::reinterpret(b, v, &ty, shape, &sizes)
}
