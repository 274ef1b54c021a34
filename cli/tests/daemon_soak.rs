#![allow(clippy::expect_used, clippy::unwrap_used)]
//! Soak: a thousand compiles of rotating models through one daemon whose
//! cache holds only a few artifacts (so nearly every request compiles and
//! evicts): the heap in use (`stats.heap_bytes`) and the RSS after the run
//! stay where they were after the first 100 requests.
//! ONNXC_SOAK_REQUESTS overrides the count (default 1000).

use serde_json::json;
use std::time::Instant;
use testsuite::daemon::*;

#[test]
fn soak_heap_and_rss_stay_flat() {
    let total: usize = std::env::var("ONNXC_SOAK_REQUESTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let dir = workdir("soak");
    let mut refs = Vec::new();
    for i in 0..12u64 {
        let (name, file) = if i % 3 == 2 {
            ("cnn", format!("c{i}.onnx"))
        } else {
            ("mlp", format!("m{i}.onnx"))
        };
        let p = gen(&dir, name, 1000 + i, &file);
        refs.push((file, reference(&p, "memref")));
    }
    // Room for about three of the twelve artifacts, whatever their size.
    let largest = refs.iter().map(|(_, a)| a.len()).max().unwrap_or(0);
    let bound = 3 * largest;
    let d = Daemon::start(
        &dir,
        &["--workers", "2", "--cache-bytes", &bound.to_string()],
    );
    let start = Instant::now();
    let run = |from: usize, to: usize| {
        std::thread::scope(|s| {
            for t in 0..2 {
                let (socket, refs) = (&d.socket, &refs);
                s.spawn(move || {
                    let mut c = Conn::unix(socket);
                    for n in (from..to).filter(|n| n % 2 == t) {
                        let (file, expected) = &refs[n % refs.len()];
                        let r = c.call(&json!({"id": n, "op": "compile", "model_path": file, "emit": "memref"}));
                        assert_eq!(r["status"], "ok", "{r:.300}");
                        assert!(&artifact(&r) == expected, "request {n}: wrong artifact");
                    }
                });
            }
        });
    };
    run(0, 100);
    let early = d.settled_stats();
    run(100, total);
    let late = d.settled_stats();
    let (rss0, rss1) = (rss_bytes(&early), rss_bytes(&late));
    let (anon0, anon1) = (rss_anon_bytes(&early), rss_anon_bytes(&late));
    let (heap0, heap1) = (heap_bytes(&early), heap_bytes(&late));
    let secs = start.elapsed().as_secs_f64();
    let mib = |b: u64| b as f64 / 1048576.0;
    eprintln!(
        "soak: {total} requests in {secs:.1} s ({:.0} req/s), {} compiles, {} evictions; after 100 and after {total}: heap {:.2} / {:.2} MiB, RSS {:.1} / {:.1} MiB (anonymous {:.1} / {:.1})",
        total as f64 / secs,
        late["compiles"],
        late["cache"]["evictions"],
        mib(heap0),
        mib(heap1),
        mib(rss0),
        mib(rss1),
        mib(anon0),
        mib(anon1)
    );
    assert!(
        late["cache"]["bytes"].as_u64().unwrap() <= bound as u64,
        "{late}"
    );
    assert!(
        late["cache"]["evictions"].as_u64().unwrap() > 0,
        "the cache evicted nothing: {late}"
    );
    assert!(
        late["compiles"].as_u64().unwrap() as f64 >= total as f64 * 0.5,
        "mostly misses: {late}"
    );
    // The heap in use holds the bounded cache and per-thread scratch, not
    // a trace of each request: a leak of a model, an IR module or an
    // artifact (tens of KiB and up) per request would add 10 MiB or more.
    assert!(
        heap1 <= heap0 + (2 << 20),
        "heap in use grew from {heap0} to {heap1} bytes over {total} requests"
    );
    // The RSS moves with the binary's code pages as new paths run, and its
    // anonymous part with malloc's per-thread arenas even though the idle
    // daemon trims them: at rest after 100 and after 1,000 requests, six
    // runs gave anonymous 9.3 / 17.7, 19.3 / 19.8, 14.0 / 12.1, 19.2 /
    // 14.2, 15.7 / 20.6 and 20.5 / 25.3 MiB with 4.5-5.6 MiB in use (the
    // whole RSS once rose 10.6 MiB in CI). Against that wander it catches
    // fragmentation that grows without bound; the heap is the sharp check.
    assert!(
        anon1 <= anon0 + (16 << 20),
        "anonymous RSS grew from {anon0} to {anon1} bytes over {total} requests (RSS {rss0} to {rss1})"
    );
}
