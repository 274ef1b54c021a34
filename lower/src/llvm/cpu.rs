//! `__onnxc_cpu_level() -> i64`: the x86-64 micro-architecture level of
//! the CPU running the code, for the kernels built in several variants
//! (`ir::dialects::func::TARGET_CPU`). 2 is the baseline; 3 needs AVX2,
//! FMA, BMI1/2, F16C, LZCNT and MOVBE with the OS saving YMM state; 4 adds
//! AVX-512 F/BW/CD/DQ/VL with the OS saving ZMM and mask state (the psABI
//! levels); 5 is 4 with AVX512-VNNI, for the int8 kernels. cpuid traps to the hypervisor on many virtual machines, so the
//! answer is read once and cached. `ONNXC_CPU_LEVEL` may lower it (to test
//! the narrower variants on a wider CPU), never raise it.

use super::ModuleCx;

/// cpuid(1).ecx: FMA, MOVBE, OSXSAVE, AVX, F16C.
const LEAF1_ECX_V3: i32 = (1 << 12) | (1 << 22) | (1 << 27) | (1 << 28) | (1 << 29);
/// cpuid(7).ebx: BMI1, AVX2, BMI2.
const LEAF7_EBX_V3: i32 = (1 << 3) | (1 << 5) | (1 << 8);
/// cpuid(7).ebx: AVX512F, DQ, CD, BW, VL.
const LEAF7_EBX_V4: i32 = (1 << 16) | (1 << 17) | (1 << 28) | (1 << 30) | i32::MIN;
/// cpuid(7).ecx: AVX512_VNNI (level 5, `func::X86_VNNI`).
const LEAF7_ECX_VNNI: i32 = 1 << 11;
/// cpuid(0x80000001).ecx: LZCNT.
const EXT1_ECX_V3: i32 = 1 << 5;
/// XCR0: SSE and AVX state.
const XCR0_V3: i32 = 0x6;
/// XCR0: also opmask, ZMM_Hi256 and Hi16_ZMM state.
const XCR0_V4: i32 = 0xe6;

/// Defines the function (and what it calls) in the module.
pub(crate) fn provide(mcx: &mut ModuleCx, name: &str) {
    let var = mcx.string(b"ONNXC_CPU_LEVEL");
    mcx.declare("getenv", "declare ptr @getenv(ptr)");
    mcx.declare("strtol", "declare i64 @strtol(ptr, ptr, i32)");
    let cpuid = "call { i32, i32, i32, i32 } asm \"cpuid\", \
                 \"={ax},={bx},={cx},={dx},{ax},{cx},~{dirflag},~{fpsr},~{flags}\"";
    mcx.helpers.push(format!(
        r#"@{name}.cached = linkonce_odr hidden global i64 0

define linkonce_odr hidden i64 @{name}() {{
entry:
  %c = load atomic i64, ptr @{name}.cached monotonic, align 8
  %known = icmp ne i64 %c, 0
  br i1 %known, label %done, label %detect
done:
  ret i64 %c
detect:
  %l = call i64 @{name}.detect()
  %e = call ptr @getenv(ptr {var})
  %set = icmp ne ptr %e, null
  br i1 %set, label %env, label %keep
env:
  %n = call i64 @strtol(ptr %e, ptr null, i32 10)
  %lowest = icmp sge i64 %n, 2
  %lower = icmp slt i64 %n, %l
  %take = and i1 %lowest, %lower
  %m = select i1 %take, i64 %n, i64 %l
  br label %keep
keep:
  %r = phi i64 [ %l, %detect ], [ %m, %env ]
  store atomic i64 %r, ptr @{name}.cached monotonic, align 8
  ret i64 %r
}}

define linkonce_odr hidden i64 @{name}.detect() noinline {{
entry:
  %l0 = {cpuid}(i32 0, i32 0)
  %max = extractvalue {{ i32, i32, i32, i32 }} %l0, 0
  %has7 = icmp uge i32 %max, 7
  br i1 %has7, label %leaf1, label %v2
leaf1:
  %l1 = {cpuid}(i32 1, i32 0)
  %c1 = extractvalue {{ i32, i32, i32, i32 }} %l1, 2
  %f1 = and i32 %c1, {LEAF1_ECX_V3}
  %ok1 = icmp eq i32 %f1, {LEAF1_ECX_V3}
  br i1 %ok1, label %ext, label %v2
ext:
  %e0 = {cpuid}(i32 -2147483648, i32 0)
  %emax = extractvalue {{ i32, i32, i32, i32 }} %e0, 0
  %has_e1 = icmp uge i32 %emax, -2147483647
  br i1 %has_e1, label %ext1, label %v2
ext1:
  %e1 = {cpuid}(i32 -2147483647, i32 0)
  %ce = extractvalue {{ i32, i32, i32, i32 }} %e1, 2
  %fe = and i32 %ce, {EXT1_ECX_V3}
  %oke = icmp ne i32 %fe, 0
  br i1 %oke, label %xcr, label %v2
xcr:
  %x = call {{ i32, i32 }} asm "xgetbv", "={{ax}},={{dx}},{{cx}},~{{dirflag}},~{{fpsr}},~{{flags}}"(i32 0)
  %x0 = extractvalue {{ i32, i32 }} %x, 0
  %ymm = and i32 %x0, {XCR0_V3}
  %os3 = icmp eq i32 %ymm, {XCR0_V3}
  %l7 = {cpuid}(i32 7, i32 0)
  %b7 = extractvalue {{ i32, i32, i32, i32 }} %l7, 1
  %f7 = and i32 %b7, {LEAF7_EBX_V3}
  %ok7 = icmp eq i32 %f7, {LEAF7_EBX_V3}
  %v3 = and i1 %os3, %ok7
  br i1 %v3, label %avx512, label %v2
avx512:
  %zmm = and i32 %x0, {XCR0_V4}
  %os4 = icmp eq i32 %zmm, {XCR0_V4}
  %g7 = and i32 %b7, {LEAF7_EBX_V4}
  %ok4 = icmp eq i32 %g7, {LEAF7_EBX_V4}
  %v4 = and i1 %os4, %ok4
  %c7 = extractvalue {{ i32, i32, i32, i32 }} %l7, 2
  %f7c = and i32 %c7, {LEAF7_ECX_VNNI}
  %vnni = icmp ne i32 %f7c, 0
  %v5 = and i1 %v4, %vnni
  %l34 = select i1 %v4, i64 4, i64 3
  %level = select i1 %v5, i64 5, i64 %l34
  ret i64 %level
v2:
  ret i64 2
}}

"#
    ));
}
