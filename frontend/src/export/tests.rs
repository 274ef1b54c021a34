use super::*;
use crate::proto::attribute_proto::AttributeType;
use crate::proto::tensor_shape_proto::{dimension::Value, Dimension};
use crate::proto::{AttributeProto, GraphProto, NodeProto, TensorProto};
use bytes::Bytes;
use prost::Message;

fn tensor_type(dims: &[i64]) -> Option<TypeProto> {
    Some(TypeProto {
        value: Some(type_proto::Value::TensorType(type_proto::Tensor {
            elem_type: 1,
            shape: Some(TensorShapeProto {
                dim: dims
                    .iter()
                    .map(|&d| Dimension {
                        value: Some(Value::DimValue(d)),
                        denotation: String::new(),
                    })
                    .collect(),
            }),
        })),
        denotation: String::new(),
    })
}

fn zeros(name: &str, dims: &[i64]) -> TensorProto {
    let n: i64 = dims.iter().product();
    TensorProto {
        name: name.into(),
        dims: dims.to_vec(),
        data_type: 1,
        raw_data: Bytes::from(vec![0u8; n as usize * 4]),
        ..TensorProto::default()
    }
}

fn list_attr(name: &str, kind: AttributeType) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: kind as i32,
        ..AttributeProto::default()
    }
}

/// X → RNN (empty FLOATS and STRINGS lists) → Y → Relu → Z.
fn model() -> ModelProto {
    let io = |name: &str, dims: &[i64]| ValueInfoProto {
        name: name.into(),
        r#type: tensor_type(dims),
        ..ValueInfoProto::default()
    };
    ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        graph: Some(GraphProto {
            name: "g".into(),
            node: vec![
                NodeProto {
                    op_type: "RNN".into(),
                    input: vec!["X".into(), "W".into(), "R".into()],
                    output: vec!["Y".into()],
                    attribute: vec![
                        AttributeProto {
                            name: "hidden_size".into(),
                            r#type: AttributeType::Int as i32,
                            i: 4,
                            ..AttributeProto::default()
                        },
                        list_attr("activation_alpha", AttributeType::Floats),
                        list_attr("activations", AttributeType::Strings),
                    ],
                    ..NodeProto::default()
                },
                NodeProto {
                    op_type: "Relu".into(),
                    input: vec!["Y".into()],
                    output: vec!["Z".into()],
                    ..NodeProto::default()
                },
            ],
            initializer: vec![zeros("W", &[1, 4, 3]), zeros("R", &[1, 4, 4])],
            input: vec![io("X", &[1, 2, 3])],
            output: vec![io("Z", &[1, 1, 2, 4])],
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    }
}

/// Empty float and string lists keep their kind, and intermediate values
/// carry their inferred types as value_info; both survive a second round.
#[test]
fn round_trip_keeps_empty_list_kinds_and_value_types() {
    let mut proto = model();
    for _ in 0..2 {
        let bytes = Bytes::from(proto.encode_to_vec());
        let loaded = crate::load::load_model_bytes(bytes, ".".into()).unwrap();
        let m = crate::import::import_model(&loaded).unwrap();
        proto = export_model(&m).unwrap();
        let g = proto.graph.as_ref().unwrap();
        let rnn = g.node.iter().find(|n| n.op_type == "RNN").unwrap();
        let kind = |name: &str| {
            let a = rnn.attribute.iter().find(|a| a.name == name).unwrap();
            AttributeType::try_from(a.r#type).unwrap()
        };
        assert_eq!(kind("activation_alpha"), AttributeType::Floats);
        assert_eq!(kind("activations"), AttributeType::Strings);
        let y = g.value_info.iter().find(|v| v.name == "Y").unwrap();
        assert_eq!(y.r#type, tensor_type(&[1, 1, 2, 4]));
        assert!(
            g.value_info.iter().all(|v| v.name != "Z"),
            "outputs are not repeated"
        );
    }
}

/// Dims inference knows only symbolically are written as `dim_param`s: a
/// symbol by name, an expression as printed.
#[test]
fn symbolic_dims_become_dim_params() {
    let dim = |d: Value| Dimension {
        value: Some(d),
        denotation: String::new(),
    };
    let typed = |name: &str, dims: Vec<Dimension>| ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: 1,
                shape: Some(TensorShapeProto { dim: dims }),
            })),
            denotation: String::new(),
        }),
        ..ValueInfoProto::default()
    };
    let node = |op: &str, ins: &[&str], out: &str| NodeProto {
        op_type: op.into(),
        input: ins.iter().map(|s| s.to_string()).collect(),
        output: vec![out.into()],
        attribute: if op == "Concat" {
            vec![AttributeProto {
                name: "axis".into(),
                r#type: AttributeType::Int as i32,
                i: 0,
                ..AttributeProto::default()
            }]
        } else {
            vec![]
        },
        ..NodeProto::default()
    };
    let proto = ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: 17,
        }],
        graph: Some(GraphProto {
            name: "g".into(),
            node: vec![node("Relu", &["x"], "a"), node("Concat", &["a", "a"], "y")],
            input: vec![typed(
                "x",
                vec![dim(Value::DimParam("N".into())), dim(Value::DimValue(3))],
            )],
            output: vec![ValueInfoProto {
                name: "y".into(),
                ..ValueInfoProto::default()
            }],
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    };
    let loaded =
        crate::load::load_model_bytes(Bytes::from(proto.encode_to_vec()), ".".into()).unwrap();
    let m = crate::import::import_model(&loaded).unwrap();
    let g = export_model(&m).unwrap().graph.unwrap();
    let dims = |vi: &ValueInfoProto| -> Vec<Option<Value>> {
        match vi.r#type.as_ref().and_then(|t| t.value.as_ref()) {
            Some(type_proto::Value::TensorType(t)) => t
                .shape
                .as_ref()
                .unwrap()
                .dim
                .iter()
                .map(|d| d.value.clone())
                .collect(),
            _ => panic!("not a tensor type"),
        }
    };
    let a = g.value_info.iter().find(|v| v.name == "a").unwrap();
    assert_eq!(
        dims(a),
        [Some(Value::DimParam("N".into())), Some(Value::DimValue(3))]
    );
    assert_eq!(
        dims(&g.output[0]),
        [
            Some(Value::DimParam("2 * N".into())),
            Some(Value::DimValue(3))
        ]
    );
}
