//! `cargo run -p dealloc --example dealloc_opt -- FILE.mlir PIPELINE [--llvm] [--time]`
//! (`--time`: pass time only, no verification after each pass):
//! runs passes on a file (and emits LLVM IR) without building the CLI.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(file), Some(pipeline)) = (args.get(1), args.get(2)) else {
        return Err("usage: dealloc_opt FILE.mlir PIPELINE [--llvm]".into());
    };
    let llvm = args.iter().any(|a| a == "--llvm");
    let src = std::fs::read_to_string(file)?;
    let mut m = ir::text::parse_module(&src, file).map_err(|d| d.to_string())?;
    ir::verify(&m).map_err(|d| d.to_string())?;
    let mut reg = ir::pass::PassRegistry::new();
    dealloc::register_passes(&mut reg);
    lower::register_passes(&mut reg);
    let mut pm = ir::pass::PassManager::new();
    if !pipeline.is_empty() {
        pm.extend(reg.parse(pipeline).map_err(|d| d.to_string())?);
    }
    if llvm {
        pm.extend(
            reg.parse("lower-to-llvm-ready")
                .map_err(|d| d.to_string())?,
        );
    }
    let timing = args.iter().any(|a| a == "--time");
    if !timing {
        pm.instrument(Box::new(ir::pass::VerifyEach));
    }
    let start = std::time::Instant::now();
    pm.run(&mut m).map_err(|d| d.to_string())?;
    if timing {
        eprintln!("passes: {:.3} s", start.elapsed().as_secs_f64());
        return Ok(());
    }
    if llvm {
        let opts = lower::EmitOptions::default();
        print!(
            "{}",
            lower::emit_llvm(&m, &opts).map_err(|d| d.to_string())?
        );
    } else {
        print!(
            "{}",
            ir::text::print_module(&m, &ir::text::PrintOptions::default())
        );
    }
    Ok(())
}
