//! BatchNormalization and Dropout of old opsets import into their newest
//! form and export back to what the old opset accepts; onnxruntime checks
//! that the written model computes what the original did.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use frontend::proto::NodeProto;

fn attr_names(n: &NodeProto) -> Vec<&str> {
    let mut v: Vec<&str> = n.attribute.iter().map(|a| a.name.as_str()).collect();
    v.sort_unstable();
    v
}

fn exported_nodes(path: &std::path::Path) -> Vec<NodeProto> {
    load(path).proto.graph.unwrap().node
}

#[test]
fn per_activation_batch_norm_is_decomposed() {
    let path = gen_model(
        "legacy_bn_spatial0",
        &format!(
            "{WRITE_INPUTS}
rng = np.random.default_rng(3)
stats = [numpy_helper.from_array(v.astype(np.float32), n) for n, v in [
    ('scale', rng.standard_normal((3, 4))), ('bias', rng.standard_normal((3, 4))),
    ('mean', rng.standard_normal((3, 4))), ('var', rng.uniform(0.5, 2.0, (3, 4)))]]
bn = helper.make_node('BatchNormalization', ['x', 'scale', 'bias', 'mean', 'var'], ['y'],
    spatial=0, epsilon=1e-3)
g = helper.make_graph([bn], 'g',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 3, 4])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)], stats)
save(helper.make_model(g, ir_version=4, opset_imports=[helper.make_opsetid('', 7)]))
inputs(('x', rng.standard_normal((2, 3, 4)).astype(np.float32)))
"
        ),
    );
    let m = import(&load(&path));
    let ops = all_op_names(&m);
    assert!(
        !ops.iter().any(|o| o == "onnx.BatchNormalization"),
        "{ops:?}"
    );
    assert!(ops.iter().any(|o| o == "onnx.Sqrt"), "{ops:?}");
    assert_eq!(
        func_type(&m).to_string(),
        "(tensor<2x3x4xf32>) -> tensor<2x3x4xf32>"
    );
    round_trip_within(&m, &path, None, 1e-6);
}

#[test]
fn old_dropout_moves_ratio_and_casts_its_mask() {
    let path = gen_model(
        "legacy_dropout",
        &format!(
            "{WRITE_INPUTS}
nodes = [
    helper.make_node('Dropout', ['x'], ['d', 'mask'], ratio=0.25),
    helper.make_node('Add', ['d', 'mask'], ['y']),
]
g = helper.make_graph(nodes, 'g',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 3])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)])
save(helper.make_model(g, ir_version=4, opset_imports=[helper.make_opsetid('', 9)]))
inputs(('x', np.arange(6, dtype=np.float32).reshape(2, 3)))
"
        ),
    );
    let m = import(&load(&path));
    let ops = all_op_names(&m);
    assert!(ops.iter().any(|o| o == "onnx.Cast"), "{ops:?}");
    assert_eq!(result_of(&m, "onnx.Cast"), "tensor<2x3xf32>");
    let exported = assert_round_trip(&m, &path, None);
    let nodes = exported_nodes(&exported);
    let dropout = nodes.iter().find(|n| n.op_type == "Dropout").unwrap();
    assert_eq!(dropout.input.len(), 1, "{dropout:?}");
    assert_eq!(attr_names(dropout), ["ratio"]);
}

#[test]
fn batch_norm_training_outputs_set_training_mode() {
    let path = gen_model(
        "legacy_bn_training",
        "
p = [numpy_helper.from_array(np.ones(3, np.float32), n) for n in ['s', 'b', 'm', 'v']]
bn = helper.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['y', 'rm', 'rv'])
g = helper.make_graph([bn], 'g',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 3, 4])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, None),
     helper.make_tensor_value_info('rm', TensorProto.FLOAT, None),
     helper.make_tensor_value_info('rv', TensorProto.FLOAT, None)], p)
save(helper.make_model(g, ir_version=4, opset_imports=[helper.make_opsetid('', 9)]))
",
    );
    let m = import(&load(&path));
    let text = ir::text::print_module(&m, &ir::text::PrintOptions::default());
    assert!(text.contains("training_mode = 1"), "{text}");
    let out = common::scratch("legacy_bn_training").join("exported.onnx");
    frontend::export::write_model(&m, &out, None).unwrap();
    let nodes = exported_nodes(&out);
    assert_eq!(attr_names(&nodes[0]), Vec::<&str>::new(), "{:?}", nodes[0]);
    assert_eq!(nodes[0].output.len(), 3);
}

#[test]
fn opset_6_test_mode_round_trips_and_training_is_refused() {
    let script = |is_test: i64| {
        format!(
            "
p = [numpy_helper.from_array(np.ones(3, np.float32), n) for n in ['s', 'b', 'm', 'v']]
nodes = [
    helper.make_node('BatchNormalization', ['x', 's', 'b', 'm', 'v'], ['h'], is_test={is_test}),
    helper.make_node('Dropout', ['h'], ['y'], is_test={is_test}),
]
g = helper.make_graph(nodes, 'g',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 3, 4])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)], p)
save(helper.make_model(g, ir_version=3, opset_imports=[helper.make_opsetid('', 6)]))
"
        )
    };
    let path = gen_model("legacy_opset6_test", &script(1));
    let m = import(&load(&path));
    let text = ir::text::print_module(&m, &ir::text::PrintOptions::default());
    assert!(!text.contains("is_test"), "{text}");
    let out = common::scratch("legacy_opset6_test").join("exported.onnx");
    frontend::export::write_model(&m, &out, None).unwrap();
    for n in exported_nodes(&out) {
        assert_eq!(attr_names(&n), ["is_test"], "{n:?}");
    }
    let path = gen_model("legacy_opset6_train", &script(0));
    let err = frontend::import::import_model(&load(&path))
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("BatchNormalization in training mode (is_test = 0, opset 6)"),
        "{err}"
    );
}

#[test]
fn legacy_broadcast_and_cast_names_export_back() {
    let path = gen_model(
        "legacy_broadcast",
        "
nodes = [
    helper.make_node('Add', ['a', 'b'], ['s'], broadcast=1, axis=1),
    helper.make_node('Cast', ['s'], ['y'], to='DOUBLE'),
]
g = helper.make_graph(nodes, 'g',
    [helper.make_tensor_value_info('a', TensorProto.FLOAT, [2, 3, 4]),
     helper.make_tensor_value_info('b', TensorProto.FLOAT, [3])],
    [helper.make_tensor_value_info('y', TensorProto.DOUBLE, None)])
save(helper.make_model(g, ir_version=3, opset_imports=[helper.make_opsetid('', 5)]))
",
    );
    let m = import(&load(&path));
    assert_eq!(
        func_type(&m).to_string(),
        "(tensor<2x3x4xf32>, tensor<3xf32>) -> tensor<2x3x4xf64>"
    );
    let out = common::scratch("legacy_broadcast").join("exported.onnx");
    frontend::export::write_model(&m, &out, None).unwrap();
    let nodes = exported_nodes(&out);
    let kinds: Vec<(&str, Vec<&str>)> = nodes
        .iter()
        .map(|n| (n.op_type.as_str(), attr_names(n)))
        .collect();
    assert_eq!(
        kinds,
        [
            ("Unsqueeze", vec!["axes"]),
            ("Add", vec!["broadcast"]),
            ("Cast", vec!["to"])
        ]
    );
    let to = &nodes[2].attribute[0];
    assert_eq!(to.s, b"DOUBLE");
}
