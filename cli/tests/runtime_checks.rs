#![allow(clippy::expect_used, clippy::unwrap_used)] // test harness: setup failures abort
//! Runtime contract checks, executed: a model with dynamic dims (distinct
//! dim_params, so `onnxc run`'s own input checks cannot catch a mismatch)
//! run with inputs that break Add's broadcasting, MatMul's inner dim and
//! Gather's index range must stop with the op's message and a non-zero
//! exit (one case under valgrind: no invalid access before the abort);
//! good inputs must match onnxruntime. The model and the expected outputs
//! come from `runtime_checks/make_model.py` (python3 + onnx + onnxruntime).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

fn make_model(dir: &Path) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/runtime_checks/make_model.py");
    let out = Command::new(python())
        .arg(&script)
        .arg(dir)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "{} failed (python3 + onnx + onnxruntime needed):\n{}",
        script.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs Python `code` with `dir` as argv[1]; its stdout.
fn python_into(dir: &Path, code: &str) -> String {
    let out = Command::new(python())
        .args(["-c", code])
        .arg(dir)
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn run(dir: &Path, set: &str, valgrind: bool) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_onnxc"));
    cmd.arg("run").arg(dir.join("model.onnx"));
    for i in 0..5 {
        cmd.arg("--input")
            .arg(dir.join(set).join(format!("input_{i}.pb")));
    }
    if valgrind {
        cmd.arg("--valgrind");
    }
    cmd.arg("--output-dir").arg(dir.join(set).join("out"));
    cmd.output().expect("run onnxc")
}

