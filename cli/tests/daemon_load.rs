#![allow(clippy::expect_used, clippy::unwrap_used)]
//! 8 concurrent clients × 50 requests against one daemon, mixing valid
//! models (by path and inline), cache hits, malformed JSON, truncated
//! models and paths outside the root: every request gets the right answer
//! and the daemon stays up. Plus the refusals and limits one by one.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use testsuite::daemon::*;

#[test]
fn concurrent_clients_mixed_requests() {
    let dir = workdir("load");
    let mut refs: HashMap<(String, &str), Vec<u8>> = HashMap::new();
    let mut models = Vec::new();
    for (i, name) in ["mlp", "cnn", "mlp", "cnn"].iter().enumerate() {
        let file = format!("m{i}.onnx");
        let p = gen(&dir, name, 10 + i as u64, &file);
        for emit in ["memref", "onnx-ir", "llvm"] {
            refs.insert((file.clone(), emit), reference(&p, emit));
        }
        models.push(file);
    }
    let full = std::fs::read(dir.join(&models[0])).unwrap();
    std::fs::write(dir.join("trunc.onnx"), &full[..full.len() / 3]).unwrap();
    let outside = dir.parent().unwrap().join("outside-load.onnx");
    std::fs::write(&outside, &full).unwrap();
    let d = Daemon::start(&dir, &["--workers", "2", "--queue", "16"]);
    let refs = Arc::new(refs);
    let models = Arc::new(models);
    let inline = Arc::new(b64(&std::fs::read(dir.join(&models[1])).unwrap()));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (refs, models, inline) = (refs.clone(), models.clone(), inline.clone());
            let socket = d.socket.clone();
            let outside = outside.clone();
            std::thread::spawn(move || {
                let mut c = Conn::unix(&socket);
                let (mut hits, mut truncated) = (0, 0);
                for n in 0..50usize {
                    let id = format!("{t}-{n}");
                    let emits = ["memref", "onnx-ir", "llvm"];
                    match (t + n) % 6 {
                        0..=2 => {
                            let file = &models[(t * 7 + n) % models.len()];
                            let emit = emits[(t + n / 3) % 3];
                            let r = c.call(&json!({"id": id, "op": "compile", "model_path": file, "emit": emit}));
                            assert_eq!(r["status"], "ok", "{r:.400}");
                            assert_eq!(r["id"], id);
                            assert!(&artifact(&r) == refs.get(&(file.clone(), emit)).unwrap(), "{id}: wrong artifact");
                            hits += usize::from(r["cache"] == "hit");
                        }
                        3 => {
                            let r = c.call(&json!({"id": id, "op": "compile", "model_base64": *inline, "emit": "memref"}));
                            assert_eq!(r["status"], "ok", "{r:.400}");
                            assert!(&artifact(&r) == refs.get(&(models[1].clone(), "memref")).unwrap());
                        }
                        4 => {
                            let bad = ["{\"id\": 1, \"op\": ", "not json at all", "{\"id\":\"x\",\"op\":\"compile\",\"model_path\":3}", "[1,2]"][n % 4];
                            let r = c.call_raw(bad);
                            assert_eq!(r["status"], "error", "{r}");
                            assert_eq!(r["error"], "bad_request", "{r}");
                        }
                        _ => {
                            let (path, kind) = if n % 2 == 0 {
                                truncated += 1;
                                ("trunc.onnx".to_string(), "compile")
                            } else if n % 4 == 1 {
                                (outside.display().to_string(), "refused")
                            } else {
                                ("../outside-load.onnx".to_string(), "refused")
                            };
                            let r = c.call(&json!({"id": id, "op": "compile", "model_path": path}));
                            assert_eq!(r["status"], "error", "{r}");
                            assert_eq!(r["error"], kind, "{r}");
                            assert_eq!(r["id"], id);
                            assert!(!r["diagnostics"][0]["message"].as_str().unwrap().is_empty());
                        }
                    }
                }
                (hits, truncated)
            })
        })
        .collect();
    let counts: Vec<(usize, usize)> = threads
        .into_iter()
        .map(|t| t.join().expect("client thread"))
        .collect();
    let hits: usize = counts.iter().map(|c| c.0).sum();
    let truncated: usize = counts.iter().map(|c| c.1).sum();
    assert!(hits > 0, "repeated requests must hit the cache");
    let s = d.stats();
    assert_eq!(s["requests"], 400 + 1, "{s}");
    assert_eq!(s["busy"], 0, "{s}");
    assert_eq!(s["timeouts"], 0, "{s}");
    // 4 models × 3 emits compiled once each, at most twice (two leaders
    // racing right after a flight finishes); failures are not cached.
    let compiles = s["compiles"].as_u64().unwrap() as usize;
    assert!(compiles <= 2 * 12 + truncated, "too many compiles: {s}");
    let h = d.connect().call(&json!({"id": 0, "op": "health"}));
    assert_eq!(h["status"], "ok");
}

