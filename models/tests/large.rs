//! Structural checks of the large zoo models with their full weights (the
//! onnxruntime runs of these are `oracle::large_models_full_weights`,
//! ignored by default, and the benchmark).

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use models::{encode, generate, GenOptions};

/// (float weights, op type histogram) of a generated model.
fn census(name: &str, light: bool) -> (u64, BTreeMap<String, usize>) {
    let g = generate(name, &GenOptions { seed: 1, light })
        .unwrap()
        .graph
        .unwrap();
    let weights = g
        .initializer
        .iter()
        .filter(|t| t.data_type == 1)
        .map(|t| t.dims.iter().product::<i64>() as u64)
        .sum();
    let mut ops = BTreeMap::new();
    for n in &g.node {
        *ops.entry(n.op_type.clone()).or_insert(0) += 1;
    }
    (weights, ops)
}

fn ops(list: &[(&str, usize)]) -> BTreeMap<String, usize> {
    list.iter().map(|&(k, v)| (k.to_string(), v)).collect()
}

#[test]
fn resnet152v1_layout() {
    let (weights, hist) = census("resnet152v1", false);
    // torchvision's 60.19M parameters plus BN running statistics.
    assert_eq!(weights, 60_344_232);
    // 1 stem + 50 units × 3 + 4 downsamples = 155 Conv+BN pairs.
    let want = ops(&[
        ("Add", 50),
        ("BatchNormalization", 155),
        ("Conv", 155),
        ("Flatten", 1),
        ("Gemm", 1),
        ("GlobalAveragePool", 1),
        ("MaxPool", 1),
        ("Relu", 151),
    ]);
    assert_eq!(hist, want);
    // The light variant has the same graph plus one ConstantOfShape per
    // weight (4 per BN, 1 per Conv, 2 for the Gemm).
    let (light_weights, mut light) = census("resnet152v1", true);
    assert_eq!(light_weights, 0);
    assert_eq!(light.remove("ConstantOfShape"), Some(155 * 5 + 2));
    assert_eq!(light, want);
}

#[test]
fn resnet50v1_layout() {
    let (weights, hist) = census("resnet50v1", false);
    assert_eq!(weights, 25_610_152);
    assert_eq!(hist["Conv"], 53);
    assert_eq!(hist["Add"], 16);
}

#[test]
fn arcface100_layout() {
    let (weights, hist) = census("arcface100", false);
    assert_eq!(weights, 65_225_794);
    // 49 IR units (3 BN, 2 Conv, 1 PRelu each) + 4 shortcut Conv+BN, the
    // stem, bn1 and the fc1 BatchNorm.
    let want = ops(&[
        ("Add", 49),
        ("BatchNormalization", 49 * 3 + 4 + 3),
        ("Conv", 49 * 2 + 4 + 1),
        ("Flatten", 1),
        ("Gemm", 1),
        ("Mul", 1),
        ("PRelu", 50),
        ("Sub", 1),
    ]);
    assert_eq!(hist, want);
}

#[test]
fn vgg19_layout() {
    let (weights, hist) = census("vgg19", false);
    assert_eq!(weights, 143_667_240);
    assert_eq!((hist["Conv"], hist["Gemm"], hist["MaxPool"]), (16, 3, 5));
}

#[test]
fn large_models_are_deterministic() {
    let opts = GenOptions {
        seed: 3,
        light: false,
    };
    let a = encode(&generate("arcface100", &opts).unwrap());
    assert!(a.len() > 260_000_000, "{}", a.len());
    assert_eq!(a, encode(&generate("arcface100", &opts).unwrap()));
}

#[test]
fn transformers_look_like_pytorch_exports() {
    // HF bert-base-uncased has 109,482,240 parameters and gpt2 124,439,808;
    // the rest are the exporter's scalar constants.
    for (name, want_weights) in [("bert-base", 109_482_280u64), ("gpt2-small", 124_439_872)] {
        let (weights, hist) = census(name, false);
        assert_eq!(weights, want_weights, "{name}");
        let layers = 12;
        // Shape chains feed every head split/merge (4 Reshapes a layer).
        assert_eq!(hist["Reshape"], 4 * layers, "{name}");
        assert!(hist["Shape"] >= 8 * layers, "{name}");
        assert!(hist["Unsqueeze"] >= 8 * layers, "{name}");
        assert!(hist["Concat"] >= 4 * layers, "{name}");
        // Decomposed LayerNorm: 2 ReduceMean + Pow + Sqrt each.
        assert_eq!(hist["ReduceMean"], hist["Sqrt"] * 2, "{name}");
        assert_eq!(hist["Sqrt"], 2 * layers + 1, "{name}");
        assert_eq!(hist["Softmax"], layers, "{name}");
        assert!(!hist.contains_key("LayerNormalization"), "{name}");
    }
    let (_, bert) = census("bert-base", true);
    assert_eq!(bert["Erf"], 12);
    assert_eq!(bert["ConstantOfShape"], 1 + 199, "mask + 199 light weights");
    let (_, gpt2) = census("gpt2-small", true);
    assert_eq!((gpt2["Where"], gpt2["Range"], gpt2["Split"]), (12, 1, 12));
}
