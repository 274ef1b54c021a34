//! `--target-cpu` and `--threads`: what the generated code is built for.
//!
//! The CPU goes to clang (`-march`, `-mcpu` on AArch64) and decides the
//! width of the vectors bufferize writes the kernels for (`vector-bits`):
//! 512 where the CPU has AVX-512, 256 with AVX2, else 128 (SSE, NEON).
//! clang itself says what a CPU has (`clang -march=CPU -dM -E` defines
//! `__AVX512F__`, `__AVX2__`); without clang, the x86-64 levels are known
//! and `native` reads /proc/cpuinfo. The same features say whether the
//! int8 kernels may use the VNNI byte dot product (`int8-dot`).

use crate::Failure;
use std::path::Path;
use std::process::Command;

/// The portable baseline of `--emit obj|lib|llvm`: x86-64-v2 (SSE4.2,
/// POPCNT; every x86-64 CPU since 2009 and every x86-64 cloud machine),
/// so a library built here loads anywhere; pass `--target-cpu` for more.
pub const PORTABLE_X86: &str = "x86-64-v2";

/// The `--target-cpu` value of the default of `--emit obj|lib|llvm`: the
/// portable baseline, with the GEMM family in a variant per x86-64 level.
pub const PORTABLE: &str = "portable";

/// The vector width the portable build's kernels are written for: two
/// SSE registers each at x86-64-v2, native at v3 and v4 (AVX-512VL).
const PORTABLE_VECTOR_BITS: u32 = 256;

#[derive(Clone, Debug, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct CodegenFlags {
    /// CPU the code is built for: native, portable (x86-64-v2 code whose
    /// matrix products and convolutions also come for x86-64-v3 and v4,
    /// picked at run time), x86-64-v2, x86-64-v3 (AVX2), x86-64-v4
    /// (AVX-512), or any clang -march value (default: native for run and
    /// bench, portable for compile).
    #[cfg_attr(feature = "clap", arg(long, value_name = "CPU"))]
    pub target_cpu: Option<String>,
    /// Threads of the compiled code's parallel loops; 0 (default): all
    /// cores of the machine it runs on; 1: serial code without libgomp.
    /// The environment variable ONNXC_NUM_THREADS overrides it at run time.
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    pub threads: Option<u64>,
}

/// The resolved choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Codegen {
    pub cpu: String,
    pub vector_bits: u32,
    /// The CPU has VNNI's `vpdpbusd` at `vector_bits`.
    pub int8_dot: bool,
    /// The portable x86-64 build: the GEMM family comes in a variant per
    /// x86-64 level (v2, v3, v4), the running CPU's chosen at load time.
    pub x86_levels: bool,
    pub threads: u64,
    /// clang processes a build runs at once (0: a part per core and the C
    /// wrapper, all at once): the compile daemon runs one per worker, so
    /// `--workers` bounds them.
    pub clang_jobs: usize,
}

impl Default for Codegen {
    fn default() -> Self {
        Codegen {
            cpu: default_cpu(false).to_string(),
            vector_bits: match cfg!(target_arch = "x86_64") {
                true => PORTABLE_VECTOR_BITS,
                false => 128,
            },
            int8_dot: false,
            x86_levels: cfg!(target_arch = "x86_64"),
            threads: 0,
            clang_jobs: 0,
        }
    }
}

fn default_cpu(native: bool) -> &'static str {
    if native {
        "native"
    } else if cfg!(target_arch = "x86_64") {
        PORTABLE_X86
    } else {
        "generic"
    }
}

