// RUN: relay-opt %s | relay-opt | filecheck %s
// Closures round-trip: a function with captured values as a value (adt.closure), a polymorphic
// function taking one (its !adt.var's instantiated by the closure's type), and adt.apply.

builtin.module {
  adt.type_def @List<A> {Cons(!adt.var<"A">, !adt.value<@List, [!adt.var<"A">]>), Nil}
  func.func private @add_n(%x: tensor<i32>, %n: tensor<i32>) -> tensor<i32> {
    %y = relay.add %x, %n : (tensor<i32>, tensor<i32>) -> tensor<i32>
    func.return %y : tensor<i32>
  }
  func.func @map(%f: (!adt.var<"A">) -> !adt.var<"B">, %xs: !adt.value<@List, [!adt.var<"A">]>) -> !adt.value<@List, [!adt.var<"B">]> {
    %r = adt.match %xs : !adt.value<@List, [!adt.var<"A">]> -> (!adt.value<@List, [!adt.var<"B">]>) {
      case @Cons(var, var) {
      ^bb0(%h: !adt.var<"A">, %t: !adt.value<@List, [!adt.var<"A">]>):
        %fh = adt.apply %f(%h) : ((!adt.var<"A">) -> !adt.var<"B">)
        %ft = func.call @map(%f, %t) : ((!adt.var<"A">) -> !adt.var<"B">, !adt.value<@List, [!adt.var<"A">]>) -> !adt.value<@List, [!adt.var<"B">]>
        %c = adt.construct @List::@Cons(%fh, %ft) : (!adt.var<"B">, !adt.value<@List, [!adt.var<"B">]>) -> !adt.value<@List, [!adt.var<"B">]>
        adt.yield %c : !adt.value<@List, [!adt.var<"B">]>
      }
      case @Nil {
        %n = adt.construct @List::@Nil() : () -> !adt.value<@List, [!adt.var<"B">]>
        adt.yield %n : !adt.value<@List, [!adt.var<"B">]>
      }
    }
    func.return %r : !adt.value<@List, [!adt.var<"B">]>
  }
  func.func @main(%a: tensor<i32>, %b: tensor<i32>) -> !adt.value<@List, [tensor<i32>]> {
    %f = adt.closure @add_n(%b) : (tensor<i32>) -> ((tensor<i32>) -> tensor<i32>)
    %y = adt.apply %f(%a) : ((tensor<i32>) -> tensor<i32>)
    %n = adt.construct @List::@Nil() : () -> !adt.value<@List, [tensor<i32>]>
    %l = adt.construct @List::@Cons(%y, %n) : (tensor<i32>, !adt.value<@List, [tensor<i32>]>) -> !adt.value<@List, [tensor<i32>]>
    %m = adt.call @map(%f, %l) : ((tensor<i32>) -> tensor<i32>, !adt.value<@List, [tensor<i32>]>) -> !adt.value<@List, [tensor<i32>]>
    func.return %m : !adt.value<@List, [tensor<i32>]>
  }
}

// CHECK:      %fh = adt.apply %f(%h) : ((!adt.var<"A">) -> !adt.var<"B">)
// CHECK:      func.func @main(%a: tensor<i32>, %b: tensor<i32>)
// CHECK-NEXT:   %f = adt.closure @add_n(%b) : (tensor<i32>) -> ((tensor<i32>) -> tensor<i32>)
// CHECK-NEXT:   %y = adt.apply %f(%a) : ((tensor<i32>) -> tensor<i32>)
// CHECK:        %m = adt.call @map(%f, %l) : ((tensor<i32>) -> tensor<i32>, !adt.value<@List, [tensor<i32>]>) -> !adt.value<@List, [tensor<i32>]>
