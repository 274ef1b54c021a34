#![allow(clippy::expect_used, clippy::unwrap_used)]
//! Memory bounded by design: 10,000 distinct models, each with attribute
//! and value names of its own, through one daemon. Names from models live
//! with their module, so the symbol table does not grow at all, and the
//! heap in use and the RSS after the run stay where they were after the
//! first 500.
//! ONNXC_MEMORY_MODELS overrides the count.

use models::graph::{attr, GraphBuilder};
use serde_json::json;
use std::time::Instant;
use testsuite::daemon::*;

/// Model `i`: one Relu whose input, output and node names and an extra
/// attribute (not in the op table, so kept for export) are unique, long
/// enough that keeping them would show.
fn model(i: usize) -> Vec<u8> {
    let pad = format!("{i:06}").repeat(24);
    let mut b = GraphBuilder::new(&format!("g{i}"), &models::GenOptions::default());
    let x = b.input_f32(&format!("in_{pad}"), &[1, 4]);
    let y = format!("out_{pad}");
    b.node_outputs(
        "Relu",
        &format!("relu_{pad}"),
        &[&x],
        &[&y],
        vec![attr::string(
            &format!("hint_{pad}"),
            &format!("value_{pad}"),
        )],
    );
    b.output_f32(&y, &[1, 4]);
    models::encode(&b.finish().unwrap())
}

#[test]
fn unique_names_do_not_grow_the_daemon() {
    let total: usize = std::env::var("ONNXC_MEMORY_MODELS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let dir = workdir("memory");
    let d = Daemon::start(&dir, &["--workers", "2", "--cache-bytes", "256K"]);
    let start = Instant::now();
    let run = |from: usize, to: usize| {
        std::thread::scope(|s| {
            for t in 0..2 {
                let socket = &d.socket;
                s.spawn(move || {
                    let mut c = Conn::unix(socket);
                    for i in (from..to).filter(|i| i % 2 == t) {
                        let r =
                            c.call(&json!({"id": i, "op": "fold", "model_base64": b64(&model(i))}));
                        assert_eq!(r["status"], "ok", "{r:.300}");
                        assert_eq!(r["cache"], "miss");
                    }
                });
            }
        });
    };
    run(0, 500);
    let early = d.settled_stats();
    run(500, total);
    let late = d.settled_stats();
    let (rss0, rss1) = (rss_bytes(&early), rss_bytes(&late));
    let (heap0, heap1) = (heap_bytes(&early), heap_bytes(&late));
    let mib = |b: u64| b as f64 / 1048576.0;
    eprintln!(
        "memory: {total} models in {:.1} s; after 500 and after {total}: heap {:.2} / {:.2} MiB, RSS {:.1} / {:.1} MiB; symbols {} → {}",
        start.elapsed().as_secs_f64(),
        mib(heap0),
        mib(heap1),
        mib(rss0),
        mib(rss1),
        early["symbols"],
        late["symbols"],
    );
    assert_eq!(late["compiles"], total);
    assert_eq!(early["symbols"], late["symbols"], "the symbol table grew");
    // Keeping each model's names (hundreds of bytes) would add megabytes.
    assert!(
        heap1 <= heap0 + (1 << 20),
        "heap in use grew from {heap0} to {heap1} bytes over {total} models"
    );
    assert!(
        rss1 as f64 <= rss0 as f64 * 1.10,
        "RSS grew from {rss0} to {rss1} bytes over {total} models"
    );
    // The extra attribute made the round trip (fold exports it back).
    let r = d
        .connect()
        .call(&json!({"id": "x", "op": "fold", "model_base64": b64(&model(7))}));
    let bytes = r["artifact_base64"].as_str().unwrap();
    let _ = bytes; // checked below on the decoded model
    let folded = decode_b64(bytes);
    let needle = format!("hint_{}", format!("{:06}", 7).repeat(24));
    assert!(
        folded.windows(needle.len()).any(|w| w == needle.as_bytes()),
        "the unknown attribute is exported back"
    );
}

fn decode_b64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    } as u32;
    let bytes: Vec<u8> = s.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::new();
    for chunk in bytes.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= val(c) << (18 - 6 * i);
        }
        let full = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&full[..chunk.len() - 1]);
    }
    out
}