impl CodegenFlags {
    /// Resolves the flags; `native_default`: the code runs here (`run`,
    /// `bench`).
    pub fn resolve(
        &self,
        native_default: bool,
        llvm_bin: Option<&Path>,
    ) -> Result<Codegen, Failure> {
        // `portable` names what `compile` builds by default.
        let portable = self.target_cpu.as_deref() == Some(PORTABLE)
            || self.target_cpu.is_none() && !native_default;
        let cpu = match &self.target_cpu {
            Some(c) if c != PORTABLE => c.clone(),
            _ if portable => default_cpu(false).to_string(),
            _ => default_cpu(native_default).to_string(),
        };
        if cpu.is_empty()
            || !cpu
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.+".contains(c))
        {
            return Err(Failure::Usage(format!(
                "--target-cpu: invalid CPU name '{cpu}'"
            )));
        }
        let features = features(&cpu, llvm_bin)?;
        // Any other `--target-cpu` pins one variant.
        let x86_levels = portable && cpu == PORTABLE_X86;
        let vector_bits = match x86_levels {
            true => PORTABLE_VECTOR_BITS,
            false => bits_of(&features),
        };
        Ok(Codegen {
            cpu,
            vector_bits,
            int8_dot: int8_dot_of(&features, vector_bits),
            x86_levels,
            threads: self.threads.unwrap_or(0),
            clang_jobs: 0,
        })
    }
}

impl Codegen {
    /// clang's flag for the CPU.
    pub fn clang_args(&self) -> Vec<String> {
        let flag = if cfg!(target_arch = "aarch64") {
            "-mcpu"
        } else {
            "-march"
        };
        let mut args = vec![format!("{flag}={}", self.cpu)];
        // The kernels' own vector code is at 512 bits; LLVM's loop
        // vectorizer keeps to 256 on some AVX-512 CPUs (x86-64-v4,
        // Skylake-SP) unless told.
        if flag == "-march" && self.vector_bits >= 512 {
            args.push(format!("-mprefer-vector-width={}", self.vector_bits));
        }
        args
    }
    /// The linker flags the code needs: libgomp unless serial.
    pub fn link_args(&self) -> Vec<&'static str> {
        match self.threads {
            1 => vec![],
            _ => vec!["-Wl,--push-state,--as-needed", "-lgomp", "-Wl,--pop-state"],
        }
    }
    /// The bufferize and lower pipelines with this choice's options.
    pub fn stage_pipeline(&self, stage: &str, pipeline: &str) -> String {
        match stage {
            "bufferize" => pipeline.replacen(
                "bufferize",
                &format!(
                    "bufferize{{vector-bits={},int8-dot={}{}}}",
                    self.vector_bits,
                    u8::from(self.int8_dot),
                    match self.x86_levels {
                        true => ",x86-levels=1",
                        false => "",
                    }
                ),
                1,
            ),
            "lower" => lower::llvm_ready_pipeline(self.threads, self.x86_levels),
            _ => pipeline.to_string(),
        }
    }
    /// Lines for the generated header; `vnni`: the module has int8
    /// kernels with an AVX512-VNNI variant (`func::X86_VNNI`).
    pub fn header_note(&self, prefix: &str, vnni: bool) -> String {
        let up = prefix.to_ascii_uppercase();
        let threads = match self.threads {
            0 => "all cores".to_string(),
            n => n.to_string(),
        };
        // The int8 kernels' VNNI variant adds a level (5) to cap below.
        let (vnni_note, caps) = match vnni {
            true => (
                ", the int8 ones also an AVX512-VNNI one (level 5, cascadelake)",
                "2, 3 or 4",
            ),
            false => ("", "2 or 3"),
        };
        let levels = match self.x86_levels {
            true => format!(
                "\n   Matrix products and convolutions carry x86-64-v2, v3 and v4 (AVX-512)\n   \
                 variants{vnni_note};\n   \
                 the first call picks the one the CPU runs (cpuid; ONNXC_CPU_LEVEL={caps}\n   \
                 caps it)."
            ),
            false => String::new(),
        };
        format!(
            "/* Built with --target-cpu {cpu} ({bits}-bit vectors) and --threads {t} ({threads});\n   \
             ONNXC_NUM_THREADS overrides the thread count at run time.{levels}{gomp} */\n\
             #define {up}_TARGET_CPU \"{cpu}\"\n#define {up}_THREADS {t}\n\
             #define {up}_X86_LEVELS \"{variants}\"\n",
            variants = match self.x86_levels {
                true => ir::dialects::func::X86_LEVELS
                    .iter()
                    .rev()
                    .chain(vnni.then_some(&ir::dialects::func::X86_VNNI))
                    .map(|l| l.cpu)
                    .collect::<Vec<_>>()
                    .join(" "),
                false => String::new(),
            },
            cpu = self.cpu,
            bits = self.vector_bits,
            t = self.threads,
            gomp = if self.threads == 1 {
                ""
            } else {
                "\n   The library needs libgomp (GCC's OpenMP runtime, libgomp.so.1)."
            },
        )
    }
}

