//! Old-opset forms (BatchNormalization, Dropout, legacy broadcasting,
//! Softmax-like ops before 13, DFT before 20) import into their newest form
//! and export back to what the old opset accepts; onnxruntime checks that
//! the written model computes what the original did, and, written as the
//! newest opset, that the imported IR means what the original meant.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use frontend::proto::NodeProto;
use ir::{Attribute, Module};

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

/// Relabels `m` as a model of `opset`, so that export writes its ops as
/// they are (their newest form).
fn relabel_opset(m: &mut Module, opset: i64) {
    let top = m.top();
    m.set_attr(top, "onnx.opset", Attribute::i64(opset));
    let pair = Attribute::Array(vec![Attribute::string(""), Attribute::i64(opset)].into());
    m.set_attr(
        top,
        "onnx.opset_imports",
        Attribute::Array(vec![pair].into()),
    );
}

/// The ops named `name` under the main function.
fn ops_named(m: &Module, name: &str) -> Vec<ir::OpId> {
    m.collect_ops(main_func(m))
        .into_iter()
        .filter(|&o| m.is(o, name))
        .collect()
}

#[test]
fn softmax_family_before_13_runs_on_rows_of_the_flattened_input() {
    let path = gen_model(
        "legacy_softmax",
        &format!(
            "{WRITE_INPUTS}
nodes = [
    helper.make_node('Softmax', ['x'], ['a']),
    helper.make_node('LogSoftmax', ['x'], ['b'], axis=-2),
    helper.make_node('Hardmax', ['x'], ['c'], axis=2),
    helper.make_node('Softmax', ['x'], ['d'], axis=0),
    helper.make_node('LogSoftmax', ['m'], ['e']),
]
g = helper.make_graph(nodes, 'g',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 3, 4]),
     helper.make_tensor_value_info('m', TensorProto.FLOAT, [5, 6])],
    [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in 'abcde'])
save(helper.make_model(g, ir_version=8, opset_imports=[helper.make_opsetid('', 11)]))
rng = np.random.default_rng(5)
inputs(('x', rng.standard_normal((2, 3, 4)).astype(np.float32)),
       ('m', rng.standard_normal((5, 6)).astype(np.float32)))
"
        ),
    );
    let mut m = import(&load(&path));
    assert_eq!(
        func_type(&m).to_string(),
        "(tensor<2x3x4xf32>, tensor<5x6xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, \
         tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<5x6xf32>)"
    );
    // a, b and d go through Flatten; c and e already mean the newest form.
    assert_eq!(ops_named(&m, "onnx.Flatten").len(), 3);
    assert_eq!(ops_named(&m, "onnx.Reshape").len(), 3);
    for op in ops_named(&m, "onnx.Softmax")
        .into_iter()
        .chain(ops_named(&m, "onnx.LogSoftmax"))
    {
        let input = m.value_type(m.operands(op)[0]).to_string();
        let axis = m.attr(op, "axis").and_then(Attribute::as_int);
        match input.as_str() {
            "tensor<5x6xf32>" => assert_eq!(axis, None),
            _ => assert_eq!(axis, Some(1), "{input}"),
        }
    }
    round_trip_within(&m, &path, None, 1e-6);
    relabel_opset(&mut m, 13);
    round_trip_within(&m, &path, None, 1e-6);
}

#[test]
fn softmax_of_opset_13_written_for_opset_11_states_its_axis() {
    let path = gen_model(
        "softmax13_as_11",
        &format!(
            "{WRITE_INPUTS}
g = helper.make_graph([helper.make_node('Softmax', ['x'], ['y'])], 'g',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 3, 4])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)])
save(helper.make_model(g, ir_version=8, opset_imports=[helper.make_opsetid('', 13)]))
inputs(('x', np.random.default_rng(9).standard_normal((2, 3, 4)).astype(np.float32)))
"
        ),
    );
    let mut m = import(&load(&path));
    relabel_opset(&mut m, 11);
    let exported = round_trip_within(&m, &path, None, 1e-6);
    let nodes = exported_nodes(&exported);
    assert_eq!(nodes[0].attribute[0].i, 2, "{:?}", nodes[0]);
}

#[test]
fn dft_before_20_takes_its_axis_as_an_operand() {
    let path = gen_model(
        "legacy_dft",
        &format!(
            "{WRITE_INPUTS}
n = numpy_helper.from_array(np.array(4, np.int64), 'n')
nodes = [
    helper.make_node('DFT', ['x'], ['a']),
    helper.make_node('DFT', ['x'], ['b'], axis=2, onesided=1),
    helper.make_node('DFT', ['x', 'n'], ['c'], axis=2, inverse=1),
]
g = helper.make_graph(nodes, 'g',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [3, 8, 6, 1])],
    [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in 'abc'], [n])
save(helper.make_model(g, ir_version=8, opset_imports=[helper.make_opsetid('', 17)]))
rng = np.random.default_rng(7)
inputs(('x', rng.standard_normal((3, 8, 6, 1)).astype(np.float32)))
"
        ),
    );
    let mut m = import(&load(&path));
    assert_eq!(
        func_type(&m).to_string(),
        "(tensor<3x8x6x1xf32>) -> (tensor<3x8x6x2xf32>, tensor<3x8x4x2xf32>, \
         tensor<3x8x4x2xf32>)"
    );
    let axes: Vec<String> = ops_named(&m, "onnx.DFT")
        .into_iter()
        .map(|op| {
            assert!(m.attr(op, "axis").is_none());
            let axis = m.operands(op)[2];
            let c = m.defining_op(axis).unwrap();
            m.attr(c, "value").unwrap().to_string()
        })
        .collect();
    assert_eq!(
        axes,
        [
            "dense<1> : tensor<i64>",
            "dense<2> : tensor<i64>",
            "dense<2> : tensor<i64>"
        ]
    );
    // Opset 17 again: the axis is an attribute.
    let exported = round_trip_within(&m, &path, None, 1e-5);
    for n in exported_nodes(&exported) {
        assert!(n.input.len() <= 2, "{n:?}");
        assert!(attr_names(&n).contains(&"axis"), "{n:?}");
    }
    relabel_opset(&mut m, 20);
    let exported = round_trip_within(&m, &path, None, 1e-5);
    for n in exported_nodes(&exported) {
        assert_eq!(n.input.len(), 3, "{n:?}");
    }
}

#[test]
fn resize_before_11_is_refused() {
    let path = gen_model(
        "legacy_resize10",
        "
scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), 'scales')
node = helper.make_node('Resize', ['x', 'scales'], ['y'])
g = helper.make_graph([node], 'g',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [1, 1, 2, 2])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)], [scales])
save(helper.make_model(g, ir_version=8, opset_imports=[helper.make_opsetid('', 10)]))
",
    );
    let err = frontend::import::import_model(&load(&path))
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("unsupported Resize of opset 10"), "{err}");
}
