//! `cnn`: two conv/relu/maxpool stages and a classifier. The second conv's
//! weight is computed (Reshape of a flat tensor times a scale) so constant
//! propagation has work to do.

use frontend::proto::ModelProto;

use super::Shapes;
use crate::graph::{attr, GraphBuilder, Init};
use crate::GenOptions;

const C_IN: i64 = 3;
const HW: i64 = 32;
const C1: i64 = 8;
const C2: i64 = 16;
const CLASSES: i64 = 10;
/// Spatial size after two 2×2/2 pools.
const HW_OUT: i64 = HW / 4;

pub(super) fn inputs() -> Shapes {
    super::one("x", &[1, C_IN, HW, HW])
}

pub(super) fn outputs() -> Shapes {
    super::one("y", &[1, CLASSES])
}

pub(super) fn build(opts: &GenOptions) -> Result<ModelProto, String> {
    let mut b = GraphBuilder::new("cnn", opts);
    b.doc("onnxc zoo: cnn, 2 x (conv3x3 + relu + maxpool) + linear");
    let x = b.input_f32("x", &[1, C_IN, HW, HW]);

    let conv = |b: &mut GraphBuilder, name: &str, inputs: &[&str]| {
        let attrs = vec![
            attr::ints("kernel_shape", &[3, 3]),
            attr::ints("pads", &[1, 1, 1, 1]),
            attr::ints("strides", &[1, 1]),
        ];
        b.node("Conv", name, inputs, attrs)
    };
    let pool = |b: &mut GraphBuilder, name: &str, input: &str| {
        let attrs = vec![
            attr::ints("kernel_shape", &[2, 2]),
            attr::ints("strides", &[2, 2]),
        ];
        b.node("MaxPool", name, &[input], attrs)
    };

    // Stage 1: conv with bias.
    let w1 = b.weight("conv1.weight", &[C1, C_IN, 3, 3], Init::he(C_IN * 9));
    let b1 = b.weight("conv1.bias", &[C1], Init::BIAS);
    let h = conv(&mut b, "conv1", &[&x, &w1, &b1]);
    let h = b.node("Relu", "relu1", &[&h], vec![]);
    let h = pool(&mut b, "pool1", &h);

    // Stage 2: bias-free conv whose weight = reshape(flat) * He scale.
    let fan_in = C1 * 9;
    let flat = b.weight(
        "conv2.weight_flat",
        &[C2 * fan_in],
        Init::Normal { std: 1.0 },
    );
    let shape = b.const_i64("conv2.weight_shape", &[4], &[C2, C1, 3, 3]);
    let w2 = b.node("Reshape", "conv2.weight_reshape", &[&flat, &shape], vec![]);
    let scale = (2.0 / fan_in as f64).sqrt() as f32;
    let scale = b.const_f32("conv2.weight_scale", &[], &[scale]);
    let w2 = b.node("Mul", "conv2.weight", &[&w2, &scale], vec![]);
    let h = conv(&mut b, "conv2", &[&h, &w2]);
    let h = b.node("Relu", "relu2", &[&h], vec![]);
    let h = pool(&mut b, "pool2", &h);

    // Classifier.
    let h = b.node("Flatten", "flatten", &[&h], vec![attr::int("axis", 1)]);
    let features = C2 * HW_OUT * HW_OUT;
    let wf = b.weight("fc.weight", &[CLASSES, features], Init::he(features));
    let bf = b.weight("fc.bias", &[CLASSES], Init::BIAS);
    b.node_outputs(
        "Gemm",
        "fc",
        &[&h, &wf, &bf],
        &["y"],
        vec![attr::int("transB", 1)],
    );
    b.output_f32("y", &[1, CLASSES]);
    b.finish()
}
