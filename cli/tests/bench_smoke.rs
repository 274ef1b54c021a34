//! CI smoke test of `onnxc bench`: one small zoo model, every output format,
//! the compiled model built and run, peers run or reported missing.

// Test helpers outside #[test] fns panic on failure by design.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

fn num(v: &serde_json::Value, path: &[&str]) -> f64 {
    let mut cur = v;
    for k in path {
        cur = &cur[*k];
    }
    cur.as_f64()
        .unwrap_or_else(|| panic!("{path:?} is not a number in {v}"))
}

#[test]
fn bench_mlp_writes_json_md_svg() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-smoke");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (json, md, svg) = (dir.join("b.json"), dir.join("b.md"), dir.join("b.svg"));
    let work = dir.join("work");
    let out = Command::new(env!("CARGO_BIN_EXE_onnxc"))
        .args([
            "bench", "--zoo", "mlp", "--peers", "--repeat", "2", "--runs", "2",
        ])
        // The model is also run under valgrind below, which has no AVX-512
        // (bench builds for the native CPU by default).
        .args(["--target-cpu", "x86-64-v3"])
        .arg("--work-dir")
        .arg(&work)
        .arg("--json")
        .arg(&json)
        .arg("--md")
        .arg(&md)
        .arg("--svg")
        .arg(&svg)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");

    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["tool"], "onnxc bench");
    assert!(num(&v, &["machine", "cpus"]) >= 1.0);
    assert!(num(&v, &["machine", "rss_floor_kib"]) > 1000.0);
    assert_eq!(v["repeat"], 2);
    let models = v["models"].as_array().unwrap();
    assert_eq!(models.len(), 1);
    let m = &models[0];
    assert_eq!(m["name"], "mlp");
    assert_eq!(m["onnx_nodes"], 9);

    let tools = m["tools"].as_array().unwrap();
    let tool = |name: &str| {
        tools
            .iter()
            .find(|t| t["tool"] == name)
            .unwrap_or_else(|| panic!("no {name} row in {m}"))
    };
    // onnxc compiles mlp end to end, and clang is a test dependency.
    for name in ["onnxc compile", "onnxc fold", "clang build", "inference"] {
        let t = tool(name);
        assert_eq!(t["status"], "ok", "{t}");
        assert_eq!(num(t, &["wall_s", "n"]), 2.0, "{t}");
        let (lo, med, hi) = (
            num(t, &["wall_s", "min"]),
            num(t, &["wall_s", "median"]),
            num(t, &["wall_s", "max"]),
        );
        assert!(0.0 < lo && lo <= med && med <= hi, "{t}");
        assert!(num(t, &["peak_rss_kib", "median"]) > 1000.0, "{t}");
        // The probe measured the process's own peak, not ru_maxrss.
        assert_eq!(t["rss_own"], true, "{t}");
    }
    // The compiled mlp is a small C program: a few MiB resident, whatever
    // the bench's own peak.
    let infer = tool("inference");
    assert!(
        num(infer, &["peak_rss_kib", "max"]) < 8.0 * 1024.0,
        "{infer}"
    );
    // Its heap: the activations and the driver's buffers, counted by the
    // probe; valgrind must count the same allocations in the same calls.
    let heap = num(infer, &["peak_heap_bytes", "median"]);
    assert!((1000.0..1e6).contains(&heap), "{infer}");
    let allocs = num(infer, &["allocations", "median"]);
    assert_eq!(allocs, valgrind_allocs(&work.join("0-mlp")), "{infer}");
    // Time per call of the compiled model (ONNXC_REPEAT=--runs in each
    // of the --repeat processes) and of onnxruntime on the same inputs, at
    // the default threads and at one.
    for name in [
        "inference",
        "inference, 1 thread",
        "onnxruntime inference",
        "onnxruntime inference, 1 thread",
    ] {
        let t = tool(name);
        assert_eq!(t["status"], "ok", "{t}");
        let calls = num(t, &["inner_s", "n"]);
        assert_eq!(calls, 4.0, "2 processes × 2 calls: {t}");
        let per_call = num(t, &["inner_s", "median"]);
        assert!(
            0.0 < per_call && per_call < num(t, &["wall_s", "max"]),
            "{t}"
        );
        assert_eq!(t["rss_own"], true, "the probe measured it: {t}");
    }
    for pair in ["1 thread", "default threads"] {
        let g = &v["inference_vs_onnxruntime"][pair];
        assert_eq!(g["models"], 1, "{g}");
        assert!(num(g, &["geomean_ratio"]) > 0.0, "{g}");
    }
    // mlp's Transpose and bias Add fold away.
    assert!(num(tool("onnxc fold"), &["onnx_nodes_after"]) < 9.0);
    for peer in ["onnxruntime", "onnxsim"] {
        let t = tool(peer);
        let status = t["status"].as_str().unwrap();
        assert!(status == "ok" || status == "missing", "{t}");
        if status == "ok" {
            assert!(num(t, &["inner_s", "median"]) > 0.0, "{t}");
        } else {
            assert!(!t["message"].as_str().unwrap().is_empty(), "{t}");
        }
    }

    // onnxruntime is a test dependency: the compiled mlp must match it.
    assert_eq!(m["accuracy"]["status"], "ok", "{m}");
    assert!(num(m, &["accuracy", "rel_to_scale"]) < 1e-3);

    let c = &m["compile"];
    assert!(num(c, &["constprop_s", "median"]) > 0.0);
    assert_eq!(num(c, &["nodes_before_fold", "ops"]), 17.0, "{c}");
    assert!(num(c, &["nodes_after_fold", "ops"]) < 17.0, "{c}");
    assert!(num(c, &["llvm_ir_bytes"]) > 10_000.0);
    // mlp's weight matrices go to the .incbin sidecar.
    assert!(num(c, &["sidecar_bytes"]) > 40_000.0, "{c}");
    let passes = c["passes"].as_array().unwrap();
    assert!(passes.iter().any(|p| p["pass"] == "constprop"), "{c}");
    let live = c["live_constant_bytes"].as_array().unwrap();
    assert_eq!(live.len(), passes.len() + 1, "import + one per pass");
    assert!(
        num(&live[0], &["bytes"]) > 40_000.0,
        "mlp holds ~50 KB of weights"
    );
    let ir = c["ir_bytes"].as_array().unwrap();
    assert!(ir.iter().any(|s| s["after"] == "import"), "{c}");

    let md = std::fs::read_to_string(&md).unwrap();
    assert!(
        md.contains("### mlp")
            && md.contains("| onnxc fold |")
            && md.contains("### Inference vs onnxruntime")
            && md.contains("| **geomean** |"),
        "{md}"
    );
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains(">mlp</text>"), "{svg}");
    for label in [
        "seconds (bar: median",
        "MiB (bar: median",
        "onnxruntime</text>",
        "Inference, time per call",
        "onnxruntime inference, 1 thread</text>",
    ] {
        assert!(svg.contains(label), "no {label} in {svg}");
    }
}

