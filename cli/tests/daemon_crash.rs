#![allow(clippy::expect_used, clippy::unwrap_used)]
//! Crash consistency of the persisted cache (SIGKILL mid-compile, a
//! corrupted entry) and graceful shutdown (SIGTERM, `shutdown`).

use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use testsuite::daemon::*;

fn entries(cache: &std::path::Path) -> (usize, Vec<String>) {
    let mut n = 0;
    let mut other = Vec::new();
    for e in std::fs::read_dir(cache).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".entry") {
            n += 1;
        } else if name != "lock.pid" {
            other.push(name);
        }
    }
    (n, other)
}

#[test]
fn sigkill_mid_compile_leaves_cache_consistent() {
    let dir = workdir("sigkill");
    let cache = dir.join("cache");
    let mut refs = Vec::new();
    for i in 0..16u64 {
        let p = gen(
            &dir,
            if i % 2 == 0 { "cnn" } else { "mlp" },
            500 + i,
            &format!("k{i}.onnx"),
        );
        refs.push((format!("k{i}.onnx"), reference(&p, "llvm")));
    }
    let cache_arg = cache.to_str().unwrap().to_string();
    let d = Daemon::start(&dir, &["--workers", "2", "--cache-dir", &cache_arg]);
    // Two clients keep both workers compiling distinct models...
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..2)
        .map(|t| {
            let (socket, stop) = (d.socket.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut c = testsuite::daemon::Conn::unix(&socket);
                let mut n = t;
                while !stop.load(Ordering::SeqCst) && n < 16 {
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        c.call(
                            &json!({"id": n, "op": "compile", "model_path": format!("k{n}.onnx")}),
                        )
                    }));
                    n += 2;
                }
            })
        })
        .collect();
    // ...and once a few are cached and more are running, SIGKILL.
    let start = Instant::now();
    loop {
        let s = d.stats();
        if s["compiles"].as_u64().unwrap() >= 3 && s["pool"]["running"].as_u64().unwrap() > 0 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "daemon never got busy: {s}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let mut d = d;
    d.signal("KILL");
    d.wait(Duration::from_secs(10));
    stop.store(true, Ordering::SeqCst);
    for c in clients {
        let _ = c.join();
    }
    drop(d);
    let (before, _) = entries(&cache);
    assert!(before >= 1, "some entries were persisted before the kill");

    // The next start finds only whole, verified entries, each one right.
    let d = Daemon::start(&dir, &["--cache-dir", &cache_arg]);
    let s = d.stats();
    assert_eq!(s["cache"]["corrupt"], 0, "{s}");
    assert_eq!(
        s["cache"]["loaded"].as_u64().unwrap() as usize,
        before,
        "{s}"
    );
    let (_, leftovers) = entries(&cache);
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");
    let mut c = d.connect();
    let mut hits = 0;
    for (file, expected) in &refs {
        let r = c.call(&json!({"id": file, "op": "compile", "model_path": file}));
        assert_eq!(r["status"], "ok", "{r:.300}");
        assert!(
            &artifact(&r) == expected,
            "{file}: artifact differs from onnxc compile"
        );
        hits += usize::from(r["cache"] == "hit");
    }
    assert_eq!(
        hits, before,
        "every persisted entry is served from the cache"
    );
}

#[test]
fn corrupt_entry_is_detected_and_recompiled() {
    let dir = workdir("corrupt");
    let cache = dir.join("cache");
    let cache_arg = cache.to_str().unwrap().to_string();
    let model = gen(&dir, "mlp", 3, "m.onnx");
    let expected = reference(&model, "memref");
    let req = json!({"id": 1, "op": "compile", "model_path": "m.onnx", "emit": "memref"});
    {
        let d = Daemon::start(&dir, &["--cache-dir", &cache_arg]);
        assert_eq!(d.connect().call(&req)["cache"], "miss");
    }
    let entry = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "entry"))
        .unwrap();
    let mut bytes = std::fs::read(&entry).unwrap();
    let mid = bytes.len() - 100;
    bytes[mid] ^= 0x20;
    std::fs::write(&entry, bytes).unwrap();
    // A torn write of another entry (truncated file) is caught too.
    std::fs::write(
        cache.join(format!("{}.entry", "ab".repeat(32))),
        b"ONNXC-CACHE1\n",
    )
    .unwrap();
    let d = Daemon::start(&dir, &["--cache-dir", &cache_arg]);
    let s = d.stats();
    assert_eq!(s["cache"]["corrupt"], 2, "{s}");
    assert_eq!(s["cache"]["loaded"], 0, "{s}");
    // One daemon per cache directory.
    let other = format!("unix:{}", dir.join("other.sock").display());
    let err = Daemon::start_at(&dir, &other, &["--cache-dir", &cache_arg])
        .err()
        .expect("second daemon on the same cache refused");
    assert!(err.contains("in use by process"), "{err}");
    let r = d.connect().call(&req);
    assert_eq!(r["cache"], "miss", "a corrupt entry is recompiled");
    assert!(artifact(&r) == expected);
    assert_eq!(d.connect().call(&req)["cache"], "hit");
}

#[test]
fn sigterm_finishes_in_flight_work_then_exits() {
    let dir = workdir("sigterm");
    for i in 0..4u64 {
        gen(&dir, "cnn", 40 + i, &format!("c{i}.onnx"));
    }
    let mut d = Daemon::start(&dir, &["--workers", "1"]);
    let socket = d.socket.clone();
    // Compiles queue behind one worker; SIGTERM arrives meanwhile. Requests
    // that reach the daemon before it must all succeed; later ones may be
    // refused (`shutting_down`) or find no daemon, never hang or break.
    let pending: Vec<_> = (0..8)
        .map(|i| {
            let socket = socket.clone();
            std::thread::spawn(move || {
                let stop = ["bufferize", "dealloc"][i / 4];
                try_call(
                    &socket,
                    &json!({"id": i, "op": "compile", "model_path": format!("c{}.onnx", i % 4), "stop_after": stop}),
                )
            })
        })
        .collect();
    let start = Instant::now();
    let in_flight = loop {
        let n = d.stats()["in_flight"].as_u64().unwrap();
        if n >= 2 {
            break n as usize;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "never 2 in flight"
        );
        std::thread::sleep(Duration::from_millis(1));
    };
    d.signal("TERM");
    let mut ok = 0;
    for p in pending {
        if let Some(r) = p.join().unwrap() {
            assert!(
                r["status"] == "ok" || r["status"] == "shutting_down",
                "{r:.300}"
            );
            ok += usize::from(r["status"] == "ok");
        }
    }
    assert!(
        ok >= in_flight,
        "the {in_flight} requests in flight finished ({ok} ok)"
    );
    let status = d.wait(Duration::from_secs(30));
    assert!(status.success(), "clean exit: {status}");
    assert!(!socket.exists(), "socket removed");

    // `shutdown` request: answered, new compiles refused, then exit.
    let mut d = Daemon::start(&dir, &[]);
    let mut c = d.connect();
    let r = c.pipeline(&[
        json!({"id": 1, "op": "shutdown"}),
        json!({"id": 2, "op": "compile", "model_path": "c0.onnx"}),
    ]);
    assert_eq!(r[0]["status"], "ok");
    assert_eq!(r[1]["status"], "shutting_down", "{}", r[1]);
    drop(c);
    assert!(d.wait(Duration::from_secs(30)).success());
    assert!(!d.socket.exists());
}
