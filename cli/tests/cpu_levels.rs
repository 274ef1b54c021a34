//! One library for every x86-64 CPU (docs/ARCHITECTURE.md, "CPU
//! levels"): the portable build carries the GEMM family and the vector
//! kernels for x86-64-v2, v3 and v4 (the int8 ones also for AVX512-VNNI)
//! and picks the running CPU's. Each
//! level, forced down with ONNXC_CPU_LEVEL, matches onnxruntime; under
//! valgrind (which has no AVX-512) the detected level is what runs; the
//! header records the variants; `--target-cpu` pins one.

// Test helpers outside #[test] fns panic on failure by design.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::Command;
use testsuite::zoo::{ok, onnxc, rel_diff};

const SUITE: &str = "cpu_levels";

fn zoo_with_oracle(name: &str) -> Case {
    testsuite::zoo::zoo_with_oracle(SUITE, name)
}

/// A model, its inputs and onnxruntime's outputs for them.
type Case = (PathBuf, Vec<PathBuf>, PathBuf);

/// `onnxc run --target-cpu CPU [extra]` of the case at x86-64 level
/// `level` (ONNXC_CPU_LEVEL) and one thread, against onnxruntime.
fn assert_matches(cpu: &str, level: &str, case: &Case, extra: &[&str]) {
    assert_within(cpu, level, case, extra, 1e-4);
}

/// [`assert_matches`] with the largest difference allowed, relative to
/// the largest output.
fn assert_within(cpu: &str, level: &str, (model, ins, ort): &Case, extra: &[&str], tol: f64) {
    let out = ort.with_file_name(format!("{cpu}-{level}{}", extra.concat()));
    let mut cmd = onnxc();
    cmd.arg("run")
        .arg(model)
        .args(["--target-cpu", cpu])
        .args(extra)
        .arg("--output-dir")
        .arg(&out);
    for i in ins {
        cmd.arg("--input").arg(i);
    }
    ok(cmd
        .env("ONNXC_CPU_LEVEL", level)
        .env("ONNXC_NUM_THREADS", "1"));
    let d = rel_diff(&out, ort);
    assert!(
        d <= tol,
        "{model:?} {cpu} {extra:?} at level {level}: {d:e}"
    );
}

/// A directory of `workdir` where `script` (Python after [`PRELUDE`],
/// the directory in `d`) wrote a model and its inputs.
fn generated(name: &str, script: &str) -> PathBuf {
    let dir = testsuite::zoo::workdir(SUITE, name);
    let script = format!("{PRELUDE}{script}");
    ok(Command::new("python3").args(["-c", &script]).arg(&dir));
    dir
}

const PRELUDE: &str = "import sys, numpy as np, onnx
from onnx import helper, numpy_helper as nh, TensorProto as T
d = sys.argv[1]
rng = np.random.default_rng(0)
";

#[test]
fn portable_code_matches_onnxruntime_at_every_level() {
    // GEMM and Conv (packed weights, bias, ReLU, residual), depthwise
    // convolutions and pooling, attention, LayerNorm and GELU.
    for name in ["mlp", "cnn", "mobilenetv2", "bert-tiny"] {
        let case = zoo_with_oracle(name);
        for level in ["2", "3", "4"] {
            assert_matches("portable", level, &case, &[]);
        }
    }
}

/// A 3×3 convolution (64 channels, Winograd's path) on a 7×7 image, the
/// shape of ResNet-50's last stage, whose padding column the AVX2 build
/// once read from the next row: at every level, and pinned to x86-64-v3.
#[test]
fn winograd_on_an_odd_image_matches_onnxruntime_at_every_level() {
    let dir = generated(
        "winograd7",
        r#"
w = (rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32)
node = helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", T.FLOAT, [1, 64, 7, 7])],
                      [helper.make_tensor_value_info("y", T.FLOAT, [1, 64, 7, 7])], [nh.from_array(w, "w")])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), d + "/model.onnx")
x = rng.standard_normal((1, 64, 7, 7)).astype(np.float32)
open(d + "/x.pb", "wb").write(nh.from_array(x, "x").SerializeToString())
"#,
    );
    let model = dir.join("model.onnx");
    let ins = vec![dir.join("x.pb")];
    let ort = testsuite::zoo::ort_outputs(&model, &ins);
    let case = (model, ins, ort);
    for level in ["2", "3", "4"] {
        assert_matches("portable", level, &case, &[]);
    }
    assert_matches("x86-64-v3", "9", &case, &[]);
}