/// `onnxc run MODEL --input INPUT --valgrind --output-dir OUT`, which must
/// succeed without a valgrind error (`what` names the case).
fn run_clean(model: &Path, input: &Path, out: &Path, what: &str) {
    let run = Command::new(env!("CARGO_BIN_EXE_onnxc"))
        .arg("run")
        .arg(model)
        .arg("--input")
        .arg(input)
        .arg("--valgrind")
        .arg("--output-dir")
        .arg(out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{what}: {stderr}");
    for bad in ["Invalid read", "Invalid write", "uninitialised"] {
        assert!(!stderr.contains(bad), "{what}: valgrind: {stderr}");
    }
}

/// The memref IR of `model` (after the dealloc stage).
fn memref_ir(model: &Path) -> String {
    let ir = Command::new(env!("CARGO_BIN_EXE_onnxc"))
        .arg("compile")
        .arg(model)
        .args(["--stop-after", "dealloc", "-o", "-"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&ir.stderr);
    assert!(ir.status.success(), "{}: {stderr}", model.display());
    String::from_utf8_lossy(&ir.stdout).into_owned()
}

fn scratch() -> PathBuf {
    fresh_dir("onnxc-runtime-checks")
}

fn expect_abort(dir: &Path, set: &str, valgrind: bool, message: &str) {
    let out = run(dir, set, valgrind);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{set}: the run succeeded");
    assert!(
        stderr.contains(&format!("assertion failed: {message}")),
        "{set}: stderr lacks the check's message:\n{stderr}"
    );
    for bad in ["Invalid read", "Invalid write", "uninitialised"] {
        assert!(!stderr.contains(bad), "{set}: valgrind: {stderr}");
    }
}

fn close(got: &Path, want: &Path) {
    let (_, g) = frontend::tensor_io::read_tensor_pb(got).unwrap();
    let (_, w) = frontend::tensor_io::read_tensor_pb(want).unwrap();
    assert_eq!(g.shape(), w.shape(), "{}", got.display());
    for (k, (g, w)) in g.iter().zip(w.iter()).enumerate() {
        let (g, w) = (g.f64(), w.f64());
        assert!(
            (g - w).abs() <= 1e-5 + 1e-4 * w.abs(),
            "{}[{k}]: got {g}, expected {w}",
            got.display()
        );
    }
}

#[test]
fn contract_checks_stop_bad_inputs_and_pass_good_ones() {
    let dir = scratch();
    make_model(&dir);

    let out = run(&dir, "good", false);
    assert!(
        out.status.success(),
        "good inputs failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for i in 0..2 {
        let got = dir.join("good/out").join(format!("output_{i}.pb"));
        close(&got, &dir.join("good").join(format!("expected_{i}.pb")));
    }

    let add = "onnx.Add at node 'add1': input 1 dim 0 is not 1 and differs from the output's";
    expect_abort(&dir, "bad_add", false, add);
    let mm = "onnx.MatMul at node 'mm1': the inner dims of A and B differ";
    expect_abort(&dir, "bad_matmul", false, mm);
    let gather = "onnx.Gather at node 'gather1': an index is out of range of data dim 0";
    expect_abort(&dir, "bad_gather_neg", false, gather);
    expect_abort(&dir, "bad_gather", true, gather);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An empty directory `TAG-PID` in the temp dir.
fn fresh_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `onnxc run` of `dir/FORM.onnx`: `input` (x a graph input, fed from
/// `dir/x.pb`: the compiled kernel) or `constant` (x a Constant: folded at
/// compile time); the output directory.
fn run_form(dir: &Path, form: &str) -> PathBuf {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_onnxc"));
    cmd.arg("run").arg(dir.join(format!("{form}.onnx")));
    if form == "input" {
        cmd.arg("--input").arg(dir.join("x.pb"));
    }
    let outdir = dir.join(form);
    let out = cmd.arg("--output-dir").arg(&outdir).output().unwrap();
    assert!(
        out.status.success(),
        "{form}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    outdir
}

/// Python writing the Cast model into argv[1]: float → every integer type;
/// as `input.onnx` with x a graph input (the compiled kernel), as
/// `constant.onnx` with x a Constant (folded at compile time), and x as
/// `x.pb`.
const CAST_MODEL: &str = r#"
import os, sys, numpy as np, onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh
x = np.array([np.nan, np.inf, -np.inf, -9.7, 100, 2.0**31, -2.0**40, 1e20, 3.9, -3.9, 0.5, -0.5], np.float32)
targets = ["INT4", "UINT4", "INT2", "UINT2", "INT8", "UINT8", "INT16", "INT32", "UINT32", "INT64", "UINT64"]
nodes = [h.make_node("Cast", ["x"], [t], to=getattr(T, t)) for t in targets]
outs = [h.make_tensor_value_info(t, getattr(T, t), [12]) for t in targets]
for name, ins, pre in [("input", [h.make_tensor_value_info("x", T.FLOAT, [12])], []),
                       ("constant", [], [h.make_node("Constant", [], ["x"], value=nh.from_array(x))])]:
    m = h.make_model(h.make_graph(pre + nodes, "cast", ins, outs), opset_imports=[h.make_opsetid("", 25)])
    m.ir_version = 11
    onnx.save(m, os.path.join(sys.argv[1], name + ".onnx"))
open(os.path.join(sys.argv[1], "x.pb"), "wb").write(nh.from_array(x, "x").SerializeToString())
"#;

/// Float → integer Cast out of range (undefined in the ONNX spec) truncates
/// toward zero and saturates, NaN giving 0 (docs/ONNX_DIALECT.md, "Cast
/// semantics"): the compiled kernel and the compile-time fold agree on
/// every integer type.
#[test]
fn float_to_int_casts_saturate_in_kernels_and_folds() {
    let dir = fresh_dir("onnxc-cast-semantics");
    python_into(&dir, CAST_MODEL);
    // x = NaN, inf, -inf, -9.7, 100, 2^31, -2^40, 1e20, 3.9, -3.9, 0.5, -0.5
    let (i32max, i64max) = (i32::MAX as i128, i64::MAX as i128);
    let (u32max, u64max) = (u32::MAX as i128, u64::MAX as i128);
    let want: [(&str, [i128; 12]); 11] = [
        ("i4", [0, 7, -8, -8, 7, 7, -8, 7, 3, -3, 0, 0]),
        ("u4", [0, 15, 0, 0, 15, 15, 0, 15, 3, 0, 0, 0]),
        ("i2", [0, 1, -2, -2, 1, 1, -2, 1, 1, -2, 0, 0]),
        ("u2", [0, 3, 0, 0, 3, 3, 0, 3, 3, 0, 0, 0]),
        ("i8", [0, 127, -128, -9, 100, 127, -128, 127, 3, -3, 0, 0]),
        ("u8", [0, 255, 0, 0, 100, 255, 0, 255, 3, 0, 0, 0]),
        (
            "i16",
            [0, 32767, -32768, -9, 100, 32767, -32768, 32767, 3, -3, 0, 0],
        ),
        (
            "i32",
            [
                0,
                i32max,
                -i32max - 1,
                -9,
                100,
                i32max,
                -i32max - 1,
                i32max,
                3,
                -3,
                0,
                0,
            ],
        ),
        (
            "u32",
            [0, u32max, 0, 0, 100, 1 << 31, 0, u32max, 3, 0, 0, 0],
        ),
        (
            "i64",
            [
                0,
                i64max,
                -i64max - 1,
                -9,
                100,
                1 << 31,
                -(1 << 40),
                i64max,
                3,
                -3,
                0,
                0,
            ],
        ),
        (
            "u64",
            [0, u64max, 0, 0, 100, 1 << 31, 0, u64max, 3, 0, 0, 0],
        ),
    ];
    for model in ["input", "constant"] {
        let outdir = run_form(&dir, model);
        for (i, (ty, want)) in want.iter().enumerate() {
            let (_, e) =
                frontend::tensor_io::read_tensor_pb(&outdir.join(format!("output_{i}.pb")))
                    .unwrap();
            let unsigned = ty.starts_with('u');
            let got: Vec<i128> = e
                .iter()
                .map(|v| {
                    if unsigned {
                        v.u64() as i128
                    } else {
                        v.i64() as i128
                    }
                })
                .collect();
            assert_eq!(got, want, "{model}: Cast to {ty}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// ReduceMean over no elements: ONNX leaves it undefined; onnxc gives 0,
/// as onnxruntime does (not 0 / 0), compiled and folded.
#[test]
fn empty_reduce_mean_is_zero_like_onnxruntime() {
    let dir = fresh_dir("onnxc-empty-mean");
    let script = r#"
import os, sys, numpy as np, onnx, onnxruntime as ort
from onnx import TensorProto as T, helper as h, numpy_helper as nh
nodes = [h.make_node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0),
         h.make_node("ReduceMean", ["x"], ["z"], keepdims=1)]
outs = [h.make_tensor_value_info("y", T.FLOAT, None), h.make_tensor_value_info("z", T.FLOAT, None)]
x = np.zeros((2, 0), np.float32)
for name, ins, pre in [("input", [h.make_tensor_value_info("x", T.FLOAT, ["n", "k"])], []),
                       ("constant", [], [h.make_node("Constant", [], ["x"], value=nh.from_array(x))])]:
    m = h.make_model(h.make_graph(pre + nodes, "g", ins, outs), opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, os.path.join(sys.argv[1], name + ".onnx"))
onnx.save_tensor(nh.from_array(x, "x"), os.path.join(sys.argv[1], "x.pb"))
s = ort.InferenceSession(os.path.join(sys.argv[1], "input.onnx"), providers=["CPUExecutionProvider"])
print(*[float(v) for r in s.run(None, {"x": x}) for v in r.ravel()])
"#;
    let want: Vec<f64> = python_into(&dir, script)
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(want, [0.0, 0.0, 0.0], "onnxruntime's answer");
    for model in ["input", "constant"] {
        let outdir = run_form(&dir, model);
        let got: Vec<f64> = (0..2)
            .flat_map(|i| {
                let p = outdir.join(format!("output_{i}.pb"));
                let (_, e) = frontend::tensor_io::read_tensor_pb(&p).unwrap();
                e.iter().map(|v| v.f64()).collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(got, want, "{model}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// ONNX Loop's scan outputs when the trip count M says little: INT64_MAX
/// (torch's while loops), 2^40 or absent, the condition stopping the loop
/// after 5 iterations. The rows go into a buffer that grows as the loop
/// runs (a buffer of M rows overflowed, or failed to allocate and
/// crashed); under valgrind, against onnxruntime.
#[test]
fn loop_scan_outputs_grow_whatever_the_trip_count() {
    let dir = fresh_dir("onnxc-loops");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/runtime_checks/loops.py");
    let out = Command::new(python())
        .arg(&script)
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in ["int64max", "2p40", "no_m"] {
        let outdir = dir.join(name);
        let model = dir.join(format!("loop_{name}.onnx"));
        run_clean(&model, &dir.join("x.pb"), &outdir, name);
        for k in 0..2 {
            let got = outdir.join(format!("output_{k}.pb"));
            let want = dir.join(format!("loop_{name}.want{k}.pb"));
            let (_, g) = frontend::tensor_io::read_tensor_pb(&got).unwrap();
            let (_, w) = frontend::tensor_io::read_tensor_pb(&want).unwrap();
            assert_eq!(g.shape(), w.shape(), "{name} output {k}");
            close(&got, &want);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Python writing a Concat of a 3×3 Conv (direct vector stores), a 1×1
/// Conv (the GEMM function) and a Relu (a flat element-wise loop), and of
/// that with a Tanh, into argv[1]: `static.onnx` at batch 1, `dynamic.onnx`
/// with a dynamic batch; `xK.pb` inputs at batch K and onnxruntime's
/// outputs `yK.pb`.
const CONCAT_MODEL: &str = r#"
import os, sys, numpy as np, onnx, onnxruntime as ort
from onnx import TensorProto as T, helper as h, numpy_helper as nh
rng = np.random.default_rng(7)
w3 = nh.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w3")
w1 = nh.from_array(rng.standard_normal((5, 3, 1, 1)).astype(np.float32), "w1")
nodes = [h.make_node("Conv", ["x", "w3"], ["a"], pads=[1, 1, 1, 1]),
         h.make_node("Conv", ["x", "w1"], ["b"]),
         h.make_node("Relu", ["x"], ["r"]),
         h.make_node("Concat", ["a", "b", "r"], ["c"], axis=1),
         h.make_node("Tanh", ["x"], ["t"]),
         h.make_node("Concat", ["c", "t"], ["d"], axis=1),
         h.make_node("Sigmoid", ["d"], ["y"])]
for name, batch in [("static", 1), ("dynamic", "N")]:
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [batch, 3, 6, 6])],
                     [h.make_tensor_value_info("y", T.FLOAT, [batch, 19, 6, 6])], [w3, w1])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, os.path.join(sys.argv[1], name + ".onnx"))
s = ort.InferenceSession(os.path.join(sys.argv[1], "dynamic.onnx"), providers=["CPUExecutionProvider"])
for k in (1, 2):
    x = rng.standard_normal((k, 3, 6, 6)).astype(np.float32)
    onnx.save_tensor(nh.from_array(x, "x"), os.path.join(sys.argv[1], f"x{k}.pb"))
    onnx.save_tensor(nh.from_array(s.run(None, {"x": x})[0], "y"), os.path.join(sys.argv[1], f"y{k}.pb"))
"#;

/// Concat's inputs are computed in their slots of the result (the dealloc
/// stage's write-into-destination): at batch 1 the memref IR has no copy
/// left, whichever kernel wrote an input (and a Concat of a Concat is one
/// buffer); with a dynamic batch the slots of flat writers are not
/// contiguous and those copies stay. Both run under valgrind and match
/// onnxruntime.
#[test]
fn concat_inputs_are_computed_in_their_slots() {
    let dir = fresh_dir("onnxc-concat-slots");
    python_into(&dir, CONCAT_MODEL);
    let text = memref_ir(&dir.join("static.onnx"));
    assert!(!text.contains("memref.copy"), "copies left:\n{text}");
    assert!(text.contains("memref.subview"), "{text}");
    for (model, batch) in [("static", 1), ("dynamic", 1), ("dynamic", 2)] {
        let outdir = dir.join(format!("{model}{batch}"));
        let input = dir.join(format!("x{batch}.pb"));
        let what = format!("{model} at batch {batch}");
        run_clean(&dir.join(format!("{model}.onnx")), &input, &outdir, &what);
        close(
            &outdir.join("output_0.pb"),
            &dir.join(format!("y{batch}.pb")),
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Python writing a Loop (M = INT64_MAX, three iterations) into argv[1]
/// whose scan rows come from a flat element-wise writer (Relu), the GEMM
/// (MatMul) and a Concat of two Unsqueezes, beside a state that is also
/// carried: `static.onnx` at batch 2, `dynamic.onnx` with a dynamic
/// batch; `xK.pb` inputs and onnxruntime's outputs `yK_J.pb`.
const LOOP_ROWS_MODEL: &str = r#"
import os, sys, numpy as np, onnx, onnxruntime as ort
from onnx import TensorProto as T, helper as h, numpy_helper as nh
rng = np.random.default_rng(3)
F, I, B = T.FLOAT, T.INT64, T.BOOL
w = nh.from_array(rng.standard_normal((16, 16)).astype(np.float32), "w")
w2 = nh.from_array(rng.standard_normal((16, 24)).astype(np.float32), "w2")
def body(batch):
    c = lambda n, v: h.make_node("Constant", [], [n], value=nh.from_array(np.array(v, np.int64)))
    nodes = [c("three", 3), h.make_node("Less", ["i", "three"], ["go"]),
             h.make_node("MatMul", ["h", "w"], ["hw"]), h.make_node("Tanh", ["hw"], ["h2"]),
             h.make_node("Relu", ["h2"], ["relu"]), h.make_node("MatMul", ["h2", "w2"], ["mm"]),
             c("zero", [0]), h.make_node("Sigmoid", ["h2"], ["sg"]), h.make_node("Neg", ["h2"], ["ng"]),
             h.make_node("Unsqueeze", ["sg", "zero"], ["u0"]), h.make_node("Unsqueeze", ["ng", "zero"], ["u1"]),
             h.make_node("Concat", ["u0", "u1"], ["pair"], axis=0)]
    vi = lambda n, t, s: h.make_tensor_value_info(n, t, s)
    return h.make_graph(nodes, "body", [vi("i", I, []), vi("c", B, []), vi("h", F, [batch, 16])],
                        [vi("go", B, []), vi("h2", F, [batch, 16]), vi("relu", F, [batch, 16]),
                         vi("mm", F, [batch, 24]), vi("pair", F, [2, batch, 16])])
for name, batch in [("static", 2), ("dynamic", "N")]:
    inits = [w, w2, nh.from_array(np.array(2**63 - 1, np.int64), "m"), nh.from_array(np.array(True), "c0")]
    loop = h.make_node("Loop", ["m", "c0", "x"], ["hT", "relus", "mms", "pairs"], body=body(batch), name="rows")
    vi = lambda n, s: h.make_tensor_value_info(n, F, s)
    g = h.make_graph([loop], name, [vi("x", [batch, 16])],
                     [vi("hT", [batch, 16]), vi("relus", None), vi("mms", None), vi("pairs", None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, os.path.join(sys.argv[1], name + ".onnx"))
s = ort.InferenceSession(os.path.join(sys.argv[1], "dynamic.onnx"), providers=["CPUExecutionProvider"])
for k in (0, 1, 3):
    x = rng.standard_normal((k, 16)).astype(np.float32)
    onnx.save_tensor(nh.from_array(x, "x"), os.path.join(sys.argv[1], f"x{k}.pb"))
    for j, y in enumerate(s.run(None, {"x": x})):
        onnx.save_tensor(nh.from_array(y), os.path.join(sys.argv[1], f"y{k}_{j}.pb"))
"#;

/// A Loop's scan rows are computed in their row of the growing buffer
/// (bufferize makes the row ready before the body computes the slice;
/// write-into-destination does the rest): no copy is left in the memref
/// IR, with a static or a dynamic batch, and the results match
/// onnxruntime under valgrind at batch 0, 1 and 3.
#[test]
fn loop_scan_rows_are_computed_in_their_rows() {
    let dir = fresh_dir("onnxc-loop-rows");
    python_into(&dir, LOOP_ROWS_MODEL);
    for model in ["static", "dynamic"] {
        let text = memref_ir(&dir.join(format!("{model}.onnx")));
        assert!(
            !text.contains("memref.copy"),
            "{model}: copies left:\n{text}"
        );
        assert!(text.contains("scf.while"), "{model}: {text}");
    }
    for batch in [0, 1, 3] {
        let outdir = dir.join(format!("out{batch}"));
        let input = dir.join(format!("x{batch}.pb"));
        let what = format!("batch {batch}");
        run_clean(&dir.join("dynamic.onnx"), &input, &outdir, &what);
        for j in 0..4 {
            close(
                &outdir.join(format!("output_{j}.pb")),
                &dir.join(format!("y{batch}_{j}.pb")),
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
