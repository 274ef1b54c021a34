//! onnxc model-zoo generators: deterministic ONNX models written with prost.
//!
//! Every model is built from a seed, so the same seed gives a byte-identical
//! file. The `light` option swaps weights for `ConstantOfShape` nodes, like
//! onnx's `light_*` test models: tiny files with the full graph structure
//! (each fill value keeps its weight's scale, see `Init::light_value`).
//!
//! The zoo: `mlp`, `cnn`, model-zoo image CNNs (`resnet50v1`,
//! `resnet152v1`, `arcface100`, `vgg19`, `densenet121`, `mobilenetv2`,
//! `squeezenet`) and PyTorch-export-style transformers (`bert-base`,
//! `gpt2-small`, int64 token inputs with dynamic batch and sequence, and
//! their 2-layer `bert-tiny` / `gpt2-tiny` versions).

pub mod graph;
pub mod rng;
pub mod scaling;
pub mod zoo;

use frontend::proto::ModelProto;
use prost::Message;

pub use zoo::{zoo, ZooEntry};

/// How to generate a zoo model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenOptions {
    pub seed: u64,
    /// Weights as `ConstantOfShape` nodes instead of stored initializers.
    pub light: bool,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            seed: 42,
            light: false,
        }
    }
}

/// Builds zoo model `name` (or a scaling model, `chain-N` or
/// `transformer-N`); an unknown name lists the known ones.
pub fn generate(name: &str, opts: &GenOptions) -> Result<ModelProto, String> {
    if let Some((build, n)) = scaling::parse(name) {
        return build(n);
    }
    (find(name)?.build)(opts)
}

/// Serialized protobuf bytes of `model`.
pub fn encode(model: &ModelProto) -> Vec<u8> {
    model.encode_to_vec()
}

/// One graph input's sample: `(input name, shape, values)`. Token-id
/// inputs (see [`ZooEntry::token_vocab`]) hold small integers, exact in f32.
pub type SampleInput = (String, Vec<i64>, Vec<f32>);

/// A deterministic sample input per graph input of zoo model `name`, with
/// values drawn from N(0, 1), or uniform token ids for int64 inputs.
pub fn default_input(name: &str, seed: u64) -> Result<Vec<SampleInput>, String> {
    let entry = find(name)?;
    Ok((entry.input_shapes)()
        .into_iter()
        .map(|(input, shape)| {
            let n = shape.iter().map(|&d| d.max(0) as usize).product();
            let mut rng = rng::Rng::for_tensor(seed, &format!("input:{input}"));
            let values = match entry.token_vocab {
                Some(v) => (0..n)
                    .map(|_| (rng.uniform() * v as f64).floor() as f32)
                    .collect(),
                None => rng.normal_vec(n, 1.0),
            };
            (input, shape, values)
        })
        .collect())
}

/// The zoo entry called `name`.
pub fn entry(name: &str) -> Result<&'static ZooEntry, String> {
    find(name)
}

fn find(name: &str) -> Result<&'static ZooEntry, String> {
    zoo().iter().find(|e| e.name == name).ok_or_else(|| {
        let names: Vec<&str> = zoo().iter().map(|e| e.name).collect();
        format!(
            "unknown model `{name}`; known models: {}, and chain-N, transformer-N",
            names.join(", ")
        )
    })
}
