//! The model zoo: one module per model family.

mod cnn;
mod mlp;

use frontend::proto::ModelProto;

use crate::GenOptions;

/// Named `(value name, shape)` list of a model's graph inputs or outputs.
pub type Shapes = Vec<(String, Vec<i64>)>;

/// One generatable model.
pub struct ZooEntry {
    pub name: &'static str,
    pub summary: &'static str,
    /// Graph inputs in order (all f32 so far).
    pub input_shapes: fn() -> Shapes,
    /// Graph outputs in order.
    pub output_shapes: fn() -> Shapes,
    pub build: fn(&GenOptions) -> Result<ModelProto, String>,
}

static ZOO: &[ZooEntry] = &[
    ZooEntry {
        name: "mlp",
        summary: "3-layer perceptron 64→128→32→10 (MatMul/Add, Gemm transB, ReLU)",
        input_shapes: mlp::inputs,
        output_shapes: mlp::outputs,
        build: mlp::build,
    },
    ZooEntry {
        name: "cnn",
        summary: "2-conv CNN on 3×32×32 (Conv, ReLU, MaxPool, Flatten, Gemm) → 10",
        input_shapes: cnn::inputs,
        output_shapes: cnn::outputs,
        build: cnn::build,
    },
];

/// All models, in a stable order.
pub fn zoo() -> &'static [ZooEntry] {
    ZOO
}

fn one(name: &str, dims: &[i64]) -> Shapes {
    vec![(name.to_string(), dims.to_vec())]
}
