//! Pure-Rust checks of the zoo: round trips, determinism, structure.

// Test helpers outside #[test] fns panic on failure by design.
#![allow(clippy::unwrap_used)]

use bytes::Bytes;
use frontend::proto::{ModelProto, TensorProto};
use models::{default_input, encode, generate, zoo, GenOptions};
use prost::Message;

fn opts(seed: u64, light: bool) -> GenOptions {
    GenOptions { seed, light }
}

#[test]
fn every_model_roundtrips_and_is_deterministic() {
    for entry in zoo() {
        // Large models: light variants here, full weights in tests/large.rs.
        let variants: &[bool] = if entry.large { &[true] } else { &[false, true] };
        for &light in variants {
            let model = generate(entry.name, &opts(7, light)).unwrap();
            let bytes = encode(&model);
            let back = ModelProto::decode(Bytes::from(bytes.clone())).unwrap();
            assert_eq!(back, model, "{} light={light}", entry.name);
            let again = encode(&generate(entry.name, &opts(7, light)).unwrap());
            assert_eq!(
                bytes, again,
                "{} light={light} not deterministic",
                entry.name
            );
        }
    }
}

#[test]
fn seeds_change_weights_not_light_models() {
    for entry in zoo().iter().filter(|e| !e.large) {
        let a = encode(&generate(entry.name, &opts(1, false)).unwrap());
        let b = encode(&generate(entry.name, &opts(2, false)).unwrap());
        assert_eq!(a.len(), b.len(), "{}", entry.name);
        assert_ne!(a, b, "{}: seed has no effect", entry.name);
        let la = encode(&generate(entry.name, &opts(1, true)).unwrap());
        let lb = encode(&generate(entry.name, &opts(2, true)).unwrap());
        assert_eq!(la, lb, "{}: light model depends on the seed", entry.name);
        assert!(
            la.len() * 10 < a.len(),
            "{}: light model is not small",
            entry.name
        );
    }
}

#[test]
fn declared_io_matches_entry() {
    for entry in zoo() {
        let opts = GenOptions {
            light: entry.large,
            ..GenOptions::default()
        };
        let model = generate(entry.name, &opts).unwrap();
        assert_eq!(model.ir_version, 10);
        assert_eq!(model.opset_import[0].version, 17);
        let g = model.graph.unwrap();
        let names = |vs: &[frontend::proto::ValueInfoProto]| {
            vs.iter().map(|v| v.name.clone()).collect::<Vec<_>>()
        };
        let want_in: Vec<String> = (entry.input_shapes)().into_iter().map(|(n, _)| n).collect();
        let want_out: Vec<String> = (entry.output_shapes)()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names(&g.input), want_in);
        assert_eq!(names(&g.output), want_out);
        assert!(g.node.iter().all(|n| !n.name.is_empty()), "{}", entry.name);
    }
}

fn f32s(t: &TensorProto) -> Vec<f32> {
    t.raw_data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn weights_have_he_statistics() {
    let model = generate("mlp", &opts(3, false)).unwrap();
    let g = model.graph.unwrap();
    let w1 = g
        .initializer
        .iter()
        .find(|t| t.name == "fc1.weight")
        .unwrap();
    assert_eq!(w1.dims, vec![64, 128]);
    let xs = f32s(w1);
    assert_eq!(xs.len(), 64 * 128);
    let n = xs.len() as f64;
    let mean = xs.iter().map(|&x| f64::from(x)).sum::<f64>() / n;
    let std = (xs
        .iter()
        .map(|&x| (f64::from(x) - mean).powi(2))
        .sum::<f64>()
        / n)
        .sqrt();
    let he = (2.0f64 / 64.0).sqrt();
    assert!(mean.abs() < 0.02, "mean {mean}");
    assert!((std - he).abs() < 0.02 * he * 5.0, "std {std}, want {he}");
    let b1 = g.initializer.iter().find(|t| t.name == "fc1.bias").unwrap();
    assert!(f32s(b1).iter().all(|b| b.abs() <= 0.05));
}

#[test]
fn weight_paths_to_fold_are_present() {
    let ops = |name: &str, light: bool| -> Vec<String> {
        let g = generate(name, &opts(0, light)).unwrap().graph.unwrap();
        g.node.iter().map(|n| n.op_type.clone()).collect()
    };
    let mlp = ops("mlp", false);
    for op in ["Transpose", "Gemm", "MatMul", "Add", "Relu"] {
        assert!(mlp.contains(&op.to_string()), "mlp lacks {op}");
    }
    let cnn = ops("cnn", false);
    for op in ["Conv", "MaxPool", "Reshape", "Mul", "Flatten", "Gemm"] {
        assert!(cnn.contains(&op.to_string()), "cnn lacks {op}");
    }
    assert!(!mlp.contains(&"ConstantOfShape".to_string()));

    // Light: one ConstantOfShape per weight, fed by an int64 __SHAPE.
    let g = generate("mlp", &opts(0, true)).unwrap().graph.unwrap();
    let fills: Vec<_> = g
        .node
        .iter()
        .filter(|n| n.op_type == "ConstantOfShape")
        .collect();
    assert_eq!(fills.len(), 7);
    let w1 = fills.iter().find(|n| n.output == ["fc1.weight"]).unwrap();
    assert_eq!(w1.input, ["fc1.weight__SHAPE"]);
    let shape = g
        .initializer
        .iter()
        .find(|t| t.name == "fc1.weight__SHAPE")
        .unwrap();
    assert_eq!(shape.dims, vec![2]);
    assert_eq!(&shape.raw_data[..8], &64i64.to_le_bytes());
    assert!(g.initializer.iter().all(|t| t.data_type == 7));
}

#[test]
fn unknown_model_lists_names() {
    let err = generate("nope", &GenOptions::default()).unwrap_err();
    assert!(err.contains("mlp") && err.contains("cnn"), "{err}");
    assert!(default_input("nope", 0).is_err());
}

#[test]
fn default_inputs_are_deterministic() {
    for entry in zoo() {
        let a = default_input(entry.name, 5).unwrap();
        assert_eq!(a, default_input(entry.name, 5).unwrap());
        assert_ne!(a, default_input(entry.name, 6).unwrap());
        for ((name, shape, values), (want_name, want_shape)) in a.iter().zip((entry.input_shapes)())
        {
            assert_eq!((name, shape), (&want_name, &want_shape));
            assert_eq!(values.len() as i64, shape.iter().product::<i64>());
        }
    }
}

#[test]
fn check_graph_catches_bad_graphs() {
    use models::graph::GraphBuilder;
    let mut b = GraphBuilder::new("bad", &GenOptions::default());
    let x = b.input_f32("x", &[1]);
    b.node("Relu", "r", &[&x, "missing"], vec![]);
    assert!(b.finish().unwrap_err().contains("missing"));

    let mut b = GraphBuilder::new("bad", &GenOptions::default());
    let x = b.input_f32("x", &[1]);
    b.node("Relu", "r", &[&x], vec![]);
    b.node("Relu", "r", &[&x], vec![]);
    assert!(b.finish().unwrap_err().contains("redefines"));

    let mut b = GraphBuilder::new("bad", &GenOptions::default());
    b.input_f32("x", &[1]);
    b.output_f32("y", &[1]);
    assert!(b.finish().unwrap_err().contains("never defined"));
}
