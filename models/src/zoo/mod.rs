//! The model zoo: one module per model family.

mod arcface;
mod classic;
mod cnn;
mod layers;
mod mlp;
mod resnet;
mod transformer;

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
    /// Over ~10M weights: slow to generate in debug builds, so the default
    /// tests check these structurally only.
    pub large: bool,
    /// `Some(v)`: the inputs are int64 token ids, sampled from [0, v);
    /// `None`: f32 inputs.
    pub token_vocab: Option<i64>,
}

static ZOO: &[ZooEntry] = &[
    ZooEntry {
        name: "mlp",
        summary: "3-layer perceptron 64→128→32→10 (MatMul/Add, Gemm transB, ReLU)",
        input_shapes: mlp::inputs,
        output_shapes: mlp::outputs,
        build: mlp::build,
        large: false,
        token_vocab: None,
    },
    ZooEntry {
        name: "cnn",
        summary: "2-conv CNN on 3×32×32 (Conv, ReLU, MaxPool, Flatten, Gemm) → 10",
        input_shapes: cnn::inputs,
        output_shapes: cnn::outputs,
        build: cnn::build,
        large: false,
        token_vocab: None,
    },
    ZooEntry {
        name: "resnet50v1",
        summary: "ResNet-50 v1 (model zoo layout), 3×224×224 → 1000, ~25.6M weights",
        input_shapes: resnet::inputs,
        output_shapes: resnet::outputs,
        build: resnet::resnet50,
        large: true,
        token_vocab: None,
    },
    ZooEntry {
        name: "resnet152v1",
        summary: "ResNet-152 v1 (model zoo layout), 3×224×224 → 1000, ~60M weights",
        input_shapes: resnet::inputs,
        output_shapes: resnet::outputs,
        build: resnet::resnet152,
        large: true,
        token_vocab: None,
    },
    ZooEntry {
        name: "arcface100",
        summary: "ArcFace LResNet100E-IR, 3×112×112 → 512 embedding, ~65M weights",
        input_shapes: arcface::inputs,
        output_shapes: arcface::outputs,
        build: arcface::build,
        large: true,
        token_vocab: None,
    },
    ZooEntry {
        name: "vgg19",
        summary: "VGG-19, 3×224×224 → 1000, ~144M weights",
        input_shapes: classic::inputs,
        output_shapes: classic::outputs,
        build: classic::vgg19,
        large: true,
        token_vocab: None,
    },
    ZooEntry {
        name: "densenet121",
        summary: "DenseNet-121 (growth 32, Concat blocks), 3×224×224 → 1000, ~8M weights",
        input_shapes: classic::inputs,
        output_shapes: classic::outputs,
        build: classic::densenet121,
        large: false,
        token_vocab: None,
    },
    ZooEntry {
        name: "mobilenetv2",
        summary:
            "MobileNetV2 1.0 (depthwise convs, Clip as ReLU6), 3×224×224 → 1000, ~3.5M weights",
        input_shapes: classic::inputs,
        output_shapes: classic::outputs,
        build: classic::mobilenetv2,
        large: false,
        token_vocab: None,
    },
    ZooEntry {
        name: "squeezenet",
        summary: "SqueezeNet 1.1 (Fire modules), 3×224×224 → 1000, ~1.2M weights",
        input_shapes: classic::inputs,
        output_shapes: classic::outputs,
        build: classic::squeezenet,
        large: false,
        token_vocab: None,
    },
    ZooEntry {
        name: "bert-base",
        summary:
            "BERT-base-like encoder as PyTorch exports it (dynamic batch × sequence), ~110M weights",
        input_shapes: transformer::inputs,
        output_shapes: transformer::bert_outputs,
        build: transformer::bert,
        large: true,
        token_vocab: Some(transformer::SAMPLE_VOCAB),
    },
    ZooEntry {
        name: "gpt2-small",
        summary: "GPT-2-small-like decoder with causal mask and tied LM head, ~124M weights",
        input_shapes: transformer::inputs,
        output_shapes: transformer::gpt2_outputs,
        build: transformer::gpt2,
        large: true,
        token_vocab: Some(transformer::SAMPLE_VOCAB),
    },
    ZooEntry {
        name: "bert-tiny",
        summary:
            "bert-base's graph at 2 layers, 64 hidden, 4 heads, vocabulary 1000 (~0.2M weights)",
        input_shapes: transformer::inputs,
        output_shapes: transformer::bert_tiny_outputs,
        build: transformer::bert_tiny,
        large: false,
        token_vocab: Some(transformer::BERT_TINY.vocab),
    },
    ZooEntry {
        name: "gpt2-tiny",
        summary:
            "gpt2-small's graph at 2 layers, 64 hidden, 4 heads, vocabulary 1000 (~0.2M weights)",
        input_shapes: transformer::inputs,
        output_shapes: transformer::gpt2_tiny_outputs,
        build: transformer::gpt2_tiny,
        large: false,
        token_vocab: Some(transformer::GPT2_TINY.vocab),
    },
];

/// All models, in a stable order.
pub fn zoo() -> &'static [ZooEntry] {
    ZOO
}

fn one(name: &str, dims: &[i64]) -> Shapes {
    vec![(name.to_string(), dims.to_vec())]
}
