//! Malformed and hostile inputs must give diagnostics, never panics.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use bytes::Bytes;
use frontend::proto::attribute_proto::AttributeType;
use frontend::proto::tensor_proto::DataType;
use frontend::proto::*;
use frontend::{import_model, load_model, load_model_bytes};
use prost::Message;
use std::path::PathBuf;

fn value_info(name: &str, dims: &[i64]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|&d| tensor_shape_proto::Dimension {
            value: Some(tensor_shape_proto::dimension::Value::DimValue(d)),
            denotation: String::new(),
        })
        .collect();
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: DataType::Float as i32,
                shape: Some(TensorShapeProto { dim }),
            })),
            denotation: String::new(),
        }),
        ..Default::default()
    }
}

fn node(op: &str, inputs: &[&str], outputs: &[&str]) -> NodeProto {
    NodeProto {
        op_type: op.into(),
        name: format!("{op}_{}", outputs.first().unwrap_or(&"")),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn f32_tensor(name: &str, dims: &[i64], raw_len: usize) -> TensorProto {
    TensorProto {
        name: name.into(),
        dims: dims.to_vec(),
        data_type: DataType::Float as i32,
        raw_data: Bytes::from(vec![0u8; raw_len]),
        ..Default::default()
    }
}

/// `y = Relu(Add(x, w))` with `w: [4]`, plus whatever `edit` changes.
fn model(edit: impl FnOnce(&mut GraphProto)) -> ModelProto {
    let mut g = GraphProto {
        name: "g".into(),
        node: vec![
            node("Add", &["x", "w"], &["s"]),
            node("Relu", &["s"], &["y"]),
        ],
        initializer: vec![f32_tensor("w", &[4], 16)],
        input: vec![value_info("x", &[4])],
        output: vec![value_info("y", &[4])],
        ..Default::default()
    };
    edit(&mut g);
    ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        graph: Some(g),
        ..Default::default()
    }
}

/// Loads and imports the encoded model; returns the error text.
fn import_err(m: &ModelProto) -> String {
    let loaded = load_model_bytes(Bytes::from(m.encode_to_vec()), PathBuf::from("."));
    match loaded.and_then(|l| import_model(&l)) {
        Ok(_) => panic!("expected an error"),
        Err(d) => d.to_string(),
    }
}

#[test]
fn valid_baseline_imports() {
    let bytes = Bytes::from(model(|_| {}).encode_to_vec());
    let loaded = load_model_bytes(bytes, PathBuf::from(".")).unwrap();
    let m = import_model(&loaded).unwrap();
    ir::verify(&m).unwrap();
}

#[test]
fn truncated_random_and_empty_files() {
    let dir = common::scratch("hostile_files");
    let full = model(|_| {}).encode_to_vec();
    let truncated = dir.join("truncated.onnx");
    std::fs::write(&truncated, &full[..full.len() - 7]).unwrap();
    let err = load_model(&truncated).unwrap_err().to_string();
    assert!(
        err.contains("malformed ONNX protobuf") && err.contains("truncated.onnx"),
        "{err}"
    );

    let empty = dir.join("empty.onnx");
    std::fs::write(&empty, b"").unwrap();
    assert!(load_model(&empty)
        .unwrap_err()
        .to_string()
        .contains("empty"));
    assert!(load_model(&dir.join("missing.onnx")).is_err());

    // A simple LCG: deterministic garbage of many lengths.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for len in [1usize, 2, 3, 10, 100, 1000, 10_000] {
        for _ in 0..20 {
            let junk: Vec<u8> = (0..len)
                .map(|_| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1);
                    (state >> 56) as u8
                })
                .collect();
            let r = load_model_bytes(Bytes::from(junk), PathBuf::from("."))
                .and_then(|l| import_model(&l));
            assert!(r.is_err());
        }
    }
    // Every prefix of a valid model fails cleanly or imports.
    for cut in 0..full.len() {
        let r = load_model_bytes(Bytes::copy_from_slice(&full[..cut]), PathBuf::from("."))
            .and_then(|l| import_model(&l));
        let _ = r;
    }
}

