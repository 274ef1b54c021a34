#![allow(clippy::expect_used, clippy::unwrap_used)] // test harness: setup failures abort
//! The frontend through the `onnxc` binary: external data on output, and
//! hostile files ending in a diagnostic with exit code 1.

mod frontend_common;

use frontend_common::{python, repo_root};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn onnxc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_onnxc"))
        .args(args)
        .output()
        .expect("run onnxc")
}

fn workdir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("frontend-cli")
        .join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An MLP with 64 KiB of weights plus its input in `dir`.
fn mlp(dir: &Path) -> PathBuf {
    let script = "
import sys, os, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
out = sys.argv[1]
rng = np.random.default_rng(0)
w = numpy_helper.from_array(rng.standard_normal((128, 128)).astype(np.float32), 'w')
b = numpy_helper.from_array(rng.standard_normal(128).astype(np.float32), 'b')
g = helper.make_graph(
    [helper.make_node('MatMul', ['x', 'w'], ['h']), helper.make_node('Add', ['h', 'b'], ['y'])],
    'mlp', [helper.make_tensor_value_info('x', TensorProto.FLOAT, [2, 128])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [2, 128])], [w, b])
onnx.save(helper.make_model(g, ir_version=10, opset_imports=[helper.make_opsetid('', 17)]),
          os.path.join(out, 'model.onnx'))
os.makedirs(os.path.join(out, 'test_data_set_0'), exist_ok=True)
x = numpy_helper.from_array(rng.standard_normal((2, 128)).astype(np.float32), 'x')
open(os.path.join(out, 'test_data_set_0', 'input_0.pb'), 'wb').write(x.SerializeToString())
";
    let out = Command::new(python())
        .arg("-c")
        .arg(script)
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.join("model.onnx")
}

fn assert_same_in_onnxruntime(dir: &Path, original: &Path, other: &Path) {
    let list = dir.join("pairs.tsv");
    std::fs::write(
        &list,
        format!(
            "case\t{}\t{}\t{}\n",
            original.display(),
            other.display(),
            dir.join("test_data_set_0").display()
        ),
    )
    .unwrap();
    let out = Command::new(python())
        .arg(repo_root().join("scripts").join("ort_compare.py"))
        .arg(&list)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\tpass\t"), "{stdout}");
}

#[test]
fn fold_and_compile_write_external_data() {
    let dir = workdir("external");
    let model = mlp(&dir);
    let m = model.to_str().unwrap();
    for (cmd, file) in [("fold", "folded.onnx"), ("compile", "compiled.onnx")] {
        let out_path = dir.join(file);
        let o = out_path.to_str().unwrap();
        let mut args = vec![cmd, m, "-o", o, "--external-data-threshold", "1024"];
        if cmd == "compile" {
            args.extend(["--emit", "onnx"]);
        }
        let r = onnxc(&args);
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
        let data = dir.join(format!("{file}.data"));
        // The 64 KiB weight moved out, the 512-byte bias stayed inline.
        assert_eq!(std::fs::metadata(&data).unwrap().len(), 128 * 128 * 4);
        assert!(std::fs::metadata(&out_path).unwrap().len() < 4096);
        assert_same_in_onnxruntime(&dir, &model, &out_path);
    }
    // Without -o there is nowhere to put the data file.
    let r = onnxc(&[
        "compile",
        m,
        "--emit",
        "onnx",
        "--external-data-threshold",
        "1",
    ]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("needs -o"));
}

#[test]
fn hostile_files_exit_with_code_1() {
    let dir = workdir("hostile");
    let model = mlp(&dir);
    let bytes = std::fs::read(&model).unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated",
            bytes[..bytes.len() / 2].to_vec(),
            "malformed ONNX protobuf",
        ),
        ("empty", Vec::new(), "empty file"),
        (
            "garbage",
            (0..4096u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
                .collect(),
            "error",
        ),
    ];
    for (name, data, expect) in cases {
        let path = dir.join(format!("{name}.onnx"));
        std::fs::write(&path, data).unwrap();
        let r = onnxc(&["compile", path.to_str().unwrap(), "--stop-after", "import"]);
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(1), "{name}: {stderr}");
        assert!(stderr.contains(expect), "{name}: {stderr}");
        assert!(
            !stderr.contains("internal compiler error"),
            "{name}: {stderr}"
        );
    }
}

