#![allow(clippy::expect_used, clippy::unwrap_used)]
//! `onnxc compile A B DIR/ --out-dir OUT -j N`: byte-identical artifacts
//! whatever -j (and equal to single compiles), a failing model does not
//! stop the others, the summary table, atomic outputs under SIGKILL, and
//! the same batch through a daemon.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use testsuite::daemon::*;

fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    if !dir.exists() {
        return out;
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                // A running batch renames its temporary files into place: one
                // listed a moment ago may be gone (polled while compiling).
                match std::fs::read(&p) {
                    Ok(bytes) => {
                        out.insert(rel, bytes);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => panic!("{}: {e}", p.display()),
                }
            }
        }
    }
    out
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn parallel_batch_is_deterministic_and_survives_failures() {
    let dir = workdir("batch");
    let models = dir.join("models");
    std::fs::create_dir_all(models.join("sub")).unwrap();
    gen(&models, "mlp", 1, "a.onnx");
    gen(&models, "cnn", 2, "b.onnx");
    gen(&models, "mlp", 3, "sub/c.onnx");
    let extra = gen(&dir, "cnn", 4, "d.onnx");
    let full = std::fs::read(&extra).unwrap();
    let bad = dir.join("bad.onnx");
    std::fs::write(&bad, &full[..full.len() / 2]).unwrap();

    // The same output directory each time: LLVM IR names its weights
    // sidecar by absolute path.
    let out = dir.join("out");
    let mut trees = Vec::new();
    for jobs in ["1", "2", "4"] {
        let _ = std::fs::remove_dir_all(&out);
        let o = onnxc(&[
            "compile",
            s(&models),
            s(&extra),
            s(&bad),
            "--out-dir",
            s(&out),
            "-j",
            jobs,
        ]);
        assert_eq!(
            o.status.code(),
            Some(1),
            "a failed model makes the batch fail"
        );
        let stdout = String::from_utf8_lossy(&o.stdout);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stdout.contains("5 models: 4 ok, 1 failed"), "{stdout}");
        assert!(
            stdout.contains("peak mem") && stdout.contains("MiB"),
            "{stdout}"
        );
        let bad_row = stdout.lines().find(|l| l.starts_with(s(&bad))).unwrap();
        assert!(bad_row.contains("FAILED"), "{stdout}");
        assert!(
            stderr.contains("malformed ONNX protobuf"),
            "diagnostic shown: {stderr}"
        );
        assert!(
            stderr.contains("[5/5]"),
            "plain progress lines when not a TTY: {stderr}"
        );
        trees.push(tree(&out));
    }
    let names: Vec<&String> = trees[0].keys().filter(|n| n.ends_with(".ll")).collect();
    assert_eq!(
        names,
        ["a.ll", "b.ll", "d.ll", "sub/c.ll"],
        "no artifact for the failure"
    );
    assert!(
        trees[0].keys().all(|n| !n.contains(".tmp")),
        "no temp files left"
    );
    assert!(
        trees[0] == trees[1],
        "-j 1 and -j 2 give byte-identical artifacts"
    );
    assert!(
        trees[0] == trees[2],
        "-j 1 and -j 4 give byte-identical artifacts"
    );
    // Each equals a single compile to the same place.
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(out.join("sub")).unwrap();
    for (name, model) in [
        ("a", models.join("a.onnx")),
        ("sub/c", models.join("sub/c.onnx")),
        ("d", extra.clone()),
    ] {
        onnxc_ok(&[
            "compile",
            s(&model),
            "-o",
            s(&out.join(format!("{name}.ll"))),
        ]);
    }
    let single = tree(&out);
    for (name, bytes) in &single {
        assert!(trees[0][name] == *bytes, "{name} equals a single compile");
    }

    // Flags reach every model: --emit picks the kind and the extension.
    let out = dir.join("out-ir");
    let o = onnxc(&[
        "compile",
        s(&models),
        "--out-dir",
        s(&out),
        "--emit",
        "onnx-ir",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t = tree(&out);
    assert!(t["a.onnx.mlir"] == reference(&models.join("a.onnx"), "onnx-ir"));

    // Usage errors.
    let o = onnxc(&["compile", s(&extra), s(&bad), "-o", s(&dir.join("x.ll"))]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--out-dir"));
    let o = onnxc(&[
        "compile",
        s(&extra),
        s(&models.join("../d.onnx")),
        "--out-dir",
        s(&out),
    ]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("would both be written"));
}

#[test]
fn killed_batch_leaves_no_truncated_artifact() {
    use std::os::unix::process::CommandExt;
    let dir = workdir("batch-kill");
    let models = dir.join("models");
    std::fs::create_dir_all(&models).unwrap();
    for i in 0..12u64 {
        gen(
            &models,
            if i % 2 == 0 { "cnn" } else { "mlp" },
            i,
            &format!("m{i:02}.onnx"),
        );
    }
    let out = dir.join("out");
    let mut child = Command::new(onnxc_bin())
        .args([
            "compile",
            s(&models),
            "--out-dir",
            s(&out),
            "-j",
            "2",
            "-q",
            "--emit",
            "memref",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    // Kill the whole process group (parent and compiling children) once
    // the first artifacts appear.
    let start = std::time::Instant::now();
    while tree(&out.clone()).len() < 2 && start.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let pgid = child.id().to_string();
    Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .status()
        .unwrap();
    let _ = child.wait();
    std::thread::sleep(std::time::Duration::from_millis(100));
    let t = tree(&out);
    assert!(!t.is_empty());
    for (name, bytes) in &t {
        if name.starts_with('.') {
            continue; // a temp file of an interrupted write: never an artifact
        }
        let model = models.join(name.replace(".mlir", ".onnx"));
        assert!(*bytes == reference(&model, "memref"), "{name} is complete");
    }
}

#[test]
fn batch_through_a_daemon() {
    let dir = workdir("batch-daemon");
    let models = dir.join("models");
    std::fs::create_dir_all(&models).unwrap();
    for i in 0..4u64 {
        gen(
            &models,
            if i % 2 == 0 { "mlp" } else { "cnn" },
            70 + i,
            &format!("m{i}.onnx"),
        );
    }
    let d = Daemon::start(&dir, &[]);
    let local = dir.join("local");
    let remote = dir.join("remote");
    let o = onnxc(&[
        "compile",
        s(&models),
        "--out-dir",
        s(&local),
        "--emit",
        "memref",
        "-q",
    ]);
    assert!(o.status.success());
    let o = onnxc(&[
        "compile",
        s(&models),
        "--out-dir",
        s(&remote),
        "--emit",
        "memref",
        "--daemon",
        &d.addr,
        "-j",
        "3",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        tree(&local),
        tree(&remote),
        "daemon artifacts equal local ones"
    );
    // Single-model forwarding, and the client subcommand.
    let one = dir.join("one.mlir");
    let o = onnxc(&[
        "compile",
        s(&models.join("m1.onnx")),
        "--emit",
        "memref",
        "--daemon",
        &d.addr,
        "-o",
        s(&one),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&one).unwrap(), tree(&local)["m1.mlir"]);
    let o = onnxc(&[
        "client",
        "--connect",
        &d.addr,
        "fold",
        s(&models.join("m0.onnx")),
        "--by-path",
        "-o",
        s(&dir.join("f.onnx")),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Same folded graph and weights as `onnxc fold` (which streams its
    // output, so the protobuf byte layout may differ): compare the IR.
    let reference_fold = dir.join("ref-fold.onnx");
    onnxc_ok(&["fold", s(&models.join("m0.onnx")), "-o", s(&reference_fold)]);
    let ir = |p: &Path| onnxc_ok(&["compile", s(p), "--emit", "onnx-ir"]);
    assert!(
        ir(&dir.join("f.onnx")) == ir(&reference_fold),
        "daemon fold = onnxc fold"
    );
    let stats = onnxc(&["client", "--connect", &d.addr, "stats"]);
    let v: serde_json::Value = serde_json::from_slice(&stats.stdout).unwrap();
    assert!(v["stats"]["cache"]["hits"].as_u64().unwrap() >= 1, "{v}");
}
