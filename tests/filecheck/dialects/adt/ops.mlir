// RUN: relay-opt %s | relay-opt | filecheck %s
// The adt dialect round-trips: type definitions, constructors, match, calls with type arguments.

builtin.module {
  adt.type_def @List<A> {Cons(!adt.var<"A">, !adt.value<@List, [!adt.var<"A">]>), Nil}
  adt.type_def @nat {zero, succ(!adt.value<@nat>)}
  func.func @hd(%l: !adt.value<@List, [!adt.var<"A">]>) -> !adt.var<"A"> {
    %h = adt.match %l : !adt.value<@List, [!adt.var<"A">]> -> (!adt.var<"A">) {
      case @Cons(var, _) {
      ^bb0(%x: !adt.var<"A">):
        adt.yield %x : !adt.var<"A">
      }
    }
    func.return %h : !adt.var<"A">
  }
  func.func @main(%x: tensor<i32>) -> tensor<i32> {
    %n = adt.construct @List::@Nil() : () -> !adt.value<@List, [tensor<i32>]>
    %l = adt.construct @List::@Cons(%x, %n) : (tensor<i32>, !adt.value<@List, [tensor<i32>]>) -> !adt.value<@List, [tensor<i32>]>
    %h = adt.call @hd(%l) : (!adt.value<@List, [tensor<i32>]>) -> tensor<i32>
    %z = adt.match? %l : !adt.value<@List, [tensor<i32>]> -> (tensor<i32>) {
      case @Cons(_, @Cons(var, _)) {
      ^bb0(%y: tensor<i32>):
        adt.yield %y : tensor<i32>
      }
      case _ {
        adt.yield %h : tensor<i32>
      }
    }
    func.return %z : tensor<i32>
  }
}

// CHECK:      adt.type_def @List<A> {Cons(!adt.var<"A">, !adt.value<@List, [!adt.var<"A">]>), Nil}
// CHECK-NEXT: adt.type_def @nat {zero, succ(!adt.value<@nat>)}
// CHECK:      adt.match %l : !adt.value<@List, [!adt.var<"A">]> -> (!adt.var<"A">) {
// CHECK-NEXT:   case @Cons(var, _) {
// CHECK-NEXT:   ^bb0(%x: !adt.var<"A">):
// CHECK-NEXT:     adt.yield %x : !adt.var<"A">
// CHECK:      %n = adt.construct @List::@Nil() : () -> !adt.value<@List, [tensor<i32>]>
// CHECK-NEXT: %l = adt.construct @List::@Cons(%x, %n) : (tensor<i32>, !adt.value<@List, [tensor<i32>]>) -> !adt.value<@List, [tensor<i32>]>
// CHECK-NEXT: %h = adt.call @hd(%l) : (!adt.value<@List, [tensor<i32>]>) -> tensor<i32>
// CHECK-NEXT: %z = adt.match? %l : !adt.value<@List, [tensor<i32>]> -> (tensor<i32>) {
// CHECK-NEXT:   case @Cons(_, @Cons(var, _)) {
// CHECK:        case _ {
// CHECK-NEXT:     adt.yield %h : tensor<i32>