#[test]
fn dim_params_survive_export_and_bind_one_size() {
    let dir = workdir("dim_params");
    let script = "
import sys, os, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
out = sys.argv[1]
g = helper.make_graph([helper.make_node('Add', ['x', 'y'], ['z'])], 'g',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['N', 4]),
     helper.make_tensor_value_info('y', TensorProto.FLOAT, ['N', 4])],
    [helper.make_tensor_value_info('z', TensorProto.FLOAT, ['N', 4])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]),
          os.path.join(out, 'model.onnx'))
for name, rows in [('x', 2), ('y', 2), ('y_bad', 3)]:
    a = np.ones((rows, 4), np.float32)
    open(os.path.join(out, name + '.pb'), 'wb').write(numpy_helper.from_array(a, name).SerializeToString())
";
    run_script(script, &dir);
    let p = |f: &str| dir.join(f).display().to_string();

    let written = p("written.onnx");
    let out = onnxc(&[
        "compile",
        &p("model.onnx"),
        "--emit",
        "onnx",
        "-o",
        &written,
    ]);
    assert_ok(&out);
    let dims = Command::new(python())
        .arg("-c")
        .arg(
            "import sys, onnx; g = onnx.load(sys.argv[1]).graph
print([[d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim] for v in list(g.input) + list(g.output)])",
        )
        .arg(&written)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&dims.stdout).trim(),
        "[['N', 4], ['N', 4], ['N', 4]]",
        "{}",
        String::from_utf8_lossy(&dims.stderr)
    );

    let good = onnxc(&[
        "run",
        &p("model.onnx"),
        "--input",
        &p("x.pb"),
        "--input",
        &p("y.pb"),
        "--output-dir",
        &p("out"),
    ]);
    assert_ok(&good);
    let bad = onnxc(&[
        "run",
        &p("model.onnx"),
        "--input",
        &p("x.pb"),
        "--input",
        &p("y_bad.pb"),
    ]);
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("input 'y' dim 0 is 3, but dim_param 'N' is 2 (input 'x' dim 0)"),
        "{err}"
    );
}

/// Runs a Python script with `dir` as its first argument.
fn run_script(script: &str, dir: &Path) {
    let out = Command::new(python())
        .args(["-c", script])
        .arg(dir)
        .output()
        .unwrap();
    assert_ok(&out);
}

fn assert_ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn opset_3_forms_compute_what_numpy_says() {
    let dir = workdir("opset3");
    // Legacy broadcasting along axis 1, Reshape with a `shape` attribute,
    // Concat without an axis (1), Cast to a type name.
    let script = "
import sys, os, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
out = sys.argv[1]
rng = np.random.default_rng(5)
a = rng.standard_normal((2, 3, 4)).astype(np.float32)
b = rng.standard_normal(3).astype(np.float32)
nodes = [
    helper.make_node('Add', ['a', 'b'], ['s'], broadcast=1, axis=1, consumed_inputs=[0, 0]),
    helper.make_node('Reshape', ['s'], ['r'], shape=[2, 12]),
    helper.make_node('Concat', ['r', 'r'], ['c']),
    helper.make_node('Cast', ['c'], ['y'], to='DOUBLE'),
]
g = helper.make_graph(nodes, 'g',
    [helper.make_tensor_value_info('a', TensorProto.FLOAT, [2, 3, 4]),
     helper.make_tensor_value_info('b', TensorProto.FLOAT, [3])],
    [helper.make_tensor_value_info('y', TensorProto.DOUBLE, None)])
m = helper.make_model(g, ir_version=3, opset_imports=[helper.make_opsetid('', 3)])
onnx.save(m, os.path.join(out, 'model.onnx'))
r = (a + b[None, :, None]).reshape(2, 12)
want = np.concatenate([r, r], axis=1).astype(np.float64)
for name, v in [('a', a), ('b', b), ('want', want)]:
    open(os.path.join(out, name + '.pb'), 'wb').write(numpy_helper.from_array(v, name).SerializeToString())
";
    run_script(script, &dir);
    let p = |f: &str| dir.join(f).display().to_string();
    let run = onnxc(&[
        "run",
        &p("model.onnx"),
        "--input",
        &p("a.pb"),
        "--input",
        &p("b.pb"),
        "--output-dir",
        &p("out"),
    ]);
    assert_ok(&run);
    let check = Command::new(python())
        .arg("-c")
        .arg(
            "import sys, numpy as np, onnx; from onnx import numpy_helper
got, want = (numpy_helper.to_array(onnx.load_tensor(p)) for p in sys.argv[1:])
assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
assert np.allclose(got, want, rtol=1e-6, atol=0), np.abs(got - want).max()",
        )
        .args([p("out/output_0.pb"), p("want.pb")])
        .output()
        .unwrap();
    assert_ok(&check);
}

