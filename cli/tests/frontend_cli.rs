#![allow(clippy::expect_used, clippy::unwrap_used)] // test harness: setup failures abort
//! The frontend through the `onnxc` binary: external data on output, and
//! hostile files ending in a diagnostic with exit code 1.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use testsuite::node_data::{python, repo_root};

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

/// `dim_param`s that name no dim (`?`, `-1`: paddle2onnx's "any size")
/// give every dim a size of its own: a model declared `[?, 3, ?, ?]` runs
/// at 1×3×48×192, and its output matches numpy's.
#[test]
fn anonymous_dim_params_bind_nothing() {
    let dir = workdir("anonymous_dims");
    let script = "
import sys, os, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
out = sys.argv[1]
g = helper.make_graph([helper.make_node('Mul', ['x', 'y'], ['z'])], 'g',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, ['?', 3, '?', '-1']),
     helper.make_tensor_value_info('y', TensorProto.FLOAT, ['?', 1, 1, '-1'])],
    [helper.make_tensor_value_info('z', TensorProto.FLOAT, ['?', 3, '?', '?'])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)]),
          os.path.join(out, 'model.onnx'))
x = np.arange(1 * 3 * 48 * 192, dtype=np.float32).reshape(1, 3, 48, 192) / 1000
y = np.linspace(-1, 1, 192, dtype=np.float32).reshape(1, 1, 1, 192)
for name, a in [('x', x), ('y', y), ('z', x * y)]:
    open(os.path.join(out, name + '.pb'), 'wb').write(numpy_helper.from_array(a, name).SerializeToString())
";
    run_script(script, &dir);
    let p = |f: &str| dir.join(f).display().to_string();
    assert_ok(&run_model(&dir, &["x.pb", "y.pb"]));
    let (_, got) = frontend::tensor_io::read_tensor_pb(Path::new(&p("out/output_0.pb"))).unwrap();
    let (_, want) = frontend::tensor_io::read_tensor_pb(Path::new(&p("z.pb"))).unwrap();
    assert_eq!(got.shape(), want.shape());
    assert!(got.iter().zip(want.iter()).all(|(g, w)| g.f64() == w.f64()));
}

