//! Export keeps what the model said about itself: value and node names,
//! opset imports, metadata, doc strings, producer; large initializers can
//! go to an external data file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use frontend::proto::tensor_proto::DataLocation;

const DESCRIBED: &str = "
T = TensorProto
rng = np.random.default_rng(1)
w = numpy_helper.from_array(rng.standard_normal((4, 4)).astype(np.float32), 'weight')
b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), 'bias')
mm = helper.make_node('MatMul', ['x', 'weight'], ['mm_out'], name='the_matmul', doc_string='x times w')
add = helper.make_node('Add', ['mm_out', 'bias'], ['pre'], name='the_add')
split = helper.make_node('Split', ['pre'], ['left', 'right'], name='the_split', axis=1, num_outputs=2)
drop = helper.make_node('Dropout', ['left'], ['dropped', ''], name='the_dropout')
relu = helper.make_node('Relu', ['right'], ['y2'], name='the_relu')
g = helper.make_graph([mm, add, split, drop, relu], 'described_graph',
    [helper.make_tensor_value_info('x', T.FLOAT, ['batch', 4])],
    [helper.make_tensor_value_info('dropped', T.FLOAT, ['batch', 2]),
     helper.make_tensor_value_info('y2', T.FLOAT, ['batch', 2])],
    [w, b], doc_string='the graph doc')
m = helper.make_model(g, ir_version=9, producer_name='handmade', producer_version='7.1',
    doc_string='the model doc',
    opset_imports=[helper.make_opsetid('', 18), helper.make_opsetid('ai.onnx.ml', 3),
                   helper.make_opsetid('com.example', 2)])
m.domain = 'org.example'
m.model_version = 42
helper.set_model_props(m, {'author': 'tests', 'license': 'none'})
save(m)
inputs(('x', rng.standard_normal((3, 4)).astype(np.float32)))
";

#[test]
fn names_metadata_and_doc_strings_survive() {
    let path = gen_model("export_described", &format!("{WRITE_INPUTS}{DESCRIBED}"));
    let original = load(&path).proto;
    let m = import(&load(&path));
    let exported = assert_round_trip(&m, &path, None);
    let back = load(&exported).proto;
    assert_eq!(back.ir_version, 9);
    assert_eq!(back.producer_name, "handmade");
    assert_eq!(back.producer_version, "7.1");
    assert_eq!(back.doc_string, "the model doc");
    assert_eq!(back.domain, "org.example");
    assert_eq!(back.model_version, 42);
    assert_eq!(back.metadata_props, original.metadata_props);
    assert_eq!(back.opset_import, original.opset_import);
    let (g, og) = (back.graph.unwrap(), original.graph.unwrap());
    assert_eq!(g.name, "described_graph");
    assert_eq!(g.doc_string, "the graph doc");
    let io = |v: &[frontend::proto::ValueInfoProto]| {
        v.iter().map(|i| i.name.clone()).collect::<Vec<_>>()
    };
    assert_eq!(io(&g.input), io(&og.input));
    assert_eq!(io(&g.output), io(&og.output));
    let mut inits: Vec<_> = g.initializer.iter().map(|t| t.name.clone()).collect();
    inits.sort();
    assert_eq!(inits, ["bias", "weight"]);
    // Nodes keep their names, outputs (an omitted one stays omitted) and
    // doc strings.
    let summary = |nodes: &[frontend::proto::NodeProto]| {
        nodes
            .iter()
            .map(|n| {
                format!(
                    "{} {} {:?} -> {:?} {}",
                    n.name, n.op_type, n.input, n.output, n.doc_string
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(summary(&g.node), summary(&og.node));
}

#[test]
fn large_initializers_go_to_external_data() {
    let path = gen_model(
        "export_external",
        &format!(
            "{WRITE_INPUTS}
rng = np.random.default_rng(2)
w = numpy_helper.from_array(rng.standard_normal((64, 64)).astype(np.float32), 'big')
s = numpy_helper.from_array(np.ones(4, np.float32), 'small')
g = helper.make_graph(
    [helper.make_node('MatMul', ['x', 'big'], ['h']),
     helper.make_node('Slice', ['h', 'st', 'en', 'ax'], ['hs']),
     helper.make_node('Add', ['hs', 'small'], ['y'])], 'g',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 64])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2, 4])],
    [w, s, numpy_helper.from_array(np.array([0], np.int64), 'st'),
     numpy_helper.from_array(np.array([4], np.int64), 'en'),
     numpy_helper.from_array(np.array([1], np.int64), 'ax')])
save(helper.make_model(g, ir_version=10, opset_imports=[helper.make_opsetid('', 17)]))
inputs(('x', rng.standard_normal((2, 64)).astype(np.float32)))
"
        ),
    );
    let m = import(&load(&path));
    let exported = assert_round_trip(&m, &path, Some(1024));
    let data = exported.with_file_name("exported.onnx.data");
    assert_eq!(std::fs::metadata(&data).unwrap().len(), 64 * 64 * 4);
    let back = load(&exported);
    let g = back.proto.graph.as_ref().unwrap();
    for t in &g.initializer {
        let external = t.data_location == DataLocation::External as i32;
        assert_eq!(external, t.name == "big", "{}", t.name);
    }
    // Our own loader reads it back, zero copy from the data file.
    let again = import(&back);
    assert_eq!(again.num_ops(), m.num_ops());
}

