//! `onnxc fold`: constant folding, ONNX file to ONNX file, streamed.

use crate::{driver, CmdResult, Failure, PassFlags};
use frontend::import::ImportOptions;
use std::path::Path;
use std::time::Duration;

#[derive(Clone, Debug, Default)]
pub struct FoldOptions {
    /// Don't fold when the results would take more than this many times
    /// the bytes of the operands (`None`: no bound).
    pub expansion_bound: Option<f64>,
    /// Initializers of at least this many bytes go to OUTPUT.data.
    pub external_data_threshold: Option<usize>,
    pub import: ImportOptions,
}

/// When each phase ended, from the start of `fold`.
pub struct FoldTimes {
    pub imported: Duration,
    pub folded: Duration,
    pub written: Duration,
}

/// The rewrites an ONNX model written after constant propagation gets and
/// a compile does not: a per-channel Mul+Add, which a compile keeps for
/// fusion, is one BatchNormalization node in a model.
pub fn prepare_export(m: &mut ir::Module) -> Result<(), Failure> {
    let mut pm = ir::pass::PassManager::new();
    pm.extend(crate::passes::registry().parse("affine-as-batchnorm,expand-repeats")?);
    pm.run(m)?;
    Ok(())
}

/// Folds `model` into `output`.
pub fn fold(
    model: &Path,
    output: &Path,
    opts: &FoldOptions,
    flags: &PassFlags,
) -> Result<FoldTimes, Failure> {
    let clock = std::time::Instant::now();
    // What onnxc does not know is written back as it came.
    let import = ImportOptions {
        keep_foreign: true,
        ..opts.import.clone()
    };
    let loaded = driver::load(model, &import)?;
    let mut m = frontend::import::import_model_with(&loaded, &import)?;
    // Untouched weights are copied from this file in the kernel.
    let source = constprop::stream::MappedSource::open(model, loaded).ok();
    let imported = clock.elapsed();
    driver::run_stages_bounded(&mut m, Some("constprop"), flags, opts.expansion_bound)?;
    prepare_export(&mut m)?;
    let folded = clock.elapsed();
    let written: CmdResult = match opts.external_data_threshold {
        Some(t) => Ok(frontend::export::write_model(&m, output, Some(t))?),
        None => Ok(constprop::stream::write_model(&m, output, source.as_ref())?),
    };
    written?;
    Ok(FoldTimes {
        imported,
        folded,
        written: clock.elapsed(),
    })
}
