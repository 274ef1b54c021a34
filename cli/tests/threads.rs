//! Threads in the generated code (docs/ARCHITECTURE.md, "Parallel
//! loops"): zoo models at ONNXC_NUM_THREADS=1 and 2 against onnxruntime,
//! a library called from several threads at once (each call with its own
//! team) giving the single-threaded outputs bit for bit, also under
//! valgrind; `--threads 1` compiles serial code; the header records
//! `--target-cpu` and `--threads`.

// Test helpers outside #[test] fns panic on failure by design.
#![allow(clippy::unwrap_used)]

use std::process::Command;
use testsuite::zoo::{ok, onnxc, rel_diff};

fn workdir(name: &str) -> std::path::PathBuf {
    testsuite::zoo::workdir("threads", name)
}

#[test]
fn zoo_models_at_one_and_two_threads_match_onnxruntime() {
    for name in ["mlp", "cnn", "squeezenet", "bert-tiny"] {
        let (model, ins, ort) = testsuite::zoo::zoo_with_oracle("threads", name);
        let dir = model.parent().unwrap().to_path_buf();
        for threads in ["1", "2"] {
            let out = dir.join(format!("t{threads}"));
            let mut cmd = onnxc();
            cmd.arg("run").arg(&model).arg("--output-dir").arg(&out);
            for i in &ins {
                cmd.arg("--input").arg(i);
            }
            ok(cmd.env("ONNXC_NUM_THREADS", threads));
            let d = rel_diff(&out, &ort);
            assert!(d < 1e-4, "{name} at {threads} threads: {d:e}");
        }
    }
}

/// Calls `cnn_run` from 4 threads, 10 times each, and compares every
/// output with a first call's, bit for bit.
const CONCURRENT: &str = r#"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cnn.h"

static float *x, *ref;
static int64_t shape[8], count = 1, n_out = 1;
static int rank, iters;

static int once(float *into) {
  onnxc_tensor in = { x, shape, rank }, out[CNN_NUM_OUTPUTS];
  if (cnn_run(&in, out) != 0) return 1;
  memcpy(into, out[0].data, n_out * sizeof(float));
  cnn_free_outputs(out);
  return 0;
}

static void *work(void *arg) {
  float *got = malloc(n_out * sizeof(float));
  long bad = 0;
  for (int it = 0; it < iters; it++)
    bad += once(got) || memcmp(got, ref, n_out * sizeof(float)) != 0;
  free(got);
  return (void *)bad;
}

int main(int argc, char **argv) {
  int threads = atoi(argv[1]);
  iters = atoi(argv[2]);
  rank = cnn_input_rank(0);
  for (int d = 0; d < rank; d++) {
    shape[d] = cnn_input_shape(0)[d];
    count *= shape[d];
  }
  for (int d = 0; d < cnn_output_rank(0); d++) n_out *= cnn_output_shape(0)[d];
  x = malloc(count * sizeof *x);
  for (int64_t i = 0; i < count; i++) x[i] = (float)(i % 23) / 23.0f - 0.3f;
  ref = malloc(n_out * sizeof *ref);
  if (once(ref)) return 2;
  pthread_t t[16];
  for (int i = 0; i < threads; i++) pthread_create(&t[i], NULL, work, NULL);
  long bad = 0;
  for (int i = 0; i < threads; i++) {
    void *r;
    pthread_join(t[i], &r);
    bad += (long)r;
  }
  printf("%ld mismatches\n", bad);
  free(x);
  free(ref);
  return bad != 0;
}
"#;

#[test]
fn library_called_from_several_threads_at_once() {
    let dir = workdir("concurrent");
    let model = dir.join("cnn.onnx");
    ok(onnxc().args(["zoo", "gen", "cnn", "-o"]).arg(&model));
    let lib = dir.join("libcnn.so");
    ok(onnxc()
        .arg("compile")
        .arg(&model)
        .args(["--emit", "lib", "-o"])
        .arg(&lib));
    let header = std::fs::read_to_string(dir.join("cnn.h")).unwrap();
    assert!(
        header.contains("#define CNN_TARGET_CPU \"x86-64-v2\""),
        "{header}"
    );
    // The portable default: every x86-64 level's kernels (cpu_levels.rs).
    assert!(
        header.contains("#define CNN_X86_LEVELS \"x86-64-v2 x86-64-v3 x86-64-v4\""),
        "{header}"
    );
    assert!(header.contains("#define CNN_THREADS 0"), "{header}");
    std::fs::write(dir.join("main.c"), CONCURRENT).unwrap();
    let exe = dir.join("main");
    ok(Command::new("/usr/lib/llvm-19/bin/clang")
        .arg(dir.join("main.c"))
        .arg("-I")
        .arg(&dir)
        .arg("-L")
        .arg(&dir)
        .args(["-lcnn", "-lpthread", "-Wl,-rpath,$ORIGIN", "-o"])
        .arg(&exe));
    for team in ["1", "2", "3"] {
        let out = ok(Command::new(&exe)
            .args(["4", "10"])
            .env("ONNXC_NUM_THREADS", team));
        assert_eq!(String::from_utf8_lossy(&out), "0 mismatches\n");
    }
    // memcheck over two callers with teams of two.
    let out = ok(Command::new("valgrind")
        .args([
            "--quiet",
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect,possible",
            concat!(
                "--suppressions=",
                env!("CARGO_MANIFEST_DIR"),
                "/../scripts/valgrind-gomp.supp"
            ),
        ])
        .arg(&exe)
        .args(["2", "2"])
        .env("ONNXC_NUM_THREADS", "2"));
    assert_eq!(String::from_utf8_lossy(&out), "0 mismatches\n");
}

#[test]
fn one_thread_compiles_serial_code_and_the_choice_is_recorded() {
    let dir = workdir("serial");
    let model = dir.join("cnn.onnx");
    ok(onnxc().args(["zoo", "gen", "cnn", "-o"]).arg(&model));
    let ll = |extra: &[&str]| {
        let text = ok(onnxc().arg("compile").arg(&model).args(extra));
        String::from_utf8(text).unwrap()
    };
    let serial = ll(&["--threads", "1"]);
    assert!(!serial.contains("GOMP_parallel"));
    assert!(!serial.contains("__onnxc_team"));
    let three = ll(&["--threads", "3"]);
    assert!(three.contains("call void @GOMP_parallel_loop_dynamic("));
    assert!(
        three.contains("@__onnxc_team(i64 %"),
        "team size from the trip count"
    );
    assert!(three.contains(", i32 3)"), "the compiled default");
    // The vector width follows the CPU: 4 f32 lanes for x86-64-v2, 8 for
    // v3 (the GEMM's name carries it; Winograd's transforms also read a
    // row of input as two vectors' worth).
    let v2 = ll(&["--target-cpu", "x86-64-v2"]);
    let v3 = ll(&["--target-cpu", "x86-64-v3"]);
    assert!(v2.contains("@__onnxc_gemm_f32_v4_") && !v2.contains("@__onnxc_gemm_f32_v8_"));
    assert!(v2.contains("<4 x float>") && !v2.contains("<16 x float>"));
    assert!(v3.contains("@__onnxc_gemm_f32_v8_") && v3.contains("<8 x float>"));
    let bad = onnxc()
        .arg("compile")
        .arg(&model)
        .args(["--target-cpu", "no-such-cpu"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no-such-cpu"));
}