/// `onnxc run` takes and writes int4 and float8 tensors (packed in the
/// .pb files as ONNX packs them); the outputs match the ONNX reference
/// evaluator bit for bit.
#[test]
fn run_reads_and_writes_small_types() {
    let dir = workdir("small_types");
    let script = "
import sys, os, numpy as np, onnx, ml_dtypes
from onnx import helper, numpy_helper, TensorProto as T
from onnx.reference import ReferenceEvaluator
out = sys.argv[1]
nodes = [helper.make_node('Cast', ['q'], ['f'], to=T.FLOAT8E4M3FN),
         helper.make_node('Cast', ['e'], ['i'], to=T.INT4)]
g = helper.make_graph(nodes, 'g',
    [helper.make_tensor_value_info('q', T.INT4, [2, 3]),
     helper.make_tensor_value_info('e', T.FLOAT8E5M2, [5])],
    [helper.make_tensor_value_info('f', T.FLOAT8E4M3FN, [2, 3]),
     helper.make_tensor_value_info('i', T.INT4, [5])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 25)])
m.ir_version = 11
onnx.save(m, os.path.join(out, 'model.onnx'))
q = np.array([[-8, 7, 0], [-1, 5, 3]]).astype(ml_dtypes.int4)
e = np.array([1.5, -3.0, 6.0, -0.25, 12.0], np.float32).astype(ml_dtypes.float8_e5m2)
ref = ReferenceEvaluator(m).run(None, {'q': q, 'e': e})
for name, v in [('q', q), ('e', e), ('want0', ref[0]), ('want1', ref[1])]:
    open(os.path.join(out, name + '.pb'), 'wb').write(numpy_helper.from_array(v, name).SerializeToString())
";
    run_script(script, &dir);
    let p = |f: &str| dir.join(f).display().to_string();
    let run = onnxc(&[
        "run",
        &p("model.onnx"),
        "--input",
        &p("q.pb"),
        "--input",
        &p("e.pb"),
        "--output-dir",
        &p("out"),
    ]);
    assert_ok(&run);
    let check = Command::new(python())
        .arg("-c")
        .arg(
            "import sys, onnx
for got, want in [(sys.argv[1], sys.argv[3]), (sys.argv[2], sys.argv[4])]:
    g, w = onnx.load_tensor(got), onnx.load_tensor(want)
    assert g.data_type == w.data_type and list(g.dims) == list(w.dims), (g.data_type, g.dims)
    assert g.raw_data == w.raw_data, (g.raw_data.hex(), w.raw_data.hex())",
        )
        .args([
            p("out/output_0.pb"),
            p("out/output_1.pb"),
            p("want0.pb"),
            p("want1.pb"),
        ])
        .output()
        .unwrap();
    assert_ok(&check);
}
