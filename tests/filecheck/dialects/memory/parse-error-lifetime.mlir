// RUN: not relay-opt %s 2>&1 | filecheck %s

%s = memory.alloc_storage {size = 64, lifetime = [1, 2, 3]}
// CHECK: memory.alloc_storage: 'lifetime' must be [first, last]
