//! One library for every x86-64 CPU (docs/ARCHITECTURE.md, "CPU
//! levels"): the portable build carries the GEMM family and the vector
//! kernels for x86-64-v2, v3 and v4 and picks the running CPU's. Each
//! level, forced down with ONNXC_CPU_LEVEL, matches onnxruntime; under
//! valgrind (which has no AVX-512) the detected level is what runs; the
//! header records the variants; `--target-cpu` pins one.

// Test helpers outside #[test] fns panic on failure by design.
#![allow(clippy::unwrap_used)]

mod zoo_common;

use std::path::{Path, PathBuf};
use std::process::Command;
use zoo_common::{ok, onnxc, rel_diff};

const SUITE: &str = "cpu_levels";

fn zoo_with_oracle(name: &str) -> (PathBuf, Vec<PathBuf>, PathBuf) {
    zoo_common::zoo_with_oracle(SUITE, name)
}

/// `onnxc run --target-cpu portable` of `model` into `out`.
fn run_portable(model: &Path, ins: &[PathBuf], out: &Path, extra: &[&str]) -> Command {
    let mut cmd = onnxc();
    cmd.arg("run")
        .arg(model)
        .args(["--target-cpu", "portable"])
        .args(extra)
        .arg("--output-dir")
        .arg(out);
    for i in ins {
        cmd.arg("--input").arg(i);
    }
    cmd
}

#[test]
fn portable_code_matches_onnxruntime_at_every_level() {
    // GEMM and Conv (packed weights, bias, ReLU, residual), depthwise
    // convolutions and pooling, attention, LayerNorm and GELU.
    for name in ["mlp", "cnn", "mobilenetv2", "bert-tiny"] {
        let (model, ins, ort) = zoo_with_oracle(name);
        let dir = model.parent().unwrap().to_path_buf();
        for level in ["2", "3", "4"] {
            let out = dir.join(format!("level{level}"));
            ok(run_portable(&model, &ins, &out, &[])
                .env("ONNXC_CPU_LEVEL", level)
                .env("ONNXC_NUM_THREADS", "1"));
            let d = rel_diff(&out, &ort);
            assert!(d < 1e-4, "{name} at x86-64 level {level}: {d:e}");
        }
    }
}

#[test]
fn under_valgrind_the_level_the_cpu_has_runs() {
    // valgrind has no AVX-512: a v4 variant picked from the host's cpuid
    // would be an illegal instruction. Level 2 is checked under memcheck too.
    let (model, ins, ort) = zoo_with_oracle("cnn");
    let dir = model.parent().unwrap().to_path_buf();
    for level in ["2", "9"] {
        let out = dir.join(format!("grind{level}"));
        ok(run_portable(&model, &ins, &out, &["--valgrind"])
            .env("ONNXC_CPU_LEVEL", level)
            .env("ONNXC_NUM_THREADS", "1"));
        let d = rel_diff(&out, &ort);
        assert!(d < 1e-4, "cnn under valgrind at level {level}: {d:e}");
    }
}

#[test]
fn the_portable_build_carries_every_level_and_target_cpu_pins_one() {
    // The header's record of the levels is checked by threads.rs.
    let dir = zoo_common::workdir(SUITE, "header");
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
}
