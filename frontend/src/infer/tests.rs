//! Unit tests of shape inference on hand-built ops.

use super::nn::window_out;
use super::shape_ops::slice_extent;
use super::*;
use ir::elements::{DType, Elements, WideNum};
use ir::Attribute;
use ir::{BlockId, Builder, Sym};

struct G {
    m: Module,
    block: BlockId,
}

impl G {
    fn new() -> G {
        let mut m = Module::new();
        let body = m.body();
        let (_, block) = Builder::at_end(&mut m, body).func("f", vec![], vec![]);
        G { m, block }
    }
    fn arg(&mut self, shape: Option<Vec<i64>>) -> ValueId {
        self.m.add_block_arg(self.block, tensor(shape, Type::f32()))
    }
    fn ranked(&mut self, shape: &[i64]) -> ValueId {
        self.arg(Some(shape.to_vec()))
    }
    fn ints(&mut self, vals: &[i64]) -> ValueId {
        let w: Vec<WideNum> = vals.iter().map(|&v| WideNum::from_i64(v)).collect();
        let e = Elements::from_wide(DType::I64, vec![vals.len() as i64], &w).unwrap();
        self.konst(e)
    }
    fn scalar(&mut self, dtype: DType, v: f64) -> ValueId {
        let w = match dtype.class() {
            ir::elements::NumClass::Float => WideNum::from_f64(v),
            _ => WideNum::from_i64(v as i64),
        };
        self.konst(Elements::from_wide(dtype, vec![], &[w]).unwrap())
    }
    fn konst(&mut self, e: Elements) -> ValueId {
        let ty = e.tensor_type();
        Builder::at_end(&mut self.m, self.block).op1(
            "onnx.Constant",
            &[],
            ty,
            &[("value", Attribute::Elements(e))],
        )
    }
    fn none(&mut self) -> ValueId {
        Builder::at_end(&mut self.m, self.block).op1("onnx.NoValue", &[], Type::None, &[])
    }
    fn op(
        &mut self,
        name: &str,
        operands: &[ValueId],
        attrs: &[(&'static str, Attribute)],
        results: usize,
    ) -> OpId {
        let spec = ir::OpSpec {
            operands: operands.to_vec(),
            result_types: vec![Type::unranked_tensor(Type::f32()); results],
            attrs: attrs
                .iter()
                .map(|(k, v)| (Sym::new(k), v.clone()))
                .collect(),
            ..Default::default()
        };
        let kind = onnx::OpKind::from_model("", name).unwrap_or_else(|| panic!("no op {name}"));
        Builder::at_end(&mut self.m, self.block).create(kind.ir_name(), spec)
    }
    /// Result types of a one-result op as text, or the error message.
    fn infer(
        &mut self,
        name: &str,
        operands: &[ValueId],
        attrs: &[(&'static str, Attribute)],
    ) -> String {
        self.infer_n(name, operands, attrs, 1)
    }
    fn infer_n(
        &mut self,
        name: &str,
        operands: &[ValueId],
        attrs: &[(&'static str, Attribute)],
        results: usize,
    ) -> String {
        let op = self.op(name, operands, attrs, results);
        match infer_op(&self.m, op) {
            Ok(Some(t)) => t
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            Ok(None) => "unknown".into(),
            Err(d) => format!("error: {}", d.message),
        }
    }
}

fn ints(v: &[i64]) -> Attribute {
    Attribute::Array(v.iter().map(|&x| Attribute::i64(x)).collect())
}
fn int(v: i64) -> Attribute {
    Attribute::i64(v)
}

#[test]
fn broadcasting() {
    assert_eq!(broadcast_shapes(&[2, 1, 3], &[4, 1]), Ok(vec![2, 4, 3]));
    assert_eq!(broadcast_shapes(&[DYN, 3], &[5, 1]), Ok(vec![5, 3]));
    assert_eq!(broadcast_shapes(&[DYN], &[1]), Ok(vec![DYN]));
    assert_eq!(broadcast_shapes(&[], &[2]), Ok(vec![2]));
    assert_eq!(broadcast_shapes(&[0], &[1]), Ok(vec![0]));
    assert!(broadcast_shapes(&[2], &[3]).is_err());
    let mut g = G::new();
    let (a, b, c) = (g.ranked(&[8, 1, 6, 1]), g.ranked(&[7, 1, 5]), g.arg(None));
    assert_eq!(g.infer("Add", &[a, b], &[]), "tensor<8x7x6x5xf32>");
    assert_eq!(g.infer("Equal", &[a, b], &[]), "tensor<8x7x6x5xi1>");
    assert_eq!(g.infer("Mul", &[a, c], &[]), "tensor<*xf32>");
    let s = g.ranked(&[]);
    assert_eq!(g.infer("Sum", &[a, b, s], &[]), "tensor<8x7x6x5xf32>");
    let cond = g.ranked(&[6, 1]);
    assert_eq!(g.infer("Where", &[cond, s, b], &[]), "tensor<7x6x5xf32>");
    let bad = g.ranked(&[5, 1]);
    assert!(g.infer("Sub", &[a, bad], &[]).contains("do not broadcast"));
}

#[test]
fn unary_cast_and_dropout() {
    let mut g = G::new();
    let x = g.ranked(&[2, DYN]);
    assert_eq!(g.infer("Relu", &[x], &[]), "tensor<2x?xf32>");
    assert_eq!(g.infer("Cast", &[x], &[("to", int(7))]), "tensor<2x?xi64>");
    assert_eq!(g.infer("Cast", &[x], &[("to", int(10))]), "tensor<2x?xf16>");
    assert!(g
        .infer("Cast", &[x], &[("to", int(8))])
        .starts_with("error"));
    let d = g.op("Dropout", &[x], &[], 2);
    let tys = infer_op(&g.m, d).unwrap().unwrap();
    assert_eq!(tys[1].to_string(), "tensor<2x?xi1>");
    assert_eq!(
        g.infer("Softmax", &[x], &[("axis", int(-1))]),
        "tensor<2x?xf32>"
    );
}

#[test]
fn window_sizes() {
    use super::nn::Fit::{Conv, Pool, PoolCeil};
    // floor((5 + 0 - 2) / 2) + 1 = 2; ceil gives 3.
    assert_eq!(window_out(5, 2, 2, 1, (0, 0), "NOTSET", Conv), Ok(2));
    assert_eq!(window_out(5, 2, 2, 1, (0, 0), "NOTSET", PoolCeil), Ok(3));
    // The last window would start in the end padding: dropped.
    assert_eq!(window_out(5, 2, 2, 1, (1, 1), "NOTSET", PoolCeil), Ok(3));
    assert_eq!(window_out(6, 3, 2, 1, (1, 1), "NOTSET", PoolCeil), Ok(4));
    // Dilation 2 makes a 3-kernel span 5.
    assert_eq!(window_out(10, 3, 1, 2, (0, 0), "NOTSET", Conv), Ok(6));
    assert_eq!(window_out(15, 3, 2, 1, (9, 9), "SAME_UPPER", Conv), Ok(8));
    assert_eq!(window_out(15, 3, 2, 1, (9, 9), "VALID", Conv), Ok(7));
    assert_eq!(window_out(DYN, 3, 2, 1, (0, 0), "NOTSET", Conv), Ok(DYN));
    assert!(window_out(2, 5, 1, 1, (0, 0), "NOTSET", Conv).is_err());
    // Pools count as onnxruntime does, rounding toward zero: a 2x2 stride-2
    // window over 1 gives one output, a 3-wide stride-1 one over 2 none,
    // over 1 an error (a negative count).
    assert_eq!(window_out(1, 2, 2, 1, (0, 0), "NOTSET", Pool), Ok(1));
    assert_eq!(window_out(2, 3, 1, 1, (0, 0), "NOTSET", Pool), Ok(0));
    assert_eq!(window_out(1, 4, 2, 1, (0, 0), "NOTSET", Pool), Ok(0));
    assert!(window_out(1, 3, 1, 1, (0, 0), "NOTSET", Pool).is_err());
    assert_eq!(window_out(1, 2, 2, 1, (0, 0), "NOTSET", PoolCeil), Ok(1));
}

#[test]
fn conv_and_pool() {
    let mut g = G::new();
    let x = g.ranked(&[1, 3, 224, 224]);
    let w = g.ranked(&[64, 3, 7, 7]);
    let attrs = [("strides", ints(&[2, 2])), ("pads", ints(&[3, 3, 3, 3]))];
    assert_eq!(g.infer("Conv", &[x, w], &attrs), "tensor<1x64x112x112xf32>");
    let attrs = [
        ("dilations", ints(&[2, 2])),
        ("auto_pad", Attribute::string("VALID")),
    ];
    assert_eq!(g.infer("Conv", &[x, w], &attrs), "tensor<1x64x212x212xf32>");
    let attrs = [
        ("strides", ints(&[2, 2])),
        ("auto_pad", Attribute::string("SAME_LOWER")),
    ];
    assert_eq!(g.infer("Conv", &[x, w], &attrs), "tensor<1x64x112x112xf32>");
    // Grouped: 8 channels in 4 groups of 2.
    let (xg, wg) = (g.ranked(&[2, 8, 10, DYN]), g.ranked(&[16, 2, 3, 3]));
    assert_eq!(
        g.infer("Conv", &[xg, wg], &[("group", int(4))]),
        "tensor<2x16x8x?xf32>"
    );
    assert!(g
        .infer("Conv", &[xg, wg], &[("group", int(2))])
        .contains("channels"));

    let x = g.ranked(&[1, 8, 5, 6]);
    let attrs = [
        ("kernel_shape", ints(&[2, 3])),
        ("strides", ints(&[2, 2])),
        ("ceil_mode", int(1)),
    ];
    assert_eq!(g.infer("AveragePool", &[x], &attrs), "tensor<1x8x3x3xf32>");
    let mp = g.op("MaxPool", &[x], &[("kernel_shape", ints(&[2, 2]))], 2);
    let tys = infer_op(&g.m, mp).unwrap().unwrap();
    assert_eq!(tys[0].to_string(), "tensor<1x8x4x5xf32>");
    assert_eq!(tys[1].to_string(), "tensor<1x8x4x5xi64>");
    assert_eq!(
        g.infer("GlobalAveragePool", &[x], &[]),
        "tensor<1x8x1x1xf32>"
    );
    assert!(g.infer("MaxPool", &[x], &[]).contains("kernel_shape"));
}

#[test]
fn gemm_and_matmul() {
    let mut g = G::new();
    let (a, b) = (g.ranked(&[3, 2]), g.ranked(&[4, 3]));
    let t = [("transA", int(1)), ("transB", int(1))];
    assert_eq!(g.infer("Gemm", &[a, b], &t), "tensor<2x4xf32>");
    let c = g.ranked(&[4]);
    assert_eq!(g.infer("Gemm", &[a, b, c], &t), "tensor<2x4xf32>");
    assert!(g.infer("Gemm", &[a, b], &[]).contains("inner dimension"));
    let (dyn_a, bt) = (g.ranked(&[DYN, 3]), g.ranked(&[3, 5]));
    assert_eq!(g.infer("Gemm", &[dyn_a, bt], &[]), "tensor<?x5xf32>");

    let (v, m34, m23) = (g.ranked(&[3]), g.ranked(&[3, 4]), g.ranked(&[2, 3]));
    assert_eq!(g.infer("MatMul", &[v, v], &[]), "tensor<f32>");
    assert_eq!(g.infer("MatMul", &[v, m34], &[]), "tensor<4xf32>");
    assert_eq!(g.infer("MatMul", &[m23, v], &[]), "tensor<2xf32>");
    let (p, q) = (g.ranked(&[5, 1, 2, 3]), g.ranked(&[4, 3, 6]));
    assert_eq!(g.infer("MatMul", &[p, q], &[]), "tensor<5x4x2x6xf32>");
    assert!(g
        .infer("MatMul", &[m34, m23], &[])
        .contains("inner dimension"));
}

#[test]
fn reshape_rules() {
    let mut g = G::new();
    let x = g.ranked(&[2, 3, 4]);
    let s = g.ints(&[-1, 4]);
    assert_eq!(g.infer("Reshape", &[x, s], &[]), "tensor<6x4xf32>");
    let s = g.ints(&[0, -1]);
    assert_eq!(g.infer("Reshape", &[x, s], &[]), "tensor<2x12xf32>");
    let s = g.ints(&[5, -1]);
    assert!(g.infer("Reshape", &[x, s], &[]).contains("cannot reshape"));
    let s = g.ints(&[-1, -1]);
    assert!(g
        .infer("Reshape", &[x, s], &[])
        .contains("more than one -1"));
    let s = g.ints(&[7, 4]);
    assert!(g.infer("Reshape", &[x, s], &[]).contains("cannot reshape"));
    // allowzero: 0 is a real extent.
    let empty = g.ranked(&[0, 4]);
    let s = g.ints(&[4, 0]);
    assert_eq!(
        g.infer("Reshape", &[empty, s], &[("allowzero", int(1))]),
        "tensor<4x0xf32>"
    );
    let d = g.ranked(&[DYN, 3, 4]);
    let s = g.ints(&[0, -1]);
    assert_eq!(g.infer("Reshape", &[d, s], &[]), "tensor<?x?xf32>");
    let s = g.ints(&[-1, 12]);
    assert_eq!(g.infer("Reshape", &[d, s], &[]), "tensor<?x12xf32>");
    // Non-constant shape of known length.
    let shape_arg =
        g.m.add_block_arg(g.block, Type::tensor(vec![3], Type::i64()));
    assert_eq!(
        g.infer("Reshape", &[x, shape_arg], &[]),
        "tensor<?x?x?xf32>"
    );
}

#[test]
fn shape_ops() {
    let mut g = G::new();
    let x = g.ranked(&[2, 3, 4]);
    assert_eq!(g.infer("Flatten", &[x], &[]), "tensor<2x12xf32>");
    assert_eq!(
        g.infer("Flatten", &[x], &[("axis", int(0))]),
        "tensor<1x24xf32>"
    );
    assert_eq!(
        g.infer("Flatten", &[x], &[("axis", int(-1))]),
        "tensor<6x4xf32>"
    );
    assert_eq!(g.infer("Transpose", &[x], &[]), "tensor<4x3x2xf32>");
    assert_eq!(
        g.infer("Transpose", &[x], &[("perm", ints(&[1, 0, 2]))]),
        "tensor<3x2x4xf32>"
    );
    assert!(g
        .infer("Transpose", &[x], &[("perm", ints(&[1, 1, 2]))])
        .starts_with("error"));
    let ax = g.ints(&[0, -1]);
    assert_eq!(g.infer("Unsqueeze", &[x, ax], &[]), "tensor<1x2x3x4x1xf32>");
    let y = g.ranked(&[1, 3, 1]);
    assert_eq!(g.infer("Squeeze", &[y], &[]), "tensor<3xf32>");
    let ax = g.ints(&[-1]);
    assert_eq!(g.infer("Squeeze", &[y, ax], &[]), "tensor<1x3xf32>");
    let ax = g.ints(&[1]);
    assert!(g.infer("Squeeze", &[y, ax], &[]).contains("cannot squeeze"));
    let z = g.ranked(&[2, 5, 4]);
    assert_eq!(
        g.infer("Concat", &[x, z], &[("axis", int(1))]),
        "tensor<2x8x4xf32>"
    );
    assert!(g
        .infer("Concat", &[x, z], &[("axis", int(0))])
        .contains("differ"));
    let idx =
        g.m.add_block_arg(g.block, Type::tensor(vec![5, 6], Type::i64()));
    assert_eq!(
        g.infer("Gather", &[x, idx], &[("axis", int(1))]),
        "tensor<2x5x6x4xf32>"
    );
    assert_eq!(g.infer("Shape", &[x], &[]), "tensor<3xi64>");
    assert_eq!(
        g.infer("Shape", &[x], &[("start", int(-2))]),
        "tensor<2xi64>"
    );
    assert_eq!(
        g.infer("Shape", &[x], &[("start", int(1)), ("end", int(-5))]),
        "tensor<0xi64>"
    );
    assert_eq!(g.infer("Size", &[x], &[]), "tensor<i64>");
    let shape = g.ints(&[3, 1, 4]);
    let one = g.ranked(&[3, 1]);
    assert_eq!(g.infer("Expand", &[one, shape], &[]), "tensor<3x3x4xf32>");
    let mut cos = g.op("ConstantOfShape", &[shape], &[], 1);
    assert_eq!(
        infer_op(&g.m, cos).unwrap().unwrap()[0].to_string(),
        "tensor<3x1x4xf32>"
    );
    let v = Elements::from_wide(DType::I32, vec![1], &[WideNum::from_i64(7)]).unwrap();
    cos = g.op(
        "ConstantOfShape",
        &[shape],
        &[("value", Attribute::Elements(v))],
        1,
    );
    assert_eq!(
        infer_op(&g.m, cos).unwrap().unwrap()[0].to_string(),
        "tensor<3x1x4xi32>"
    );
    let (s, l, d) = (
        g.scalar(DType::I64, 1.0),
        g.scalar(DType::I64, 10.0),
        g.scalar(DType::I64, 3.0),
    );
    let r = g.op("Range", &[s, l, d], &[], 1);
    assert_eq!(
        infer_op(&g.m, r).unwrap().unwrap()[0].to_string(),
        "tensor<3xi64>"
    );
    let (s, l, d) = (
        g.scalar(DType::F32, 0.0),
        g.scalar(DType::F32, 1.0),
        g.scalar(DType::F32, 0.3),
    );
    let r = g.op("Range", &[s, l, d], &[], 1);
    assert_eq!(
        infer_op(&g.m, r).unwrap().unwrap()[0].to_string(),
        "tensor<4xf32>"
    );
}

#[test]
fn slices() {
    assert_eq!(slice_extent(10, 2, 8, 1), 6);
    assert_eq!(slice_extent(10, -3, i64::MAX, 1), 3);
    assert_eq!(slice_extent(10, 0, 10, 3), 4);
    assert_eq!(slice_extent(10, i64::MAX, i64::MIN, -1), 10);
    assert_eq!(slice_extent(10, 8, 2, -2), 3);
    assert_eq!(slice_extent(10, 5, 5, 1), 0);
    assert_eq!(slice_extent(0, 0, -1, -1), 0);
    let mut g = G::new();
    let x = g.ranked(&[10, DYN, 6]);
    let (st, en, ax, sp) = (
        g.ints(&[1, 0]),
        g.ints(&[-1, 3]),
        g.ints(&[0, 2]),
        g.ints(&[2, 1]),
    );
    assert_eq!(
        g.infer("Slice", &[x, st, en, ax, sp], &[]),
        "tensor<4x?x3xf32>"
    );
    let none = g.none();
    assert_eq!(
        g.infer("Slice", &[x, st, en, ax, none], &[]),
        "tensor<8x?x3xf32>"
    );
    let zero = g.ints(&[0, 0]);
    assert!(g
        .infer("Slice", &[x, st, en, ax, zero], &[])
        .contains("step"));
}

#[test]
fn reductions() {
    let mut g = G::new();
    let x = g.ranked(&[2, 3, 4]);
    let ax = g.ints(&[1]);
    assert_eq!(g.infer("ReduceMean", &[x, ax], &[]), "tensor<2x1x4xf32>");
    assert_eq!(
        g.infer("ReduceSum", &[x, ax], &[("keepdims", int(0))]),
        "tensor<2x4xf32>"
    );
    let ax = g.ints(&[0, -1]);
    assert_eq!(g.infer("ReduceMax", &[x, ax], &[]), "tensor<1x3x1xf32>");
    assert_eq!(
        g.infer("ReduceMax", &[x], &[("keepdims", int(0))]),
        "tensor<f32>"
    );
    assert_eq!(
        g.infer("ReduceSum", &[x], &[("noop_with_empty_axes", int(1))]),
        "tensor<2x3x4xf32>"
    );
    assert_eq!(
        g.infer("ArgMax", &[x], &[("axis", int(2))]),
        "tensor<2x3x1xi64>"
    );
}

#[test]
fn refine_prefers_inference_and_fills_unknowns() {
    let t = |s: &[i64]| Type::tensor(s.to_vec(), Type::f32());
    assert_eq!(refine(&t(&[2, DYN]), t(&[DYN, 3])), (t(&[2, 3]), false));
    assert_eq!(refine(&t(&[2]), t(&[3])), (t(&[3]), true));
    assert_eq!(refine(&t(&[2]), t(&[2, 1])), (t(&[2, 1]), true));
    let placeholder = Type::unranked_tensor(Type::f32());
    let i = Type::tensor(vec![2], Type::i64());
    assert_eq!(refine(&placeholder, i.clone()), (i, false));
    assert_eq!(
        refine(&t(&[4]), Type::unranked_tensor(Type::f32())),
        (t(&[4]), false)
    );
}

#[test]
fn infer_function_updates_the_signature() {
    let mut m = Module::new();
    let body = m.body();
    let x_ty = Type::tensor(vec![2, 3], Type::f32());
    let (f, entry) = Builder::at_end(&mut m, body).func("f", vec![x_ty], vec![]);
    let x = m.block_arg(entry, 0).unwrap();
    let mut b = Builder::at_end(&mut m, entry);
    let r = b.op1("onnx.Relu", &[x], Type::unranked_tensor(Type::f32()), &[]);
    let t = b.op1(
        "onnx.Transpose",
        &[r],
        Type::unranked_tensor(Type::f32()),
        &[],
    );
    b.ret(&[t]);
    infer_function(&mut m, f).unwrap();
    let ft = m
        .attr(f, "function_type")
        .unwrap()
        .as_type()
        .unwrap()
        .to_string();
    assert_eq!(ft, "(tensor<2x3xf32>) -> tensor<3x2xf32>");
    ir::verify(&m).unwrap();
}

#[test]
fn data_ops() {
    let mut g = G::new();
    let x = g.ranked(&[2, 3, 4]);
    let reps = g.ints(&[2, 1, 3]);
    assert_eq!(g.infer("Tile", &[x, reps], &[]), "tensor<4x3x12xf32>");
    let pads = g.ints(&[0, 1, 2, 0, 1, -1]);
    assert_eq!(g.infer("Pad", &[x, pads], &[]), "tensor<2x5x5xf32>");
    let (pads2, axes) = (g.ints(&[1, 1]), g.ints(&[-1]));
    let none = g.none();
    assert_eq!(
        g.infer("Pad", &[x, pads2, none, axes], &[]),
        "tensor<2x3x6xf32>"
    );
    let sizes = g.ints(&[1, 3]);
    let sp = g.op("Split", &[x, sizes], &[("axis", int(-1))], 2);
    let tys: Vec<String> = infer_op(&g.m, sp)
        .unwrap()
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(tys, ["tensor<2x3x1xf32>", "tensor<2x3x3xf32>"]);
    // Uneven split without sizes: the last chunk is smaller.
    let sp = g.op(
        "Split",
        &[x],
        &[("axis", int(1)), ("num_outputs", int(2))],
        2,
    );
    let tys: Vec<String> = infer_op(&g.m, sp)
        .unwrap()
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(tys, ["tensor<2x2x4xf32>", "tensor<2x1x4xf32>"]);
    let bad = g.ints(&[1, 2]);
    let sp = g.op("Split", &[x, bad], &[("axis", int(2))], 2);
    assert!(infer_op(&g.m, sp).is_err());
    let k = g.ints(&[2]);
    let tk = g.op("TopK", &[x, k], &[], 2);
    let tys: Vec<String> = infer_op(&g.m, tk)
        .unwrap()
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(tys, ["tensor<2x3x2xf32>", "tensor<2x3x2xi64>"]);
    let img = g.ranked(&[1, 8, 2, 3]);
    assert_eq!(
        g.infer("DepthToSpace", &[img], &[("blocksize", int(2))]),
        "tensor<1x2x4x6xf32>"
    );
    assert_eq!(g.infer("NonZero", &[x], &[]), "tensor<3x?xi64>");
}

#[test]
fn misc_ops() {
    let mut g = G::new();
    let x = g.ranked(&[1, 3, 5, 7]);
    let none = g.none();
    let scales = g.konst(
        Elements::from_wide(
            DType::F32,
            vec![4],
            &[1.0, 1.0, 2.0, 1.5].map(WideNum::from_f64),
        )
        .unwrap(),
    );
    assert_eq!(
        g.infer("Resize", &[x, none, scales], &[]),
        "tensor<1x3x10x10xf32>"
    );
    assert_eq!(
        g.infer("Upsample", &[x, scales], &[]),
        "tensor<1x3x10x10xf32>"
    );
    let sizes = g.ints(&[4, 4]);
    let attrs = [("axes", ints(&[2, 3]))];
    assert_eq!(
        g.infer("Resize", &[x, none, none, sizes], &attrs),
        "tensor<1x3x4x4xf32>"
    );
    let idx =
        g.m.add_block_arg(g.block, Type::tensor(vec![2, 3], Type::i64()));
    let depth = g.scalar(DType::I64, 10.0);
    let values = g.ranked(&[2]);
    assert_eq!(
        g.infer("OneHot", &[idx, depth, values], &[("axis", int(1))]),
        "tensor<2x10x3xf32>"
    );
    let nd_idx =
        g.m.add_block_arg(g.block, Type::tensor(vec![6, 2], Type::i64()));
    assert_eq!(g.infer("GatherND", &[x, nd_idx], &[]), "tensor<6x5x7xf32>");
    let s = g.scalar(DType::F32, 0.5);
    assert_eq!(
        g.infer("QuantizeLinear", &[x, s], &[]),
        "tensor<1x3x5x7xui8>"
    );
    let zp = g.konst(Elements::from_wide(DType::I8, vec![], &[WideNum::from_i64(0)]).unwrap());
    assert_eq!(
        g.infer("QuantizeLinear", &[x, s, zp], &[]),
        "tensor<1x3x5x7xi8>"
    );
    let q =
        g.m.add_block_arg(g.block, Type::tensor(vec![4], Type::i(8)));
    assert_eq!(
        g.infer("DequantizeLinear", &[q, s, zp], &[]),
        "tensor<4xf32>"
    );
}

fn text(v: &str) -> Attribute {
    Attribute::string(v)
}

#[test]
fn recurrent_layouts() {
    let mut g = G::new();
    let x = g.ranked(&[5, 2, 3]);
    let w = g.ranked(&[2, 16, 3]);
    let attrs = [("direction", text("bidirectional"))];
    assert_eq!(
        g.infer_n("LSTM", &[x, w], &attrs, 3),
        "tensor<5x2x2x4xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>"
    );
    let attrs = [("hidden_size", int(7)), ("layout", int(1))];
    assert_eq!(
        g.infer_n("GRU", &[x, w], &attrs, 2),
        "tensor<5x2x1x7xf32>, tensor<5x1x7xf32>"
    );
}

#[test]
fn attention_3d_and_4d() {
    let mut g = G::new();
    let (q, k, v) = (
        g.ranked(&[2, 4, 8]),
        g.ranked(&[2, 6, 4]),
        g.ranked(&[2, 6, 6]),
    );
    let heads = [("q_num_heads", int(4)), ("kv_num_heads", int(2))];
    assert_eq!(
        g.infer_n("Attention", &[q, k, v], &heads, 4),
        "tensor<2x4x12xf32>, tensor<2x2x6x2xf32>, tensor<2x2x6x3xf32>, tensor<2x4x4x6xf32>"
    );
    let (q, k, v) = (
        g.ranked(&[1, 4, 3, 8]),
        g.ranked(&[1, 2, 5, 8]),
        g.ranked(&[1, 2, 5, 6]),
    );
    let (none, past) = (g.none(), g.ranked(&[1, 2, 7, 8]));
    assert_eq!(
        g.infer_n("Attention", &[q, k, v, none, past], &[], 2),
        "tensor<1x4x3x6xf32>, tensor<1x2x12x8xf32>"
    );
}

#[test]
fn einsum_equations() {
    let mut g = G::new();
    let (a, b) = (g.ranked(&[2, 3, 4]), g.ranked(&[2, 4, 5]));
    let eq = |e: &str| [("equation", text(e))];
    assert_eq!(
        g.infer("Einsum", &[a, b], &eq("bij,bjk->bik")),
        "tensor<2x3x5xf32>"
    );
    assert_eq!(
        g.infer("Einsum", &[a, b], &eq("...ij,...jk")),
        "tensor<2x3x5xf32>"
    );
    assert_eq!(g.infer("Einsum", &[a], &eq("ijk->")), "tensor<f32>");
    let square = g.ranked(&[3, 3, 4]);
    assert_eq!(g.infer("Einsum", &[square], &eq("iij")), "tensor<4xf32>");
    assert!(g.infer("Einsum", &[a], &eq("iij")).starts_with("error"));
    assert!(g
        .infer("Einsum", &[a, b], &eq("ij,jk->ik"))
        .starts_with("error"));
}

#[test]
fn signal_ops() {
    let mut g = G::new();
    let x = g.ranked(&[2, 16, 1]);
    let n = g.scalar(DType::I64, 10.0);
    let axis = g.scalar(DType::I64, 1.0);
    assert_eq!(
        g.infer("DFT", &[x, n, axis], &[("onesided", int(1))]),
        "tensor<2x6x2xf32>"
    );
    let step = g.scalar(DType::I64, 4.0);
    let window = g.ranked(&[8]);
    assert_eq!(
        g.infer("STFT", &[x, step, window], &[]),
        "tensor<2x3x5x2xf32>"
    );
    let size = g.scalar(DType::I64, 9.0);
    assert_eq!(g.infer("HannWindow", &[size], &[]), "tensor<9xf32>");
}

#[test]
fn runtime_axes_keep_what_is_known() {
    let mut g = G::new();
    let x = g.ranked(&[2, 3, 4]);
    let axes = g.arg(Some(vec![2]));
    assert_eq!(
        g.infer("ReduceSum", &[x, axes], &[("keepdims", int(0))]),
        "tensor<?xf32>"
    );
    assert_eq!(g.infer("Squeeze", &[x, axes], &[]), "tensor<?xf32>");
    let unknown = g.arg(Some(vec![DYN]));
    assert_eq!(
        g.infer("ReduceSum", &[x, unknown], &[("keepdims", int(0))]),
        "tensor<*xf32>"
    );
}

#[test]
fn reshape_to_the_shape_of_a_value_takes_its_dims() {
    let mut g = G::new();
    let (x, y) = (g.ranked(&[2, DYN, 4]), g.ranked(&[6, 4]));
    let shape = g.op("Shape", &[x], &[], 1);
    let shape = g.m.result(shape, 0).unwrap();
    assert_eq!(g.infer("Reshape", &[y, shape], &[]), "tensor<2x?x4xf32>");
    let tail = g.op("Shape", &[x], &[("start", int(1))], 1);
    let tail = g.m.result(tail, 0).unwrap();
    assert_eq!(g.infer("Reshape", &[y, tail], &[]), "tensor<?x4xf32>");
}

#[test]
fn dft_axis_defaults_to_the_last_signal_axis() {
    let mut g = G::new();
    let x = g.ranked(&[2, 16, 8, 1]);
    assert_eq!(g.infer("DFT", &[x], &[]), "tensor<2x16x8x2xf32>");
    let none = g.none();
    let n = g.scalar(DType::I64, 4.0);
    assert_eq!(
        g.infer("DFT", &[x, n, none], &[("onesided", int(1))]),
        "tensor<2x16x3x2xf32>"
    );
}

/// An If (with `else_x` as the else branch's Reshape target) in a function.
fn if_module(then_rank4: bool) -> (Module, OpId, OpId) {
    onnx::dialect::register();
    let then_target = if then_rank4 {
        "[1, 2, 5, 8]"
    } else {
        "[2, 5, 8]"
    };
    let src = format!(
        r#"func.func @f(%c: tensor<i1>, %x: tensor<2x5x8xf32>, %w: tensor<1x12x8xf32>, %r: tensor<1x12x3xf32>) -> tensor<*xf32> {{
  %0 = "onnx.If"(%c) ({{
    %s = "onnx.Constant"() {{value = dense<{then_target}> : tensor<{n}xi64>}} : () -> tensor<{n}xi64>
    %x1 = "onnx.Reshape"(%x, %s) : (tensor<2x5x8xf32>, tensor<{n}xi64>) -> tensor<*xf32>
    %y:3 = "onnx.LSTM"(%x1, %w, %r) {{hidden_size = 3 : i64}} : (tensor<*xf32>, tensor<1x12x8xf32>, tensor<1x12x3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
    "onnx.Yield"(%y#1) : (tensor<*xf32>) -> ()
  }}, {{
    %s = "onnx.Constant"() {{value = dense<[1, 2, 5, 8]> : tensor<4xi64>}} : () -> tensor<4xi64>
    %x4 = "onnx.Reshape"(%x, %s) : (tensor<2x5x8xf32>, tensor<4xi64>) -> tensor<*xf32>
    %y:3 = "onnx.LSTM"(%x4, %w, %r) {{hidden_size = 3 : i64}} : (tensor<*xf32>, tensor<1x12x8xf32>, tensor<1x12x3xf32>) -> (tensor<*xf32>, tensor<*xf32>, tensor<*xf32>)
    "onnx.Yield"(%y#1) : (tensor<*xf32>) -> ()
  }}) : (tensor<i1>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}}"#,
        n = if then_rank4 { 4 } else { 3 }
    );
    let m = ir::text::parse_module(&src, "if.mlir").unwrap();
    let f = m.top_level_ops("func.func")[0];
    let iff = m
        .collect_ops(f)
        .into_iter()
        .find(|&o| onnx::is(&m, o, OpKind::If))
        .unwrap();
    (m, f, iff)
}

#[test]
fn an_if_branch_that_fails_inference_aborts_if_taken() {
    // The else branch runs an LSTM over a rank-4 X: recorded on the If,
    // and the then branch alone types the result.
    let (mut m, f, iff) = if_module(false);
    infer_function(&mut m, f).unwrap();
    let err = onnx::branches::branch_error(&m, iff, 1).unwrap();
    assert!(err.contains("X must have rank 3, got 4"), "{err}");
    assert_eq!(onnx::branches::branch_error(&m, iff, 0), None);
    let r = m.results(iff)[0];
    assert_eq!(m.value_type(r).to_string(), "tensor<1x5x3xf32>");
    ir::verify(&m).unwrap();
    // Both branches failing is the compile error.
    let (mut m, f, _) = if_module(true);
    let e = infer_function(&mut m, f).unwrap_err();
    assert!(e.to_string().contains("X must have rank 3, got 4"), "{e}");
}