#[test]
fn refusals_and_limits() {
    let dir = workdir("limits");
    let model = gen(&dir, "mlp", 1, "m.onnx");
    let outside = dir.parent().unwrap().join("outside-limits");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::copy(&model, outside.join("m.onnx")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("link")).unwrap();
    let d = Daemon::start(&dir, &["--max-model-bytes", "20K"]);
    let meta = std::fs::metadata(&d.socket).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(meta.permissions().mode() & 0o777, 0o600, "socket mode");
    let mut c = d.connect();
    // A symlink out of the root is resolved and refused.
    let r = c.call(&json!({"id": 1, "op": "compile", "model_path": "link/m.onnx"}));
    assert_eq!(r["error"], "refused", "{r}");
    let r =
        c.call(&json!({"id": 2, "op": "compile", "model_path": "m.onnx", "output": "link/out.ll"}));
    assert_eq!(r["error"], "refused", "{r}");
    // Larger than --max-model-bytes, by path and inline.
    let r = c.call(&json!({"id": 3, "op": "compile", "model_path": "m.onnx"}));
    assert_eq!(r["error"], "refused", "{r}");
    assert!(r["diagnostics"][0]["message"]
        .as_str()
        .unwrap()
        .contains("max-model-bytes"));
    let r = c.call(
        &json!({"id": 4, "op": "compile", "model_base64": b64(&std::fs::read(&model).unwrap())}),
    );
    assert_eq!(r["error"], "refused", "{r}");
    let r = c.call(&json!({"id": 5, "op": "compile", "model_path": "m.onnx", "emit": "exe"}));
    assert_eq!(r["error"], "bad_request", "{r}");
    let r = c.call(
        &json!({"id": 5, "op": "fold", "model_path": "m.onnx", "fold_expansion_bound": -1.0}),
    );
    assert_eq!(r["error"], "bad_request", "{r}");
    let r = c.call(&json!({"id": 6, "op": "compile", "model_base64": "!!!!"}));
    assert_eq!(r["error"], "bad_request", "{r}");
    // A line longer than the bound is answered and the connection goes on.
    let r = c.call_raw(&format!(
        "{{\"id\":7,\"op\":\"compile\",\"model_base64\":\"{}\"}}",
        "A".repeat(200 << 10)
    ));
    assert_eq!(r["error"], "bad_request", "{r}");
    let r = c.call(&json!({"id": 8, "op": "health"}));
    assert_eq!(r["status"], "ok");
    assert_eq!(r["id"], 8);
    // Non-loopback TCP needs --allow-remote.
    let err = Daemon::start_at(&dir, "tcp:0.0.0.0:0", &[])
        .err()
        .expect("refused");
    assert!(err.contains("allow-remote"), "{err}");
    let tcp = Daemon::start_at(&dir, "tcp:127.0.0.1:0", &[]).expect("loopback tcp");
    assert!(tcp.addr.starts_with("tcp:127.0.0.1:"), "{}", tcp.addr);
    let out = onnxc(&["client", "--connect", &tcp.addr, "health"]);
    assert!(out.status.success());
    // Any local user reaches a loopback port: `shutdown` there needs a
    // token, and without --auth-token-file there is none.
    let r = onnxc(&["client", "--connect", &tcp.addr, "shutdown"]);
    assert!(!r.status.success());
    assert!(
        String::from_utf8_lossy(&r.stdout).contains("auth-token-file"),
        "{r:?}"
    );
    let out = onnxc(&["client", "--connect", &tcp.addr, "health"]);
    assert!(out.status.success(), "still serving");
}

