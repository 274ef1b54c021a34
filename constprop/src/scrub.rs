//! Scrub: right before bufferization, every surviving constant is
//! materialized once, packed row-major in its declared dtype, so views and
//! lazy forms never reach code generation.

use ir::attr::Attribute;
use ir::pass::{Pass, PassContext};
use ir::{Module, Result};

/// `max_bytes`: constants larger than this stay as they are (views of
/// the model file, lazy transforms); the LLVM emitter packs each one while
/// it streams the weights, so they are never all held in memory at once.
#[derive(Default)]
pub struct Scrub {
    pub max_bytes: Option<usize>,
}

impl Pass for Scrub {
    fn name(&self) -> &'static str {
        "scrub"
    }
    fn run(&self, m: &mut Module, cx: &mut PassContext) -> Result<()> {
        let mut work = Vec::new();
        for op in m.collect_ops(m.top()) {
            if let Some(Attribute::Elements(e)) = m.attr(op, "value") {
                let small = self
                    .max_bytes
                    .is_none_or(|max| e.dtype().storage_bytes(e.len()).is_some_and(|b| b <= max));
                if small && e.contiguous_bytes().is_none() && !e.is_splat() {
                    work.push((op, e.clone()));
                }
            }
        }
        // Independent constants: materialize in parallel.
        let done: Vec<_> = std::thread::scope(|s| {
            let chunk = work.len().div_ceil(worker_count()).max(1);
            let handles: Vec<_> = work
                .chunks(chunk)
                .map(|part| {
                    s.spawn(move || {
                        part.iter()
                            .map(|(op, e)| (*op, e.materialized()))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        });
        cx.bump("scrub.materialized", done.len() as u64);
        for (op, e) in done {
            m.set_attr(op, "value", Attribute::Elements(e));
        }
        Ok(())
    }
}

fn worker_count() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
