// RUN: not relay-opt %s 2>&1 | filecheck %s

%s = memory.alloc_storage {size = 64, alignment = 64, colour = "red"}
// CHECK: memory.alloc_storage: unknown property 'colour' (known: size, alignment, kind, lifetime, pool, offset, pools, forbidden_pools, external)