/// `onnxc bench --zoo mlp --repeat 1 --no-ir-sizes ARGS --json` in a fresh
/// `dir`: its stdout and the JSON report.
fn bench_mlp(dir: &Path, args: &[&str]) -> (String, serde_json::Value) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let json = dir.join("b.json");
    let out = Command::new(env!("CARGO_BIN_EXE_onnxc"))
        .args(["bench", "--zoo", "mlp", "--repeat", "1", "--no-ir-sizes"])
        .args(args)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (String::from_utf8_lossy(&out.stdout).into_owned(), v)
}

/// Without clang there is no probe: peak RSS falls back to ru_maxrss and
/// the report says so; the build is skipped, not failed.
#[test]
fn bench_without_clang_falls_back_to_ru_maxrss() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-no-clang");
    let (stdout, v) = bench_mlp(&dir, &["--llvm-bin", &dir.display().to_string()]);
    assert!(
        stdout.contains("Peak RSS from ru_maxrss (no probe"),
        "{stdout}"
    );
    let tools = v["models"][0]["tools"].as_array().unwrap();
    let compile = &tools[0];
    assert_eq!(compile["tool"], "onnxc compile");
    assert_eq!(compile["status"], "ok");
    assert_eq!(compile["rss_own"], false);
    let build = tools.iter().find(|t| t["tool"] == "clang build").unwrap();
    assert_eq!(build["status"], "skipped", "{build}");
    assert_eq!(build["message"], "clang not found");
}

