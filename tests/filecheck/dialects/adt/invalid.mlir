// RUN: relay-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

adt.type_def @List<A> {Cons(!adt.var<"A">, !adt.value<@List, [!adt.var<"A">]>), Nil}
// CHECK: adt.construct: Cons of !adt.value<@List, [tensor<i32>]> takes (tensor<i32>, !adt.value<@List, [tensor<i32>]>), got (tensor<f32>, !adt.value<@List, [tensor<i32>]>)
func.func @f(%x: tensor<f32>, %l: !adt.value<@List, [tensor<i32>]>) {
  %c = adt.construct @List::@Cons(%x, %l) : (tensor<f32>, !adt.value<@List, [tensor<i32>]>) -> !adt.value<@List, [tensor<i32>]>
  func.return
}

// -----

adt.type_def @List<A> {Cons(!adt.var<"A">, !adt.value<@List, [!adt.var<"A">]>), Nil}
// CHECK: adt.construct: @List has no constructor Snoc
func.func @f() {
  %c = adt.construct @List::@Snoc() : () -> !adt.value<@List, [tensor<i32>]>
  func.return
}

// -----

// CHECK: @T: constructor C uses type variable B, which is not a parameter of the type
adt.type_def @T<A> {C(!adt.var<"B">)}

// -----

adt.type_def @List<A> {Cons(!adt.var<"A">, !adt.value<@List, [!adt.var<"A">]>), Nil}
// CHECK: adt.match clause 0: constructor Cons has 2 fields, the pattern 1
func.func @f(%l: !adt.value<@List, [tensor<i32>]>) -> tensor<i32> {
  %h = adt.match %l : !adt.value<@List, [tensor<i32>]> -> (tensor<i32>) {
    case @Cons(var) {
    ^bb0(%x: tensor<i32>):
      adt.yield %x : tensor<i32>
    }
  }
  func.return %h : tensor<i32>
}

// -----

adt.type_def @List<A> {Cons(!adt.var<"A">, !adt.value<@List, [!adt.var<"A">]>), Nil}
// CHECK: adt.match clause 0: the pattern binds (tensor<i32>, !adt.value<@List, [tensor<i32>]>), the block takes (tensor<i32>)
func.func @f(%l: !adt.value<@List, [tensor<i32>]>) -> tensor<i32> {
  %h = adt.match %l : !adt.value<@List, [tensor<i32>]> -> (tensor<i32>) {
    case @Cons(var, var) {
    ^bb0(%x: tensor<i32>):
      adt.yield %x : tensor<i32>
    }
  }
  func.return %h : tensor<i32>
}

// -----

adt.type_def @List<A> {Cons(!adt.var<"A">, !adt.value<@List, [!adt.var<"A">]>), Nil}
func.func @hd(%l: !adt.value<@List, [!adt.var<"A">]>) -> !adt.var<"A"> {
  %h = adt.match %l : !adt.value<@List, [!adt.var<"A">]> -> (!adt.var<"A">) {
    case @Cons(var, _) {
    ^bb0(%x: !adt.var<"A">):
      adt.yield %x : !adt.var<"A">
    }
  }
  func.return %h : !adt.var<"A">
}
// CHECK: adt.call: types (!adt.value<@List, [tensor<i32>]>, tensor<f32>) do not instantiate @hd's
func.func @f(%l: !adt.value<@List, [tensor<i32>]>) -> tensor<f32> {
  %h = adt.call @hd(%l) : (!adt.value<@List, [tensor<i32>]>) -> tensor<f32>
  func.return %h : tensor<f32>
}

// -----

// CHECK: expected a pattern: '_', 'var', '@Constructor(...)' or '(...)'
func.func @f(%l: !adt.value<@List, [tensor<i32>]>) -> tensor<i32> {
  %h = adt.match %l : !adt.value<@List, [tensor<i32>]> -> (tensor<i32>) {
    case 3 {
      adt.yield %h : tensor<i32>
    }
  }
  func.return %h : tensor<i32>
}

// -----

// CHECK: adt.closure: (tensor<f32>) -> tensor<i32> with captures (tensor<i32>) does not instantiate @add_n's signature
builtin.module {
  func.func private @add_n(%x: tensor<i32>, %n: tensor<i32>) -> tensor<i32> {
    func.return %x : tensor<i32>
  }
  func.func @main(%b: tensor<i32>) -> ((tensor<f32>) -> tensor<i32>) {
    %f = adt.closure @add_n(%b) : (tensor<i32>) -> ((tensor<f32>) -> tensor<i32>)
    func.return %f : (tensor<f32>) -> tensor<i32>
  }
}

// -----

// CHECK: adt.apply: a function of type (tensor<i32>) -> tensor<i32> applied to (tensor<f32>)
builtin.module {
  func.func @main(%f: (tensor<i32>) -> tensor<i32>, %x: tensor<f32>) -> tensor<i32> {
    %y = "adt.apply"(%f, %x) : ((tensor<i32>) -> tensor<i32>, tensor<f32>) -> tensor<i32>
    func.return %y : tensor<i32>
  }
}
