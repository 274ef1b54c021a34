//! CI smoke test of `onnxc bench`: one small zoo model, every output format,
//! the compiled model built and run, peers run or reported missing.

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
    let out = Command::new(env!("CARGO_BIN_EXE_onnxc"))
        .args([
            "bench", "--zoo", "mlp", "--peers", "--repeat", "2", "--runs", "2",
        ])
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
        md.contains("### mlp") && md.contains("| onnxc fold |"),
        "{md}"
    );
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains(">mlp</text>"), "{svg}");
}
