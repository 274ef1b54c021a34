//! Model-local functions are inlined at import: attribute references,
//! defaults, omitted optional inputs, nested calls, calls inside subgraphs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use ir::Attribute;

const FUNCTIONS: &str = "
T = TensorProto
from onnx import AttributeProto
f32 = lambda n, s: helper.make_tensor_value_info(n, T.FLOAT, s)
ops = [helper.make_opsetid('', 17), helper.make_opsetid('local', 1)]

# Act(X) = LeakyRelu(X, alpha=@slope) with slope defaulting to 0.25.
slope = helper.make_attribute_ref('alpha', AttributeProto.FLOAT, ref_attr_name='slope')
leaky = helper.make_node('LeakyRelu', ['X'], ['Y'])
leaky.attribute.append(slope)
act = helper.make_function('local', 'Act', ['X'], ['Y'], [leaky], ops[:1], [])
act.attribute_proto.append(helper.make_attribute('slope', 0.25))

# Scaled(X, Lo, Hi) = Act(Clip(X * @scale, Lo, Hi)) + a constant @bias;
# Lo is optional (omitted by some calls).
scale = helper.make_node('Constant', [], ['s'])
scale.attribute.append(helper.make_attribute_ref('value_float', AttributeProto.FLOAT, ref_attr_name='scale'))
bias = helper.make_node('Constant', [], ['b'])
bias.attribute.append(helper.make_attribute_ref('value_float', AttributeProto.FLOAT, ref_attr_name='bias'))
slope2 = helper.make_node('Act', ['clipped'], ['acted'], domain='local')
slope2.attribute.append(helper.make_attribute_ref('slope', AttributeProto.FLOAT, ref_attr_name='slope'))
scaled = helper.make_function('local', 'Scaled', ['X', 'Lo', 'Hi'], ['Y', 'Aux'], [
    scale, bias,
    helper.make_node('Mul', ['X', 's'], ['xs']),
    helper.make_node('Clip', ['xs', 'Lo', 'Hi'], ['clipped']),
    slope2,
    helper.make_node('Add', ['acted', 'b'], ['Y']),
    helper.make_node('Neg', ['Y'], ['Aux']),
], ops, ['scale', 'slope'])
scaled.attribute_proto.append(helper.make_attribute('bias', 1.0))

lo = numpy_helper.from_array(np.array(-1.0, np.float32), 'lo')
hi = numpy_helper.from_array(np.array(2.0, np.float32), 'hi')
call1 = helper.make_node('Scaled', ['x', 'lo', 'hi'], ['y1', 'aux1'], domain='local', name='call1',
                         scale=3.0, slope=0.5)
call2 = helper.make_node('Scaled', ['x', '', 'hi'], ['y2', 'aux2'], domain='local', name='call2',
                         scale=-2.0, bias=0.0)
# A call inside an If branch, capturing x.
branch = helper.make_graph(
    [helper.make_node('Act', ['x'], ['b_out'], domain='local', name='in_branch')],
    'branch', [], [f32('b_out', [2, 3])])
other = helper.make_graph([helper.make_node('Neg', ['x'], ['o_out'])], 'other', [], [f32('o_out', [2, 3])])
cond = helper.make_node('If', ['c'], ['y3'], then_branch=branch, else_branch=other)
g = helper.make_graph([call1, call2, cond], 'funcs',
    [f32('x', [2, 3]), helper.make_tensor_value_info('c', T.BOOL, [])],
    [f32('y1', None), f32('aux1', None), f32('y2', None), f32('y3', None)], [lo, hi])
save(helper.make_model(g, ir_version=10, opset_imports=ops, functions=[act, scaled]))
inputs(('x', np.array([[-2, -0.5, 0], [0.25, 0.5, 3]], np.float32)), ('c', np.array(True)))
";

#[test]
fn functions_are_inlined_and_round_trip() {
    let path = gen_model("functions", &format!("{WRITE_INPUTS}{FUNCTIONS}"));
    let m = import(&load(&path));
    let ops = all_op_names(&m);
    assert!(
        ops.iter()
            .all(|o| !o.contains("Scaled") && !o.contains("Act")),
        "{ops:?}"
    );
    let count = |name: &str| ops.iter().filter(|o| *o == name).count();
    assert_eq!(count("onnx.LeakyRelu"), 3, "{ops:?}");
    assert_eq!(count("onnx.Clip"), 2);
    // Attribute references: explicit, defaulted, and from a nested call.
    let leaky_alphas: Vec<String> = m
        .collect_ops(main_func(&m))
        .into_iter()
        .filter(|&o| m.is(o, "onnx.LeakyRelu"))
        .map(|o| m.attr(o, "alpha").unwrap().to_string())
        .collect();
    assert_eq!(
        leaky_alphas,
        ["5.0e-01 : f32", "2.5e-01 : f32", "2.5e-01 : f32"]
    );
    // Names inside a call are prefixed by the call; outputs keep the
    // caller's names.
    let text = ir::text::print_module(
        &m,
        &ir::text::PrintOptions {
            debug_info: true,
            ..Default::default()
        },
    );
    assert!(text.contains("loc(\"call1/clipped\")"), "{text}");
    assert!(text.contains("loc(\"call1/acted/Y\")"), "{text}");
    assert!(text.contains("onnx.names = [\"y1\"]"), "{text}");
    assert_eq!(
        func_type(&m).to_string(),
        "(tensor<2x3xf32>, tensor<i1>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)"
    );
    // The omitted `Lo` of call2 is an omitted Clip input.
    let clip2 = m
        .collect_ops(main_func(&m))
        .into_iter()
        .filter(|&o| m.is(o, "onnx.Clip"))
        .nth(1)
        .unwrap();
    let lo = m.operand(clip2, 1).unwrap();
    assert!(m.is(m.defining_op(lo).unwrap(), "onnx.NoValue"));
    let exported = assert_round_trip(&m, &path, None);
    let proto = load(&exported);
    assert!(proto.proto.functions.is_empty());
    let f = main_func(&import(&proto));
    assert!(
        m.attr(f, "input_names")
            == Some(&Attribute::Array(
                vec![Attribute::string("x"), Attribute::string("c")].into()
            ))
    );
}

#[test]
fn recursive_and_malformed_functions_are_diagnosed() {
    let path = gen_model(
        "recursive_function",
        "
ops = [helper.make_opsetid('', 17), helper.make_opsetid('local', 1)]
f = helper.make_function('local', 'Loopy', ['X'], ['Y'],
    [helper.make_node('Loopy', ['X'], ['Y'], domain='local')], ops, [])
g = helper.make_graph([helper.make_node('Loopy', ['x'], ['y'], domain='local', name='call')], 'g',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2])])
save(helper.make_model(g, opset_imports=ops, functions=[f]))
",
    );
    let err = frontend::import_model(&load(&path))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("deeper than 64 levels") && err.contains("'Loopy'"),
        "{err}"
    );
    let path = gen_model(
        "function_bad_body",
        "
ops = [helper.make_opsetid('', 17), helper.make_opsetid('local', 1)]
f = helper.make_function('local', 'F', ['X'], ['Y'],
    [helper.make_node('Add', ['X', 'outer'], ['Y'])], ops, [])
g = helper.make_graph([helper.make_node('Relu', ['x'], ['outer']),
                       helper.make_node('F', ['x'], ['y'], domain='local', name='call')], 'g',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2])])
save(helper.make_model(g, opset_imports=ops, functions=[f]))
",
    );
    // Function bodies do not see the caller's names.
    let err = frontend::import_model(&load(&path))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("in function 'F'") && err.contains("'outer'"),
        "{err}"
    );
}