#[test]
fn bad_dims_and_short_data() {
    let err = import_err(&model(|g| g.initializer[0] = f32_tensor("w", &[-4], 16)));
    assert!(err.contains("'w'") && err.contains("negative"), "{err}");
    let err = import_err(&model(|g| {
        g.initializer[0] = f32_tensor("w", &[i64::MAX, 4], 16)
    }));
    assert!(err.contains("'w'") && err.contains("overflow"), "{err}");
    let err = import_err(&model(|g| {
        g.initializer[0] = f32_tensor("w", &[1 << 31, 1 << 31, 8], 0)
    }));
    assert!(err.contains("'w'") && err.contains("overflow"), "{err}");
    let err = import_err(&model(|g| g.initializer[0] = f32_tensor("w", &[4], 12)));
    assert!(err.contains("'w'") && err.contains("12 bytes"), "{err}");
    // Typed data with a huge claimed shape is refused before allocating.
    let err = import_err(&model(|g| {
        g.initializer[0] = TensorProto {
            name: "w".into(),
            dims: vec![1 << 40],
            data_type: DataType::Float as i32,
            float_data: vec![1.0; 3],
            ..Default::default()
        }
    }));
    assert!(err.contains("float_data has 3 values"), "{err}");
    let err = import_err(&model(|g| {
        g.initializer[0] = TensorProto {
            name: "w".into(),
            dims: vec![4],
            data_type: DataType::String as i32,
            string_data: vec![b"a".to_vec(); 4],
            ..Default::default()
        }
    }));
    assert!(
        err.contains("unsupported dtype STRING") && err.contains("'w'"),
        "{err}"
    );
    let err = import_err(&model(|g| g.input[0] = value_info("x", &[-3])));
    assert!(err.contains("negative dimension"), "{err}");
}

#[test]
fn graph_structure_errors_name_the_node() {
    let err = import_err(&model(|g| g.node[1].input[0] = "nope".into()));
    assert!(err.contains("Relu_y") && err.contains("'nope'"), "{err}");
    // s = Add(x, t); t = Relu(s): a cycle.
    let err = import_err(&model(|g| {
        g.node[0].input[1] = "y".into();
    }));
    assert!(err.contains("cycle"), "{err}");
    let err = import_err(&model(|g| g.node[1].output[0] = "s".into()));
    assert!(err.contains("defined more than once"), "{err}");
    let err = import_err(&model(|g| g.node[1].domain = "com.example".into()));
    assert!(
        err.contains("unknown domain 'com.example'") && err.contains("Relu_y"),
        "{err}"
    );
    let err = import_err(&model(|g| g.output[0].name = "zzz".into()));
    assert!(err.contains("'zzz'"), "{err}");
    let err = import_err(&model(|g| g.node[1].op_type = "Re lu".into()));
    assert!(err.contains("invalid op type"), "{err}");
}

#[test]
fn subgraph_attributes_are_refused_for_now() {
    let err = import_err(&model(|g| {
        g.node[1].attribute.push(AttributeProto {
            name: "then_branch".into(),
            r#type: AttributeType::Graph as i32,
            g: Some(GraphProto::default()),
            ..Default::default()
        });
    }));
    assert!(
        err.contains("subgraph attributes are not supported yet") && err.contains("Relu_y"),
        "{err}"
    );
}

#[test]
fn shape_errors_are_diagnostics() {
    // Add of [4] and [3] does not broadcast.
    let err = import_err(&model(|g| g.initializer[0] = f32_tensor("w", &[3], 12)));
    assert!(
        err.contains("onnx.Add") && err.contains("broadcast"),
        "{err}"
    );
}

#[test]
fn contradicting_declared_shape_keeps_the_inferred_one() {
    let m = model(|g| g.output[0] = value_info("y", &[5]));
    let loaded = load_model_bytes(Bytes::from(m.encode_to_vec()), PathBuf::from(".")).unwrap();
    let module = import_model(&loaded).unwrap();
    let f = module.lookup_symbol("main_graph").unwrap();
    let ft = module.attr(f, "function_type").unwrap().to_string();
    assert_eq!(ft, "(tensor<4xf32>) -> tensor<4xf32>");
}