/// What `cpu` has: an x86-64 level's features are fixed by the psABI (no
/// clang run: it cost 0.1 s of every `--emit lib`); any other CPU asks
/// clang's predefined macros, else /proc/cpuinfo for `native`.
fn features(cpu: &str, llvm_bin: Option<&Path>) -> Result<String, Failure> {
    if cfg!(not(target_arch = "x86_64")) {
        return Ok(String::new());
    }
    if let Some(level) = level_features(cpu) {
        return Ok(level.to_string());
    }
    if let Some(clang) = crate::tools::find_tool("clang", llvm_bin) {
        let out = Command::new(&clang)
            .arg(format!("-march={cpu}"))
            .args(["-dM", "-E", "-x", "c", "/dev/null"])
            .output();
        if let Ok(out) = out {
            if !out.status.success() {
                return Err(Failure::Usage(format!(
                    "--target-cpu: clang does not know CPU '{cpu}'"
                )));
            }
            return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
        }
    }
    Ok(match cpu {
        "native" => std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default(),
        _ => String::new(),
    })
}

/// The vector features of an x86-64 micro-architecture level (none of
/// them has VNNI).
fn level_features(cpu: &str) -> Option<&'static str> {
    match cpu {
        "x86-64" | "x86-64-v2" => Some(" "),
        "x86-64-v3" => Some(" avx2 "),
        "x86-64-v4" => Some(" avx2 avx512f avx512vl "),
        _ => None,
    }
}

/// Whether `features` names `f`: clang's macro (`#define __AVX2__ 1`) or a
/// cpuinfo flag (` avx2 `, where VNNI is spelled `avx512_vnni`).
fn has(features: &str, f: &str) -> bool {
    let macro_ = format!("#define __{}__ ", f.to_ascii_uppercase().replace('_', ""));
    features.contains(&macro_) || features.contains(&format!(" {f} "))
}

/// 512 with AVX-512F, 256 with AVX2, else 128.
fn bits_of(features: &str) -> u32 {
    if has(features, "avx512f") {
        512
    } else if has(features, "avx2") {
        256
    } else {
        128
    }
}