/// Integer convolution and matrix product (i32 outputs, exact): bytes at
/// both ends of their ranges, a depth that is not a multiple of 4, zero
/// points that need the row sums. Levels 2–4 take the kernels without
/// VNNI (bytes widened to i16 pairs), level 5 `vpdpbusd` where the CPU
/// has AVX512-VNNI (elsewhere the cap leaves the CPU's own level).
#[test]
fn int8_kernels_match_onnxruntime_exactly_at_every_level() {
    let dir = generated(
        "int8",
        r#"
w = rng.integers(-128, 128, (8, 3, 3, 3), dtype=np.int8)
w[0] = -128
bm = rng.integers(-128, 128, (37, 20), dtype=np.int8)
inits = [nh.from_array(w, "w"), nh.from_array(bm, "bm"),
         nh.from_array(np.array(7, np.uint8), "xz"), nh.from_array(np.array(-5, np.int8), "az"),
         nh.from_array(np.array(3, np.int8), "bz")]
nodes = [helper.make_node("ConvInteger", ["x", "w", "xz"], ["y"], pads=[1, 1, 1, 1]),
         helper.make_node("MatMulInteger", ["a", "bm", "az", "bz"], ["z"])]
g = helper.make_graph(nodes, "g",
    [helper.make_tensor_value_info("x", T.UINT8, [1, 3, 9, 9]), helper.make_tensor_value_info("a", T.INT8, [5, 37])],
    [helper.make_tensor_value_info("y", T.INT32, [1, 8, 9, 9]), helper.make_tensor_value_info("z", T.INT32, [5, 20])], inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), d + "/model.onnx")
x = rng.integers(0, 256, (1, 3, 9, 9), dtype=np.uint8)
x[0, :, 0, :] = 255
a = rng.integers(-128, 128, (5, 37), dtype=np.int8)
a[0] = -128
open(d + "/x.pb", "wb").write(nh.from_array(x, "x").SerializeToString())
open(d + "/a.pb", "wb").write(nh.from_array(a, "a").SerializeToString())
"#,
    );
    let model = dir.join("model.onnx");
    let ins = vec![dir.join("x.pb"), dir.join("a.pb")];
    // The portable build's int8 kernels: a VNNI variant at 512 bits
    // beside the generic one, and the header says so.
    let ll = ok(onnxc().arg("compile").arg(&model));
    let ll = String::from_utf8(ll).unwrap();
    assert!(ll.contains("\"target-cpu\"=\"cascadelake\""));
    assert!(ll.contains("@llvm.x86.avx512.vpdpbusd.512"));
    let lib = dir.join("lib/libm.so");
    ok(onnxc()
        .arg("compile")
        .arg(&model)
        .args(["--emit", "lib", "-o"])
        .arg(&lib));
    let header = std::fs::read_to_string(dir.join("lib/m.h")).unwrap();
    assert!(header.contains("#define M_X86_LEVELS \"x86-64-v2 x86-64-v3 x86-64-v4 cascadelake\""));
    let ort = testsuite::zoo::ort_outputs(&model, &ins);
    let case = (model, ins, ort);
    for level in ["2", "3", "4", "5"] {
        assert_within("portable", level, &case, &[], 0.0);
    }
    assert_within("x86-64-v3", "9", &case, &[], 0.0);
}

#[test]
fn under_valgrind_the_level_the_cpu_has_runs() {
    // valgrind has no AVX-512: a v4 variant picked from the host's cpuid
    // would be an illegal instruction. Level 2 is checked under memcheck too.
    let case = zoo_with_oracle("cnn");
    for level in ["2", "9"] {
        assert_matches("portable", level, &case, &["--valgrind"]);
    }
}

#[test]
fn the_portable_build_carries_every_level_and_target_cpu_pins_one() {
    // The header's record of the levels is checked by threads.rs.
    let dir = testsuite::zoo::workdir(SUITE, "header");
    let model = dir.join("cnn.onnx");
    ok(onnxc().args(["zoo", "gen", "cnn", "-o"]).arg(&model));
    let ll = |extra: &[&str]| {
        let text = ok(onnxc().arg("compile").arg(&model).args(extra));
        String::from_utf8(text).unwrap()
    };
    let portable = ll(&[]);
    for cpu in ["x86-64-v3", "x86-64-v4"] {
        assert!(
            portable.contains(&format!("\"target-cpu\"=\"{cpu}\"")),
            "{cpu}"
        );
    }
    assert!(portable.contains("define linkonce_odr hidden i64 @__onnxc_cpu_level()"));
    assert_eq!(portable, ll(&["--target-cpu", "portable"]));
    let pinned = ll(&["--target-cpu", "x86-64-v3"]);
    assert!(!pinned.contains("\"target-cpu\"") && !pinned.contains("__onnxc_cpu_level"));
    // A float model has no int8 kernels, so no VNNI level.
    assert!(!portable.contains("cascadelake"));
}
