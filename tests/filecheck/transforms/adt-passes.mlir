// RUN: relay-opt %s -p dead-code-elimination | filecheck %s --check-prefix=DCE
// RUN: relay-opt %s -p remove-unused-functions | filecheck %s --check-prefix=RUF
// RUN: not relay-opt %s -p fuse-ops 2>&1 | filecheck %s --check-prefix=FUSE
// Passes on the adt dialect: dce drops an unused constructor and an unused match (pure when
// its clauses are); remove-unused-functions follows adt.call; fuse-ops refuses by name.

builtin.module {
  adt.type_def @List<A> {Cons(!adt.var<"A">, !adt.value<@List, [!adt.var<"A">]>), Nil}
  func.func @hd(%l: !adt.value<@List, [!adt.var<"A">]>) -> !adt.var<"A"> {
    %h = adt.match? %l : !adt.value<@List, [!adt.var<"A">]> -> (!adt.var<"A">) {
      case @Cons(var, _) {
      ^bb0(%x: !adt.var<"A">):
        adt.yield %x : !adt.var<"A">
      }
    }
    func.return %h : !adt.var<"A">
  }
  func.func @unused(%x: tensor<i32>) -> tensor<i32> {
    func.return %x : tensor<i32>
  }
  func.func @main(%x: tensor<i32>) -> tensor<i32> {
    %n = adt.construct @List::@Nil() : () -> !adt.value<@List, [tensor<i32>]>
    %dead = adt.construct @List::@Cons(%x, %n) : (tensor<i32>, !adt.value<@List, [tensor<i32>]>) -> !adt.value<@List, [tensor<i32>]>
    %l = adt.construct @List::@Cons(%x, %n) : (tensor<i32>, !adt.value<@List, [tensor<i32>]>) -> !adt.value<@List, [tensor<i32>]>
    %unused = adt.match %l : !adt.value<@List, [tensor<i32>]> -> (tensor<i32>) {
      case _ {
        adt.yield %x : tensor<i32>
      }
    }
    %h = adt.call @hd(%l) : (!adt.value<@List, [tensor<i32>]>) -> tensor<i32>
    func.return %h : tensor<i32>
  }
}

// DCE:      func.func @main(%x: tensor<i32>) -> tensor<i32> {
// DCE-NEXT:   %n = adt.construct @List::@Nil() : () -> !adt.value<@List, [tensor<i32>]>
// DCE-NEXT:   %l = adt.construct @List::@Cons(%x, %n)
// DCE-NEXT:   %h = adt.call @hd(%l) : (!adt.value<@List, [tensor<i32>]>) -> tensor<i32>
// DCE-NEXT:   func.return %h : tensor<i32>

// RUF:     adt.type_def @List<A>
// RUF:     func.func @hd(
// RUF-NOT: func.func @unused
// RUF:     func.func @main(

// FUSE: fuse-ops: @hd uses Relay's algebraic data types ('adt.match'); fusion handles tensors only
