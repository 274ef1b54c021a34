//! If / Loop / Scan: regions, captures of outer values at any depth, shape
//! inference of their results, and export back to subgraph attributes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;

/// A Loop whose body holds an If whose branches capture values of the
/// body (acc), of the main graph (x, w) and hold a Scan themselves; then a
/// Scan over the loop's result with an If capturing `c` inside; and a Loop
/// whose carried value grows.
const NESTED: &str = "
T = TensorProto
f32 = lambda n, s: helper.make_tensor_value_info(n, T.FLOAT, s)
w = numpy_helper.from_array(np.full((2, 3), 0.5, np.float32), 'w')
zeros3 = numpy_helper.from_array(np.zeros(3, np.float32), 'zeros3')

# Scan over the rows of its input, summing them (state [3]).
def row_sum(prefix, src):
    body = helper.make_graph(
        [helper.make_node('Add', [prefix + 's_in', prefix + 'row'], [prefix + 's_out'])],
        prefix + 'scan_body',
        [f32(prefix + 's_in', [3]), f32(prefix + 'row', [3])],
        [f32(prefix + 's_out', [3])])
    return helper.make_node('Scan', ['zeros3', src], [prefix + 'sum'],
                            name=prefix + 'scan', body=body, num_scan_inputs=1)

then_g = helper.make_graph(
    [helper.make_node('Add', ['acc_in', 'x'], ['then_out'], name='then_add')],
    'then', [], [f32('then_out', [2, 3])])
else_g = helper.make_graph(
    [row_sum('e_', 'acc_in'),
     helper.make_node('Mul', ['acc_in', 'w'], ['m']),
     helper.make_node('Add', ['m', 'e_sum'], ['else_out'])],
    'else', [], [f32('else_out', [2, 3])])
body = helper.make_graph(
    [helper.make_node('If', ['c'], ['t'], name='branch', then_branch=then_g, else_branch=else_g),
     helper.make_node('Identity', ['cond_in'], ['cond_out']),
     helper.make_node('Identity', ['t'], ['acc_out']),
     helper.make_node('ReduceSum', ['t'], ['per_iter'], keepdims=0)],
    'loop_body',
    [helper.make_tensor_value_info('i', T.INT64, []),
     helper.make_tensor_value_info('cond_in', T.BOOL, []),
     f32('acc_in', None)],
    [helper.make_tensor_value_info('cond_out', T.BOOL, []), f32('acc_out', None), f32('per_iter', None)])
loop = helper.make_node('Loop', ['n', '', 'x'], ['acc', 'iters'], name='loop', body=body)

# A Scan over the loop's result whose body branches on the outer `c`.
scan_then = helper.make_graph([helper.make_node('Add', ['s2_in', 'r2'], ['st'])], 'st', [], [f32('st', [3])])
scan_else = helper.make_graph([helper.make_node('Sub', ['s2_in', 'r2'], ['se'])], 'se', [], [f32('se', [3])])
scan_body = helper.make_graph(
    [helper.make_node('If', ['c'], ['s2_out'], then_branch=scan_then, else_branch=scan_else),
     helper.make_node('Neg', ['r2'], ['neg'])],
    'scan2_body', [f32('s2_in', [3]), f32('r2', [3])], [f32('s2_out', [3]), f32('neg', [3])])
scan = helper.make_node('Scan', ['zeros3', 'acc'], ['total', 'negs'], name='scan2',
                        body=scan_body, num_scan_inputs=1)

# A loop whose carried value grows by one row per iteration.
grow_body = helper.make_graph(
    [helper.make_node('Identity', ['gc'], ['gc_out']),
     helper.make_node('Slice', ['x', 'zero1', 'one1'], ['first_row']),
     helper.make_node('Concat', ['g_in', 'first_row'], ['g_out'], axis=0)],
    'grow_body',
    [helper.make_tensor_value_info('gi', T.INT64, []),
     helper.make_tensor_value_info('gc', T.BOOL, []), f32('g_in', None)],
    [helper.make_tensor_value_info('gc_out', T.BOOL, []), f32('g_out', None)])
zero1 = numpy_helper.from_array(np.array([0], np.int64), 'zero1')
one1 = numpy_helper.from_array(np.array([1], np.int64), 'one1')
grow = helper.make_node('Loop', ['n', '', 'first'], ['grown'], name='grow', body=grow_body)
first = helper.make_node('Slice', ['x', 'zero1', 'one1'], ['first'])

g = helper.make_graph([loop, scan, first, grow], 'nested',
    [f32('x', [2, 3]), helper.make_tensor_value_info('n', T.INT64, []),
     helper.make_tensor_value_info('c', T.BOOL, [])],
    [f32('acc', None), f32('iters', None), f32('total', None), f32('negs', None), f32('grown', None)],
    [w, zeros3, zero1, one1])
save(helper.make_model(g, ir_version=10, opset_imports=[helper.make_opsetid('', 17)]))
inputs(('x', np.arange(6, dtype=np.float32).reshape(2, 3)), ('n', np.array(3, np.int64)),
       ('c', np.array(False)))
";