/// Allocations of the compiled model's run per valgrind's heap summary.
fn valgrind_allocs(dir: &Path) -> f64 {
    // As the bench ran it: `--runs 2` more calls after the written one.
    let out = Command::new("valgrind")
        .env("ONNXC_REPEAT", "2")
        .arg(dir.join("model"))
        .arg(dir.join("in_0.bin"))
        .arg(dir.join("out_0.bin"))
        .output()
        .expect("valgrind is a test dependency (scripts/setup-test-deps.sh)");
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.contains("total heap usage:"))
        .unwrap_or_else(|| panic!("no heap summary in {err}"));
    let n = line
        .split("total heap usage:")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .unwrap_or_else(|| panic!("{line}"));
    n.replace(',', "").parse().unwrap()
}

/// A model file with dynamic dims: `--input-shape` fixes them for the
/// compile, the fold and the sample inputs; a name that is not an input is
/// a usage error before any work.
#[test]
fn bench_input_shape_specializes_a_model_file() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-input-shape");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let model = dir.join("conv.onnx");
    let script = r#"
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto
w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
g = helper.make_graph(
    [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
     helper.make_node("Relu", ["c"], ["y"])],
    "g",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, "H", "W"])],
    [w],
)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, sys.argv[1])
"#;
    let py = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let made = Command::new(py)
        .args(["-c", script])
        .arg(&model)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let (json, work) = (dir.join("b.json"), dir.join("work"));
    let bench = |shape: &str| {
        Command::new(env!("CARGO_BIN_EXE_onnxc"))
            .arg("bench")
            .arg(&model)
            .args(["--input-shape", shape, "--repeat", "1", "--runs", "2"])
            .args(["--no-ir-sizes", "--target-cpu", "x86-64-v3"])
            .arg("--work-dir")
            .arg(&work)
            .arg("--json")
            .arg(&json)
            .output()
            .unwrap()
    };
    let out = bench("x=2x3x17x19");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let m = &v["models"][0];
    for t in m["tools"].as_array().unwrap() {
        let name = t["tool"].as_str().unwrap();
        if name != "onnxruntime" && name != "onnxsim" {
            assert_eq!(t["status"], "ok", "{t}");
        }
    }
    assert_eq!(m["accuracy"]["status"], "ok", "{m}");
    // The sample input has the given dims (f32), and so has the folded
    // model's input.
    let input = std::fs::metadata(work.join("0-conv/in_0.bin"))
        .unwrap()
        .len();
    assert_eq!(input, 2 * 3 * 17 * 19 * 4);
    let dims = Command::new(std::env::var("PYTHON").unwrap_or_else(|_| "python3".into()))
        .args(["-c", "import onnx, sys; t = onnx.load(sys.argv[1]).graph.input[0].type.tensor_type; print([d.dim_value for d in t.shape.dim])"])
        .arg(work.join("0-conv/onnxc.onnx"))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&dims.stdout).trim(),
        "[2, 3, 17, 19]"
    );

    let out = bench("nope=1x3x8x8");
    assert_eq!(out.status.code(), Some(2), "a usage error");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("'nope'") && err.contains("not an input"),
        "{err}"
    );
}

/// `--scaling`: a row per family and size, with time per node.
#[test]
fn bench_scaling_table() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-scaling");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let md = dir.join("s.md");
    let out = Command::new(env!("CARGO_BIN_EXE_onnxc"))
        .args([
            "bench",
            "--scaling",
            "--scaling-sizes",
            "100,300",
            "--repeat",
            "1",
        ])
        .arg("--md")
        .arg(&md)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&md).unwrap();
    for row in [
        "| chain | 100 |",
        "| chain | 300 |",
        "| transformer | 99 |",
        "| transformer | 295 |",
    ] {
        assert!(text.contains(row), "{row} missing:\n{text}");
    }
    assert!(text.contains("µs/node"), "{text}");
}

/// `--busy-core` times the inference runs with another process keeping a
/// core busy, says so in the report, and leaves no such process behind.
#[test]
fn bench_busy_core_is_recorded_and_cleaned_up() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-busy");
    let (stdout, v) = bench_mlp(&dir, &["--runs", "2", "--no-check", "--busy-core"]);
    assert!(stdout.contains("one core kept busy"), "{stdout}");
    assert_eq!(v["machine"]["busy_core"], true);
    let tools = v["models"][0]["tools"].as_array().unwrap();
    for name in ["inference", "inference, 1 thread"] {
        let t = tools.iter().find(|t| t["tool"] == name).unwrap();
        assert_eq!(t["status"], "ok", "{t}");
    }
    let busy_left = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .any(|c| String::from_utf8_lossy(&c).contains("while :; do :; done"));
    assert!(!busy_left, "a busy process is left behind");
}