#[test]
fn busy_timeout_and_joined() {
    let dir = workdir("busy");
    let mut models = Vec::new();
    for i in 0..6u64 {
        models.push(gen(&dir, "cnn", 100 + i, &format!("c{i}.onnx")));
    }
    // One worker, no queue: concurrent distinct compiles find it busy.
    let d = Daemon::start(&dir, &["--workers", "1", "--queue", "0"]);
    let socket = Arc::new(d.socket.clone());
    let barrier = Arc::new(std::sync::Barrier::new(6));
    let results: Vec<Value> = (0..6)
        .map(|i| {
            let (socket, barrier) = (socket.clone(), barrier.clone());
            std::thread::spawn(move || {
                let mut c = Conn::unix(&socket);
                barrier.wait(); // all six arrive together
                c.call(&json!({"id": i, "op": "compile", "model_path": format!("c{i}.onnx")}))
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    let busy = results.iter().filter(|r| r["status"] == "busy").count();
    let ok = results.iter().filter(|r| r["status"] == "ok").count();
    assert_eq!(busy + ok, 6, "{results:?}");
    assert!(busy >= 1 && ok >= 1, "busy {busy}, ok {ok}");
    drop(d);

    // Identical concurrent requests share one compile.
    let d = Daemon::start(&dir, &["--workers", "2"]);
    let same: Vec<Value> = (0..6)
        .map(|i| {
            let socket = socket.clone();
            std::thread::spawn(move || {
                Conn::unix(&socket)
                    .call(&json!({"id": i, "op": "compile", "model_path": "c0.onnx"}))
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    assert!(same.iter().all(|r| r["status"] == "ok"));
    let s = d.stats();
    assert_eq!(s["compiles"], 1, "identical requests compiled once: {s}");
    drop(d);

    // A deadline shorter than the compile: `timeout`, and the compile
    // nobody waits for any more is cancelled (daemon_cancel.rs times it);
    // the next request compiles afresh.
    let d = Daemon::start(&dir, &[]);
    let mut c = d.connect();
    let r = c.call(&json!({"id": 1, "op": "compile", "model_path": "c5.onnx", "timeout_ms": 0}));
    assert_eq!(r["status"], "timeout", "{r}");
    d.wait_stats("idle", Duration::from_secs(60), |s| {
        s["pool"]["running"] == 0 && s["pool"]["queued"] == 0
    });
    let s = d.stats();
    assert_eq!(
        (s["cancelled"].as_u64(), s["cache"]["entries"].as_u64()),
        (Some(1), Some(0)),
        "{s}"
    );
    let r = c.call(&json!({"id": 2, "op": "compile", "model_path": "c5.onnx"}));
    assert_eq!(r["cache"], "miss", "{r:.300}");
    assert_eq!(r["status"], "ok", "{r:.300}");
}

/// `--metrics-listen`: Prometheus's text format over HTTP, the counters of
/// `stats` (requests by outcome, hits per tier, compile seconds).
#[test]
fn metrics_are_served() {
    use std::io::{Read, Write};
    let dir = workdir("metrics");
    gen(&dir, "mlp", 5, "m.onnx");
    let sock = dir.join("metrics.sock");
    let m = format!("unix:{}", sock.display());
    let d = Daemon::start(&dir, &["--metrics-listen", &m]);
    let mut c = d.connect();
    // Every compile answer names the model by its sha256 (so do the logs).
    let digest: String = {
        use sha2::{Digest, Sha256};
        let bytes = std::fs::read(dir.join("m.onnx")).unwrap();
        Sha256::digest(&bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    for i in 0..2 {
        let r =
            c.call(&json!({"id": i, "op": "compile", "model_path": "m.onnx", "emit": "memref"}));
        assert_eq!(r["status"], "ok");
        assert_eq!(r["model_sha256"], digest.as_str());
    }
    let get = |path: &str| {
        let mut s = std::os::unix::net::UnixStream::connect(&sock).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    };
    let text = get("/metrics");
    assert!(text.starts_with("HTTP/1.1 200 OK"), "{text}");
    for line in [
        "onnxc_requests_total{status=\"ok\"} 2",
        "onnxc_compiles_total 1",
        "onnxc_cache_hits_total{tier=\"local\"} 1",
        "onnxc_compile_seconds_count 1",
        "# TYPE onnxc_compile_seconds histogram",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} not in\n{text}");
    }
    assert!(get("/other").starts_with("HTTP/1.1 404"));
}