#[test]
fn initializers_listed_as_inputs_are_constants() {
    // IR 3 style: every initializer is also a graph input.
    let path = gen_model(
        "export_ir3",
        &format!(
            "{WRITE_INPUTS}
w = numpy_helper.from_array(np.full((3,), 2.0, np.float32), 'w')
g = helper.make_graph([helper.make_node('Mul', ['x', 'w'], ['y'])], 'g',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [3]),
     helper.make_tensor_value_info('w', TensorProto.FLOAT, [3])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [3])], [w])
save(helper.make_model(g, ir_version=3, opset_imports=[helper.make_opsetid('', 8)]))
inputs(('x', np.arange(3, dtype=np.float32)))
"
        ),
    );
    let m = import(&load(&path));
    assert_eq!(
        func_type(&m).to_string(),
        "(tensor<3xf32>) -> tensor<3xf32>"
    );
    let exported = assert_round_trip(&m, &path, None);
    let back = load(&exported).proto;
    let g = back.graph.unwrap();
    let inputs: Vec<_> = g.input.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(inputs, ["x", "w"]);
    assert_eq!(g.initializer.len(), 1);
}

#[test]
fn old_opset_attributes_are_written_back() {
    let path = gen_model(
        "export_old_opset",
        &format!(
            "{WRITE_INPUTS}
nodes = [
    helper.make_node('Unsqueeze', ['x'], ['u'], axes=[0]),
    helper.make_node('Pad', ['u'], ['p'], pads=[0, 1, 0, 1], value=1.5),
    helper.make_node('Clip', ['p'], ['c'], min=-1.0, max=1.0),
    helper.make_node('Slice', ['c'], ['s'], starts=[1], ends=[3], axes=[1]),
    helper.make_node('ReduceMean', ['s'], ['y'], axes=[1], keepdims=1),
]
g = helper.make_graph(nodes, 'g',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [4])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)])
save(helper.make_model(g, ir_version=4, opset_imports=[helper.make_opsetid('', 9)]))
inputs(('x', np.array([-3, -0.5, 0.5, 3], np.float32)))
"
        ),
    );
    let m = import(&load(&path));
    let exported = assert_round_trip(&m, &path, None);
    let back = load(&exported).proto;
    let g = back.graph.unwrap();
    assert!(g.initializer.is_empty(), "{:?}", g.initializer);
    for n in &g.node {
        assert_eq!(n.input.len(), 1, "{n:?}");
    }
}
