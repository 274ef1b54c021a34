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
}

#[test]
fn negative_and_zero_io_dims_are_unknown_dims() {
    // paddle2onnx writes -1 and some exporters 0 for "any size".
    let m = model(|g| {
        g.input[0] = value_info("x", &[-3]);
        g.output[0] = value_info("y", &[0]);
    });
    let loaded = load_model_bytes(Bytes::from(m.encode_to_vec()), PathBuf::from(".")).unwrap();
    let module = import_model(&loaded).unwrap();
    let f = module.lookup_symbol("main_graph").unwrap();
    let ft = module.attr(f, "function_type").unwrap().to_string();
    // y = x + w[4]: the output's size comes from w.
    assert_eq!(
        ft,
        r#"(tensor<?xf32, #onnx.dims<"x_d0">>) -> tensor<4xf32>"#
    );
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
fn subgraph_attribute_on_a_plain_op_is_unsupported() {
    let err = import_err(&model(|g| {
        g.node[1].attribute.push(AttributeProto {
            name: "then_branch".into(),
            r#type: AttributeType::Graph as i32,
            g: Some(GraphProto::default()),
            ..Default::default()
        });
    }));
    assert!(
        err.contains("unsupported subgraph attribute 'then_branch' of operator 'Relu'")
            && err.contains("Relu_y"),
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

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A length-delimited field.
fn field_bytes(field: u64, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    varint(field << 3 | 2, &mut out);
    varint(body.len() as u64, &mut out);
    out.extend_from_slice(body);
    out
}

fn load_err(bytes: Vec<u8>) -> String {
    match load_model_bytes(Bytes::from(bytes), PathBuf::from(".")).and_then(|l| import_model(&l)) {
        Ok(_) => panic!("expected an error"),
        Err(d) => d.to_string(),
    }
}

#[test]
fn wrong_wire_types() {
    // ir_version (field 1, varint) sent length-delimited.
    let mut bytes = model(|_| {}).encode_to_vec();
    bytes.extend(field_bytes(1, &[8]));
    let err = load_err(bytes);
    assert!(
        err.contains("malformed ONNX protobuf") && err.contains("wire type"),
        "{err}"
    );
    // graph (field 7, a message) sent as a varint.
    let mut bytes = Vec::new();
    varint(7 << 3, &mut bytes);
    varint(5, &mut bytes);
    let err = load_err(bytes);
    assert!(err.contains("wire type"), "{err}");
    // Deep inside: a node's op_type (field 4, string) as a fixed32.
    let mut node = Vec::new();
    varint(4 << 3 | 5, &mut node);
    node.extend_from_slice(&[1, 2, 3, 4]);
    let graph = field_bytes(1, &node);
    let mut bytes = model(|_| {}).encode_to_vec();
    bytes.extend(field_bytes(7, &graph));
    let err = load_err(bytes);
    assert!(err.contains("wire type"), "{err}");
    // A length prefix pointing past the end of the file.
    let mut bytes = Vec::new();
    varint(7 << 3 | 2, &mut bytes);
    varint(1 << 40, &mut bytes);
    bytes.extend_from_slice(&[0; 16]);
    let err = load_err(bytes);
    assert!(err.contains("malformed ONNX protobuf"), "{err}");
    // Invalid UTF-8 in a string field.
    let mut node = Vec::new();
    node.extend(field_bytes(4, &[0xff, 0xfe]));
    let mut bytes = model(|_| {}).encode_to_vec();
    bytes.extend(field_bytes(7, &field_bytes(1, &node)));
    let err = load_err(bytes);
    assert!(err.contains("malformed ONNX protobuf"), "{err}");
}

#[test]
fn dims_needing_terabytes_are_refused_before_allocating() {
    // 4 TiB of f32 claimed, nothing stored.
    let err = import_err(&model(|g| {
        g.initializer[0] = f32_tensor("w", &[1 << 20, 1 << 20], 0)
    }));
    assert!(
        err.contains("'w'") && err.contains("its dims need 1099511627776"),
        "{err}"
    );
    // The same through typed fields and through a Constant node.
    let huge = TensorProto {
        name: "w".into(),
        dims: vec![1 << 21, 1 << 21],
        data_type: DataType::Int64 as i32,
        int64_data: vec![7; 5],
        ..Default::default()
    };
    let err = import_err(&model(|g| g.initializer[0] = huge.clone()));
    assert!(err.contains("int64_data has 5 values"), "{err}");
    let err = import_err(&model(|g| {
        g.initializer.clear();
        let mut c = node("Constant", &[], &["w"]);
        c.attribute.push(AttributeProto {
            name: "value".into(),
            r#type: AttributeType::Tensor as i32,
            t: Some(huge.clone()),
            ..Default::default()
        });
        g.node.insert(0, c);
    }));
    assert!(err.contains("int64_data has 5 values"), "{err}");
    // Huge declared shapes are only types: they allocate nothing.
    let err = import_err(&model(|g| {
        g.input[0] = value_info("x", &[1 << 40, 1 << 40])
    }));
    assert!(err.contains("broadcast"), "{err}");
}

#[test]
fn missing_and_conflicting_opset_imports() {
    let err = import_err(&model(|_| {}).tap(|m| m.opset_import.clear()));
    assert!(
        err.contains("imports no opset of domain ''") && err.contains("Add_s"),
        "{err}"
    );
    // Before IR 3 there were no opset imports: opset 1 is implied.
    let mut old = model(|_| {});
    old.opset_import.clear();
    old.ir_version = 2;
    let loaded = load_model_bytes(Bytes::from(old.encode_to_vec()), PathBuf::from(".")).unwrap();
    import_model(&loaded).unwrap();
    let err = import_err(&model(|g| g.node[1].domain = "ai.onnx.ml".into()));
    assert!(
        err.contains("imports no opset of domain 'ai.onnx.ml'"),
        "{err}"
    );
    let err = import_err(&model(|_| {}).tap(|m| {
        m.opset_import.push(OperatorSetIdProto {
            domain: "ai.onnx".into(),
            version: 13,
        })
    }));
    assert!(err.contains("imported twice"), "{err}");
    let err = import_err(&model(|_| {}).tap(|m| m.opset_import[0].version = -3));
    assert!(err.contains("invalid version -3"), "{err}");
}

trait Tap: Sized {
    fn tap(mut self, f: impl FnOnce(&mut Self)) -> Self {
        f(&mut self);
        self
    }
}
impl Tap for ModelProto {}

#[test]
fn unknown_domains_and_operators() {
    let err = import_err(&model(|g| g.node[1].op_type = "Frobnicate".into()));
    assert!(
        err.contains("unknown operator 'Frobnicate' of domain ''"),
        "{err}"
    );
    let err = import_err(&model(|g| {
        g.node[1].domain = "ai.onnx.preview.training".into()
    }));
    assert!(
        err.contains("unsupported operator 'Relu' of domain 'ai.onnx.preview.training'"),
        "{err}"
    );
    let err = import_err(&model(|g| {
        g.node[1].domain = "ai.onnx.ml".into();
        g.node[1].op_type = "Relu".into();
    }));
    assert!(err.contains("ai.onnx.ml"), "{err}");
}

#[test]
fn duplicate_names() {
    // An initializer and a node output.
    let err = import_err(&model(|g| g.node[0].output[0] = "w".into()));
    assert!(err.contains("'w' is defined more than once"), "{err}");
    // Two initializers.
    let err = import_err(&model(|g| g.initializer.push(f32_tensor("w", &[4], 16))));
    assert!(
        err.contains("initializer 'w' is defined more than once"),
        "{err}"
    );
    // Two graph inputs.
    let err = import_err(&model(|g| g.input.push(value_info("x", &[4]))));
    assert!(err.contains("'x' is defined more than once"), "{err}");
    // A node with the same output twice.
    let err = import_err(&model(|g| g.node[0].output.push("s".into())));
    assert!(err.contains("'s' is defined more than once"), "{err}");
    // Model-local functions defined twice.
    let err = import_err(&model(|_| {}).tap(|m| {
        let f = FunctionProto {
            name: "F".into(),
            domain: "local".into(),
            ..Default::default()
        };
        m.functions = vec![f.clone(), f];
    }));
    assert!(
        err.contains("function 'F' of domain 'local' is defined more than once"),
        "{err}"
    );
}

fn if_node(cond: &str, out: &str, then_g: GraphProto, else_g: GraphProto) -> NodeProto {
    let mut n = node("If", &[cond], &[out]);
    for (name, g) in [("then_branch", then_g), ("else_branch", else_g)] {
        n.attribute.push(AttributeProto {
            name: name.into(),
            r#type: AttributeType::Graph as i32,
            g: Some(g),
            ..Default::default()
        });
    }
    n
}

/// A branch returning `Relu(v)`, `v` captured from outside.
fn branch(v: &str, out: &str) -> GraphProto {
    GraphProto {
        name: format!("b_{out}"),
        node: vec![node("Relu", &[v], &[out])],
        output: vec![value_info(out, &[4])],
        ..Default::default()
    }
}

#[test]
fn malformed_subgraphs() {
    let bool_input = |g: &mut GraphProto| {
        let mut c = value_info("c", &[]);
        if let Some(type_proto::Value::TensorType(t)) =
            c.r#type.as_mut().and_then(|t| t.value.as_mut())
        {
            t.elem_type = DataType::Bool as i32;
        }
        g.input.push(c);
    };
    // A branch uses a name no scope defines.
    let err = import_err(&model(|g| {
        bool_input(g);
        g.node[1] = if_node("c", "y", branch("s", "t"), branch("nope", "e"));
    }));
    assert!(
        err.contains("'nope'") && err.contains("not defined"),
        "{err}"
    );
    // Branches with the wrong number of outputs.
    let err = import_err(&model(|g| {
        bool_input(g);
        let mut two = branch("s", "e");
        two.output.push(value_info("s", &[4]));
        g.node[1] = if_node("c", "y", branch("s", "t"), two);
    }));
    assert!(
        err.contains("'else_branch' subgraph has 2 outputs"),
        "{err}"
    );
    // A missing branch.
    let err = import_err(&model(|g| {
        bool_input(g);
        let mut n = if_node("c", "y", branch("s", "t"), branch("s", "e"));
        n.attribute.pop();
        g.node[1] = n;
    }));
    assert!(
        err.contains("missing graph attribute 'else_branch'"),
        "{err}"
    );
    // Loop body with the wrong number of inputs; Scan without its count.
    let err = import_err(&model(|g| {
        let mut n = node("Loop", &["", "", "s"], &["y"]);
        n.attribute.push(AttributeProto {
            name: "body".into(),
            r#type: AttributeType::Graph as i32,
            g: Some(GraphProto {
                input: vec![value_info("i", &[])],
                output: vec![value_info("i", &[]), value_info("i", &[])],
                ..Default::default()
            }),
            ..Default::default()
        });
        g.node[1] = n;
    }));
    assert!(
        err.contains("the 'body' subgraph has 1 inputs, the node's inputs need 3"),
        "{err}"
    );
    let err = import_err(&model(|g| {
        let mut n = node("Scan", &["s"], &["y"]);
        n.attribute.push(AttributeProto {
            name: "body".into(),
            r#type: AttributeType::Graph as i32,
            g: Some(branch("s", "t")),
            ..Default::default()
        });
        g.node[1] = n;
    }));
    assert!(err.contains("num_scan_inputs"), "{err}");
    // Nesting deeper than protobuf's recursion limit.
    let mut g = branch("s", "t0");
    for k in 1..60 {
        let mut outer = branch("s", &format!("u{k}"));
        let other = branch("s", &format!("e{k}"));
        outer.node = vec![if_node("c", &format!("t{k}"), g, other)];
        outer.output = vec![value_info(&format!("t{k}"), &[4])];
        g = outer;
    }
    let err = import_err(&model(|m| {
        bool_input(m);
        m.node[1] = if_node("c", "y", g, branch("s", "e"));
    }));
    assert!(err.contains("malformed ONNX protobuf"), "{err}");
    // Attribute references outside of a function.
    let err = import_err(&model(|g| {
        g.node[1].attribute.push(AttributeProto {
            name: "alpha".into(),
            ref_attr_name: "a".into(),
            r#type: AttributeType::Float as i32,
            ..Default::default()
        })
    }));
    assert!(err.contains("refers to 'a' outside of a function"), "{err}");
}

fn int_attr(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: AttributeType::Int as i32,
        i: v,
        ..Default::default()
    }
}

#[test]
fn ops_outside_their_opset_range_name_the_node() {
    // Gelu exists from opset 20; the model imports 17.
    let err = import_err(&model(|g| g.node[1].op_type = "Gelu".into()));
    assert!(
        err.contains("operator 'Gelu' exists from opset 20") && err.contains("Relu_y"),
        "{err}"
    );
    // Scatter was removed in opset 11.
    let err = import_err(&model(|g| {
        g.node[1] = node("Scatter", &["s", "s", "s"], &["y"]);
    }));
    assert!(err.contains("'Scatter' was removed in opset 11"), "{err}");
}

#[test]
fn ops_are_checked_against_their_table_row() {
    // An attribute of the wrong type.
    let err = import_err(&model(|g| {
        g.node[1] = node("Softmax", &["s"], &["y"]);
        g.node[1].attribute.push(AttributeProto {
            name: "axis".into(),
            r#type: AttributeType::Float as i32,
            f: 1.5,
            ..Default::default()
        });
    }));
    assert!(
        err.contains("attribute 'axis' must be of type int") && err.contains("Softmax_y"),
        "{err}"
    );
    // A required attribute missing.
    let err = import_err(&model(|g| g.node[1] = node("Concat", &["s"], &["y"])));
    assert!(
        err.contains("attribute 'axis' is required") && err.contains("Concat_y"),
        "{err}"
    );
    // Too many operands.
    let err = import_err(&model(|g| g.node[1] = node("Relu", &["s", "s"], &["y"])));
    assert!(err.contains("takes at most 1 operands, has 2"), "{err}");
    // An attribute the table does not know is kept, not an error: with the
    // module (never in the global symbol table), and exported back.
    let m = model(|g| g.node[1].attribute.push(int_attr("onnxc_hint", 3)));
    let loaded = load_model_bytes(Bytes::from(m.encode_to_vec()), PathBuf::from(".")).unwrap();
    let module = import_model(&loaded).unwrap();
    let text = ir::text::print_module(&module, &ir::text::PrintOptions::default());
    assert!(
        text.contains(r#"onnx.extra_attrs = [["onnxc_hint", 3]]"#),
        "{text}"
    );
    assert_eq!(ir::Sym::lookup("onnxc_hint"), None, "not interned");
    let back = frontend::export::export_model(&module).unwrap();
    let g = back.graph.unwrap();
    let a = g
        .node
        .iter()
        .flat_map(|n| &n.attribute)
        .find(|a| a.name == "onnxc_hint")
        .expect("exported back");
    assert_eq!(a.i, 3);
}

/// onnxruntime's com.microsoft ops: the ones it documents and onnxc
/// imports become default-domain ops; another, a form not covered or a
/// missing input is a diagnostic naming the node, never a panic.
#[test]
fn contrib_ops_are_imported_or_refused_by_name() {
    let contrib = |op: &str, inputs: &[&str], attrs: Vec<AttributeProto>| {
        model(|g| {
            g.node[1] = NodeProto {
                domain: "com.microsoft".into(),
                attribute: attrs,
                ..node(op, inputs, &["y"])
            };
        })
    };
    let bytes = Bytes::from(contrib("QuickGelu", &["s"], vec![]).encode_to_vec());
    let m = import_model(&load_model_bytes(bytes, PathBuf::from(".")).unwrap()).unwrap();
    ir::verify(&m).unwrap();
    let text = ir::text::print_module(&m, &Default::default());
    assert!(
        text.contains("onnx.Sigmoid") && !text.contains("QuickGelu"),
        "{text}"
    );

    let err = import_err(&contrib("Frobnicate", &["s"], vec![]));
    assert!(
        err.contains("unsupported operator 'Frobnicate' of domain 'com.microsoft'"),
        "{err}"
    );
    let err = import_err(&contrib("BiasGelu", &[], vec![]));
    assert!(err.contains("'BiasGelu' needs input 0"), "{err}");
    let trans_batch = AttributeProto {
        name: "transBatchA".into(),
        i: 1,
        r#type: AttributeType::Int as i32,
        ..Default::default()
    };
    let err = import_err(&contrib("FusedMatMul", &["s", "w"], vec![trans_batch]));
    assert!(
        err.contains("'FusedMatMul' with batch transposes ('transBatchA') is not supported"),
        "{err}"
    );
    let err = import_err(&contrib("Attention", &["s", "w"], vec![]));
    assert!(err.contains("needs num_heads > 0"), "{err}");

    // The GPU providers' fusions, which onnxruntime's CPU provider lacks.
    let bytes = Bytes::from(contrib("BiasAdd", &["s", "w", "s"], vec![]).encode_to_vec());
    let m = import_model(&load_model_bytes(bytes, PathBuf::from(".")).unwrap()).unwrap();
    ir::verify(&m).unwrap();
    let text = ir::text::print_module(&m, &Default::default());
    assert!(
        text.matches("onnx.Add").count() == 3 && !text.contains("BiasAdd"),
        "{text}"
    );
    let err = import_err(&contrib("NhwcConv", &["s", "w"], vec![]));
    assert!(
        err.contains("'NhwcConv' needs X and W of one known rank, at least 3"),
        "{err}"
    );
}