/// `onnxc run DIR/model.onnx --input DIR/I... --output-dir DIR/out`.
fn run_model(dir: &Path, inputs: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_onnxc"));
    cmd.arg("run").arg(dir.join("model.onnx"));
    for i in inputs {
        cmd.arg("--input").arg(dir.join(i));
    }
    cmd.arg("--output-dir").arg(dir.join("out"));
    cmd.output().expect("run onnxc")
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
    assert_ok(&run_model(&dir, &["a.pb", "b.pb"]));
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

#[test]
fn ml_outputs_without_a_c_form_name_their_node_and_zipmap_has_one() {
    let dir = workdir("ml-outputs");
    // A classifier with string labels; skl2onnx's default ZipMap after one
    // with integer labels.
    let script = "
import sys, os, onnx
from onnx import helper, TensorProto as T
out = sys.argv[1]
x = helper.make_tensor_value_info('x', T.FLOAT, ['N', 2])
def save(name, nodes, outputs):
    g = helper.make_graph(nodes, name, [x], outputs)
    m = helper.make_model(g, ir_version=8, opset_imports=[helper.make_opsetid('', 17), helper.make_opsetid('ai.onnx.ml', 1)])
    onnx.save(m, os.path.join(out, name + '.onnx'))
lc = dict(domain='ai.onnx.ml', coefficients=[1.0, 2.0, -1.0, 0.5])
save('strings', [helper.make_node('LinearClassifier', ['x'], ['label', 'prob'], name='clf', classlabels_strings=['no', 'yes'], **lc)],
     [helper.make_tensor_value_info('label', T.STRING, ['N']), helper.make_tensor_value_info('prob', T.FLOAT, ['N', 2])])
zipped = helper.make_sequence_type_proto(helper.make_map_type_proto(T.INT64, helper.make_tensor_type_proto(T.FLOAT, [])))
save('zipmap', [helper.make_node('LinearClassifier', ['x'], ['label', 'prob'], name='clf', classlabels_ints=[0, 1], **lc),
                helper.make_node('ZipMap', ['prob'], ['probs'], name='zip', domain='ai.onnx.ml', classlabels_int64s=[0, 1])],
     [helper.make_tensor_value_info('label', T.INT64, ['N']), helper.make_value_info('probs', zipped)])
";
    run_script(script, &dir);
    let model = dir.join("strings.onnx");
    let out = onnxc(&["compile", &model.display().to_string(), "--emit", "onnx-ir"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let want = "'onnx_ml.LinearClassifier' output 'label': string class labels are not supported";
    assert!(err.contains(want), "{err}");
    // A ZipMap compiles to its tensor form: the probabilities, with the
    // classes in the header.
    let zipmap = dir.join("zipmap.onnx");
    let lib = dir.join("libzipmap.so");
    let (zipmap, lib) = (zipmap.display().to_string(), lib.display().to_string());
    let out = onnxc(&["compile", &zipmap, "--emit", "lib", "-o", &lib]);
    assert_ok(&out);
    let header = std::fs::read_to_string(dir.join("zipmap.h")).unwrap();
    assert!(
        header.contains("output 1 'probs': [?, 2] (a ZipMap in the model: the probability of each class, classes [0, 1])"),
        "{header}"
    );
}

/// `onnxc run` takes and writes the 8-, 4- and 2-bit types (packed in
/// the .pb files as ONNX packs them): casts between them and every other
/// kind (bf16, f64, ints, bool), BitCasts; the outputs match the ONNX
/// reference evaluator (bit for bit, or in value where NaN payloads may
/// differ).
#[test]
fn run_reads_and_writes_small_types() {
    let dir = workdir("small_types");
    let script = r#"
import sys, os, numpy as np, onnx, ml_dtypes as md
from onnx import TensorProto as T, helper as h, numpy_helper as nh
from onnx.reference import ReferenceEvaluator
out = sys.argv[1]
casts = [("e", T.BFLOAT16), ("e", T.INT8), ("e", T.INT4), ("e", T.FLOAT8E4M3FN), ("e", T.BOOL),
         ("e", T.DOUBLE), ("i", T.FLOAT8E4M3FNUZ), ("b", T.FLOAT8E5M2), ("d", T.FLOAT8E4M3FN),
         ("d", T.FLOAT4E2M1), ("h", T.FLOAT8E5M2FNUZ), ("q", T.UINT8), ("q", T.FLOAT8E4M3FN),
         ("f4", T.INT8), ("f4", T.FLOAT8E5M2)]
nodes = [h.make_node("Cast", [src], [f"o{k}"], to=to) for k, (src, to) in enumerate(casts)]
outs = [h.make_tensor_value_info(f"o{k}", to, [6]) for k, (_, to) in enumerate(casts)]
for k, (src, to) in enumerate([("e", T.UINT8), ("q", T.UINT4), ("f4", T.INT4)]):
    nodes.append(h.make_node("BitCast", [src], [f"bc{k}"], to=to))
    outs.append(h.make_tensor_value_info(f"bc{k}", to, [6]))
feeds = {"e": np.array([1.5, -3.0, 57344, -0.0, 0.0001, -5.0], np.float32).astype(md.float8_e5m2),
         "i": np.array([0, 1, -7, 239, 100000, -250], np.int32),
         "b": np.array([True, False, True, True, False, False]),
         "d": np.array([0.1, 1.0000001, 449.9999, -1e300, 2.0**-10 + 1e-30, 3.0]),
         "h": np.array([1.0, -2.5, 60000, 1e-9, -0.0, 7.0]).astype(md.bfloat16),
         "q": np.array([-8, 7, -1, 0, 3, -3]).astype(md.int4),
         "f4": np.array([0.5, -6, 1.5, 3, -0.0, 4]).astype(md.float4_e2m1fn)}
ins = [h.make_tensor_value_info(n, nh.from_array(v).data_type, [6]) for n, v in feeds.items()]
m = h.make_model(h.make_graph(nodes, "g", ins, outs), opset_imports=[h.make_opsetid("", 26)])
m.ir_version = 12
onnx.save(m, os.path.join(out, "model.onnx"))
for n, v in feeds.items():
    onnx.save_tensor(nh.from_array(v, n), os.path.join(out, n + ".pb"))
for k, r in enumerate(ReferenceEvaluator(m).run(None, feeds)):
    onnx.save_tensor(nh.from_array(r), os.path.join(out, f"want_{k}.pb"))
# A float -> integer Cast out of range is undefined in the spec
# (docs/ONNX_DIALECT.md, "Cast semantics"): those elements are not compared.
ranges = {T.INT8: (-128, 127), T.INT4: (-8, 7), T.UINT8: (0, 255)}
floats, undefined = {"e", "d", "h", "f4"}, {}
for k, (src, to) in enumerate(casts):
    if src in floats and to in ranges:
        x, (lo, hi) = feeds[src].astype(np.float64), ranges[to]
        t = np.trunc(x)
        undefined[k] = [i for i in range(6) if not (np.isfinite(t[i]) and lo <= t[i] <= hi)]
open(os.path.join(out, "undefined.txt"), "w").write(repr(undefined))
"#;
    run_script(script, &dir);
    let p = |f: &str| dir.join(f).display().to_string();
    let mut args = vec!["run".to_string(), p("model.onnx")];
    for name in ["e", "i", "b", "d", "h", "q", "f4"] {
        args.push("--input".into());
        args.push(p(&format!("{name}.pb")));
    }
    args.extend(["--output-dir".into(), p("out")]);
    let run = onnxc(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_ok(&run);
    let check = Command::new(python())
        .arg("-c")
        .arg(
            "import sys, os, onnx, numpy as np; from onnx import numpy_helper as nh
d = sys.argv[1]
undefined = eval(open(os.path.join(d, 'undefined.txt')).read())
for k in range(18):
    g = onnx.load_tensor(os.path.join(d, 'out', f'output_{k}.pb'))
    w = onnx.load_tensor(os.path.join(d, f'want_{k}.pb'))
    assert g.data_type == w.data_type and list(g.dims) == list(w.dims), (k, g.data_type, g.dims)
    ga, wa = nh.to_array(g).astype(np.float64), nh.to_array(w).astype(np.float64)
    keep = [i for i in range(ga.size) if i not in undefined.get(k, [])]
    same = g.raw_data == w.raw_data or np.array_equal(ga[keep], wa[keep], equal_nan=True)
    assert same, (k, g.raw_data.hex(), w.raw_data.hex())",
        )
        .arg(&dir)
        .output()
        .unwrap();
    assert_ok(&check);
}
