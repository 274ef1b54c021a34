// Unstructured control flow written with cf directly: block arguments, a
// cond_br whose two edges reach one block with different arguments, and a
// passing cf.assert.
// EXIT: 7
// OUT: 520
func.func private @printI64(i64)
func.func private @printNewline()

func.func @main() -> i32 {
  %c0 = arith.constant 0 : i64
  %c1 = arith.constant 1 : i64
  %c10 = arith.constant 10 : i64
  %c100 = arith.constant 100 : i64
  cf.br ^head(%c0, %c0 : i64, i64)
^head(%i: i64, %acc: i64):
  %lt = arith.cmpi slt, %i, %c10 : i64
  cf.cond_br %lt, ^tail(%i, %acc : i64, i64), ^exit(%acc : i64)
^tail(%j: i64, %a: i64):
  %bit = arith.andi %j, %c1 : i64
  %odd = arith.cmpi eq, %bit, %c1 : i64
  %next = arith.addi %j, %c1 : i64
  %a1 = arith.addi %a, %c100 : i64
  %a2 = arith.addi %a, %j : i64
  cf.cond_br %odd, ^head(%next, %a1 : i64, i64), ^head(%next, %a2 : i64, i64)
^exit(%r: i64):
  %pos = arith.cmpi sgt, %r, %c1 : i64
  cf.assert %pos, "result must be positive"
  func.call @printI64(%r) : (i64) -> ()
  func.call @printNewline() : () -> ()
  %code = arith.constant 7 : i32
  return %code : i32
}
