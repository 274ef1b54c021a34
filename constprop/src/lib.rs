//! Constant propagation over shared element buffers: folding kernels, the
//! hybrid (infer + canonicalize + fold) pass, and scrub.

pub mod canon;
pub mod fold;
pub mod hybrid;
pub mod scrub;
pub mod stream;
pub mod version;

use ir::pass::{PassInfo, PassRegistry};
use ir::rewrite::GreedyConfig;

pub fn register_passes(reg: &mut PassRegistry) {
    reg.add(canon::affine_bn_pass());
    reg.add(canon::fuse_qdq_pass());
    reg.add(canon::expand_repeats_pass());
    reg.add(PassInfo {
        name: "constprop",
        summary: "hybrid shape inference, canonicalization and constant folding",
        create: |opts| {
            let mut config = GreedyConfig::default();
            if let Some(n) = opts.number("max-iterations")? {
                config.max_iterations = n as usize;
            }
            // `expansion-bound=F`: results up to F times the operands'
            // bytes; `no-growth`: the model never grows (`onnxc fold`).
            let growth = match (opts.get("expansion-bound"), opts.flag("no-growth")) {
                (Some(_), true) => {
                    return Err(ir::Diagnostic::error(
                        "expansion-bound and no-growth exclude each other",
                    ))
                }
                (Some(v), false) => hybrid::Growth::Factor(v.parse::<f64>().map_err(|_| {
                    ir::Diagnostic::error(format!("expansion-bound: '{v}' is not a number"))
                })?),
                (None, true) => hybrid::Growth::None,
                (None, false) => hybrid::Growth::Unbounded,
            };
            let lazy_min = match opts.number("lazy-min-elements")? {
                Some(n) => n as usize,
                None => fold::DEFAULT_LAZY_MIN,
            };
            Ok(Box::new(hybrid::ConstProp {
                config,
                growth,
                lazy_min,
                version_ranks: opts.flag("version-ranks"),
            }))
        },
    });
    reg.add(PassInfo {
        name: "scrub",
        summary: "materialize surviving constants packed in their declared dtype",
        create: |opts| {
            let max_bytes = opts.number("max-bytes")?.map(|n| n as usize);
            Ok(Box::new(scrub::Scrub { max_bytes }))
        },
    });
}
