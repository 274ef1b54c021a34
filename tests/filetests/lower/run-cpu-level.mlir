// RUN: onnxc opt %s --emit llvm | run-llvm --cpu-level 2 | filecheck --check-prefix=CAPPED
// RUN: onnxc opt %s --emit llvm | run-llvm --cpu-level 9 | filecheck --check-prefix=DETECTED
// RUN: onnxc opt %s --emit llvm | run-llvm --valgrind | filecheck --check-prefix=GRIND

// `__onnxc_cpu_level()` reads cpuid once: 2, 3, 4 or 5 (4 with
// AVX512-VNNI, for the int8 kernels). ONNXC_CPU_LEVEL may
// lower it (2 here on any x86-64 machine) but never raise it (9 gives the
// detected level, printed twice from the cached answer). valgrind
// emulates no AVX-512, so under it the level is at most 3: the variant
// the CPU has is what runs, not what the host has.
// CAPPED: 2
// CAPPED-NEXT: 2
// DETECTED: [[L:[2345]]]
// DETECTED-NEXT: [[L]]
// GRIND: {{^[23]$}}
func.func private @printI64(i64)
func.func private @printNewline()
func.func private @__onnxc_cpu_level() -> index

func.func @main() {
  %a = call @__onnxc_cpu_level() : () -> index
  %b = call @__onnxc_cpu_level() : () -> index
  %x = arith.index_cast %a : index to i64
  %y = arith.index_cast %b : index to i64
  call @printI64(%x) : (i64) -> ()
  call @printNewline() : () -> ()
  call @printI64(%y) : (i64) -> ()
  call @printNewline() : () -> ()
  return
}