#[test]
fn nested_control_flow_imports_infers_and_round_trips() {
    let path = gen_model("nested_control_flow", &format!("{WRITE_INPUTS}{NESTED}"));
    let model = load(&path);
    let m = import(&model);
    let ops = all_op_names(&m);
    for (op, n) in [
        ("onnx.If", 2),
        ("onnx.Loop", 2),
        ("onnx.Scan", 2),
        ("onnx.Yield", 8),
    ] {
        assert_eq!(
            ops.iter().filter(|o| *o == op).count(),
            n,
            "{op} in {ops:?}"
        );
    }
    // Result types: carried [2,3] stays, scan outputs get their axis, the
    // growing loop generalizes its first dim (unknown sizes get fresh
    // symbols).
    assert_eq!(
        func_type(&m).to_string(),
        "(tensor<2x3xf32>, tensor<i64>, tensor<i1>) -> (tensor<2x3xf32>, tensor<?xf32, #onnx.dims<\"d0\">>, tensor<3xf32>, tensor<2x3xf32>, tensor<?x3xf32, #onnx.dims<\"d2, 3\">>)"
    );
    // The loop body's If captures acc_in (a block argument of the Loop
    // body) and x (an argument of the main function).
    let text = ir::text::print_module(&m, &ir::text::PrintOptions::default());
    assert!(
        text.contains("^bb0(%arg3: tensor<i64>, %arg4: tensor<i1>, %arg5: tensor<2x3xf32>)"),
        "{text}"
    );
    assert!(text.contains("\"onnx.Add\"(%arg5, %arg0)"), "{text}");
    // Printed IR parses back and verifies (regions, captures, yields).
    let again = ir::text::parse_module(&text, "nested.mlir").unwrap();
    ir::verify(&again).unwrap();
    assert_eq!(again.num_ops(), m.num_ops());
    assert_round_trip(&m, &path, None);
}

#[test]
fn loop_body_without_declared_types_gets_them_from_operands() {
    let path = gen_model(
        "loop_untyped_body",
        &format!(
            "{WRITE_INPUTS}
T = TensorProto
body = helper.make_graph(
    [helper.make_node('Identity', ['c'], ['c2']),
     helper.make_node('Cast', ['i'], ['fi'], to=T.FLOAT),
     helper.make_node('Add', ['v', 'fi'], ['v2'])],
    'body',
    [helper.make_value_info('i', TypeProto()), helper.make_value_info('c', TypeProto()),
     helper.make_value_info('v', TypeProto())],
    [helper.make_value_info('c2', TypeProto()), helper.make_value_info('v2', TypeProto())])
from onnx import TypeProto
g = helper.make_graph(
    [helper.make_node('Loop', ['n', 'go', 'x'], ['y'], body=body)], 'g',
    [helper.make_tensor_value_info('x', T.FLOAT, [4]),
     helper.make_tensor_value_info('n', T.INT64, []),
     helper.make_tensor_value_info('go', T.BOOL, [])],
    [helper.make_tensor_value_info('y', T.FLOAT, None)])
save(helper.make_model(g, ir_version=10, opset_imports=[helper.make_opsetid('', 13)]))
inputs(('x', np.ones(4, np.float32)), ('n', np.array(5, np.int64)), ('go', np.array(True)))
"
        )
        .replace(
            "T = TensorProto\nbody",
            "from onnx import TypeProto\nT = TensorProto\nbody",
        ),
    );
    let model = load(&path);
    let m = import(&model);
    assert_eq!(
        func_type(&m).to_string(),
        "(tensor<4xf32>, tensor<i64>, tensor<i1>) -> tensor<4xf32>"
    );
    assert_round_trip(&m, &path, None);
}

#[test]
fn deeply_nested_growing_loops_infer_in_bounded_time() {
    // 25 nested Loops, each doubling its carried value along axis 0: every
    // level needs more than one round, which must not multiply.
    let path = gen_model(
        "nested_growing_loops",
        "
T = TensorProto
def body(k):
    nodes = [helper.make_node('Identity', [f'c{k}'], [f'co{k}'])]
    src = f'v{k}'
    if k > 0:
        nodes.append(helper.make_node('Loop', ['n', '', src], [f'inner{k}'], body=body(k - 1)))
        src = f'inner{k}'
    nodes.append(helper.make_node('Concat', [src, f'v{k}'], [f'vo{k}'], axis=0))
    return helper.make_graph(nodes, f'b{k}',
        [helper.make_tensor_value_info(f'i{k}', T.INT64, []),
         helper.make_tensor_value_info(f'c{k}', T.BOOL, []),
         helper.make_tensor_value_info(f'v{k}', T.FLOAT, None)],
        [helper.make_tensor_value_info(f'co{k}', T.BOOL, []),
         helper.make_tensor_value_info(f'vo{k}', T.FLOAT, None)])
g = helper.make_graph([helper.make_node('Loop', ['n', '', 'x'], ['y'], body=body(24))], 'g',
    [helper.make_tensor_value_info('x', T.FLOAT, [1, 2]),
     helper.make_tensor_value_info('n', T.INT64, [])],
    [helper.make_tensor_value_info('y', T.FLOAT, None)])
save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]))
",
    );
    let start = std::time::Instant::now();
    let m = import(&load(&path));
    assert!(
        start.elapsed() < std::time::Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
    // The growing dim is unknown (named by some fresh symbol).
    let ty = func_type(&m).to_string();
    assert!(
        ty.starts_with("(tensor<1x2xf32>, tensor<i64>) -> tensor<?x2xf32"),
        "{ty}"
    );
}
