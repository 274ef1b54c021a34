/* The print helpers test programs call, for binaries built by upstream MLIR. */
#include <stdio.h>
#include <stdint.h>
void printI64(int64_t x) { printf("%lld", (long long)x); }
void printF32(float x) { printf("%g", x); }
void printF64(double x) { printf("%g", x); }
void printNewline(void) { printf("\n"); }