/// `vpdpbusd` on `bits`-wide vectors: AVX-512 VNNI at 512 (and at 256 with
/// AVX-512VL), AVX-VNNI at 256.
fn int8_dot_of(features: &str, bits: u32) -> bool {
    let vnni512 = has(features, "avx512_vnni");
    match bits {
        512 => vnni512,
        256 => (vnni512 && has(features, "avx512vl")) || has(features, "avx_vnni"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_to_int8_dot() {
        let zen4 = "#define __AVX512F__ 1\n#define __AVX512VNNI__ 1\n#define __AVX512VL__ 1\n";
        assert!(int8_dot_of(zen4, 512));
        assert!(int8_dot_of(zen4, 256));
        assert!(!int8_dot_of("#define __AVX512F__ 1\n", 512));
        assert!(int8_dot_of(
            "#define __AVX2__ 1\n#define __AVXVNNI__ 1\n",
            256
        ));
        assert!(int8_dot_of(
            "flags : avx2 avx512f avx512_vnni avx512vl ",
            512
        ));
        assert!(!int8_dot_of("#define __AVXVNNI__ 1\n", 128));
    }

    #[test]
    fn levels_agree_with_clang() {
        let Some(clang) = crate::tools::find_tool("clang", None) else {
            return;
        };
        for cpu in ["x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"] {
            let out = Command::new(&clang)
                .arg(format!("-march={cpu}"))
                .args(["-dM", "-E", "-x", "c", "/dev/null"])
                .output()
                .unwrap();
            let macros = String::from_utf8_lossy(&out.stdout);
            let level = level_features(cpu).unwrap();
            assert_eq!(bits_of(&macros), bits_of(level), "{cpu}");
            for bits in [256, 512] {
                assert_eq!(int8_dot_of(&macros, bits), int8_dot_of(level, bits));
            }
        }
    }

    #[test]
    fn features_to_bits() {
        assert_eq!(bits_of("#define __AVX2__ 1\n#define __AVX512F__ 1\n"), 512);
        assert_eq!(
            bits_of("#define __AVX2__ 1\n#define __AVX512FP16__ 1\n"),
            256
        );
        assert_eq!(bits_of("flags : fpu sse4_2 avx avx2 bmi2 "), 256);
        assert_eq!(bits_of("#define __SSE4_2__ 1\n"), 128);
    }

    #[test]
    fn the_portable_build_has_every_level_and_a_cpu_pins_one() {
        if cfg!(not(target_arch = "x86_64")) {
            return;
        }
        let flags = |cpu: Option<&str>| CodegenFlags {
            target_cpu: cpu.map(str::to_string),
            threads: None,
        };
        for (cpu, native_default) in [(None, false), (Some("portable"), true)] {
            let Ok(c) = flags(cpu).resolve(native_default, None) else {
                panic!("{cpu:?} does not resolve");
            };
            assert_eq!((c.cpu.as_str(), c.vector_bits), (PORTABLE_X86, 256));
            assert!(c.x86_levels);
            assert!(c
                .stage_pipeline("bufferize", "bufferize")
                .contains("x86-levels=1"));
            assert!(c.stage_pipeline("lower", "x").contains("multiversion"));
            assert!(c
                .header_note("m", false)
                .contains("#define M_X86_LEVELS \"x86-64-v2 x86-64-v3 x86-64-v4\""));
            assert!(c
                .header_note("m", true)
                .contains("#define M_X86_LEVELS \"x86-64-v2 x86-64-v3 x86-64-v4 cascadelake\""));
        }
        let Ok(pinned) = flags(Some(PORTABLE_X86)).resolve(false, None) else {
            panic!("x86-64-v2 does not resolve");
        };
        assert!(!pinned.x86_levels && pinned.vector_bits == 128);
        assert!(!pinned.stage_pipeline("lower", "x").contains("multiversion"));
    }

    #[test]
    fn pipelines_carry_the_choice() {
        let c = Codegen {
            cpu: "x86-64-v3".into(),
            vector_bits: 256,
            int8_dot: true,
            x86_levels: false,
            threads: 2,
            clang_jobs: 0,
        };
        assert_eq!(
            c.stage_pipeline("bufferize", "bufferize,split-alloc"),
            "bufferize{vector-bits=256,int8-dot=1},split-alloc"
        );
        assert!(c
            .stage_pipeline("lower", "x")
            .contains("lower-parallel{threads=2}"));
        assert_eq!(c.clang_args(), vec!["-march=x86-64-v3".to_string()]);
        let v4 = Codegen {
            cpu: "x86-64-v4".into(),
            vector_bits: 512,
            ..c
        };
        assert_eq!(
            v4.clang_args(),
            ["-march=x86-64-v4", "-mprefer-vector-width=512"]
        );
    }
}
