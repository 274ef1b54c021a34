//! `mlp`: a small multilayer perceptron mixing MatMul+Add and Gemm, with
//! weight-path computations (Transpose, Add of initializers) that constant
//! propagation must fold away.

use frontend::proto::ModelProto;

use super::Shapes;
use crate::graph::{attr, GraphBuilder, Init};
use crate::GenOptions;

const IN: i64 = 64;
const HIDDEN1: i64 = 128;
const HIDDEN2: i64 = 32;
const OUT: i64 = 10;

pub(super) fn inputs() -> Shapes {
    super::one("x", &[1, IN])
}

pub(super) fn outputs() -> Shapes {
    super::one("y", &[1, OUT])
}

pub(super) fn build(opts: &GenOptions) -> Result<ModelProto, String> {
    let mut b = GraphBuilder::new("mlp", opts);
    b.doc("onnxc zoo: mlp, 64 -> 128 -> 32 -> 10 with ReLU");
    let x = b.input_f32("x", &[1, IN]);

    // fc1 as MatMul + Add, the PyTorch export pattern.
    let w1 = b.weight("fc1.weight", &[IN, HIDDEN1], Init::he(IN));
    let b1 = b.weight("fc1.bias", &[HIDDEN1], Init::BIAS);
    let h = b.node("MatMul", "fc1", &[&x, &w1], vec![]);
    let h = b.node("Add", "fc1.add_bias", &[&h, &b1], vec![]);
    let h = b.node("Relu", "relu1", &[&h], vec![]);

    // fc2 as Gemm with the weight stored [out, in] and transB = 1.
    let w2 = b.weight("fc2.weight", &[HIDDEN2, HIDDEN1], Init::he(HIDDEN1));
    let b2 = b.weight("fc2.bias", &[HIDDEN2], Init::BIAS);
    let h = b.node("Gemm", "fc2", &[&h, &w2, &b2], vec![attr::int("transB", 1)]);
    let h = b.node("Relu", "relu2", &[&h], vec![]);

    // fc3: weight stored transposed, bias split in two; both fold.
    let w3t = b.weight("fc3.weight_t", &[OUT, HIDDEN2], Init::he(HIDDEN2));
    let w3 = b.node(
        "Transpose",
        "fc3.weight",
        &[&w3t],
        vec![attr::ints("perm", &[1, 0])],
    );
    let b3a = b.weight("fc3.bias_a", &[OUT], Init::BIAS);
    let b3b = b.weight("fc3.bias_b", &[OUT], Init::BIAS);
    let b3 = b.node("Add", "fc3.bias", &[&b3a, &b3b], vec![]);
    let h = b.node("MatMul", "fc3", &[&h, &w3], vec![]);
    b.node_outputs("Add", "fc3.add_bias", &[&h, &b3], &["y"], vec![]);
    b.output_f32("y", &[1, OUT]);
    b.finish()
}
