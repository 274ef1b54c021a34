// Collatz steps of 27 with scf.while; the count is also the exit code.
// EXIT: 111
// OUT: 111
func.func private @printI64(i64)
func.func private @printNewline()

func.func @main() -> i32 {
  %c27 = arith.constant 27 : i64
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c2 = arith.constant 2 : i64
  %c3 = arith.constant 3 : i64
  %r:2 = scf.while (%x = %c27, %n = %c0) : (i64, i64) -> (i64, i64) {
    %more = arith.cmpi ne, %x, %c1 : i64
    scf.condition(%more) %x, %n : i64, i64
  } do {
  ^bb0(%x: i64, %n: i64):
    %bit = arith.andi %x, %c1 : i64
    %odd = arith.cmpi eq, %bit, %c1 : i64
    %next = scf.if %odd -> (i64) {
      %t = arith.muli %x, %c3 : i64
      %u = arith.addi %t, %c1 : i64
      scf.yield %u : i64
    } else {
      %h = arith.divui %x, %c2 : i64
      scf.yield %h : i64
    }
    %n1 = arith.addi %n, %c1 : i64
    scf.yield %next, %n1 : i64, i64
  }
  func.call @printI64(%r#1) : (i64) -> ()
  func.call @printNewline() : () -> ()
  %code = arith.trunci %r#1 : i64 to i32
  return %code : i32
}
