// RUN: relay-opt %s --split-input-file --parsing-diagnostics | filecheck %s

// Bad virtual devices: each is one message at its place.

%x = "test.op"() : () -> tensor<4xf32>
%y = relay.on_device %x {virtual_device = #relay.virtual_device<cpu(-1)>} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: Expected integer literal

// -----

%x = "test.op"() : () -> tensor<4xf32>
%y = relay.on_device %x {virtual_device = #relay.virtual_device<cpu, foo = "x">} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: virtual device has no field 'foo' (fields: target, memory_scope)

// -----

%x = "test.op"() : () -> tensor<4xf32>
%y = relay.on_device %x {virtual_device = #relay.virtual_device<>} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: identifier expected for a device name (cpu, cuda, ...) or '?'

// -----

%x = "test.op"() : () -> tensor<4xf32>
%y = relay.on_device %x {virtual_device = #relay.virtual_device<cpu(0), memory_scope = 3>} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: string literal expected

// -----

%x = "test.op"() : () -> tensor<4xf32>
%y = relay.on_device %x {virtual_device = "tpu"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: attribute 'virtual_device': unknown device 'tpu' (known: cpu, cuda,

// -----

%x = "test.op"() : () -> tensor<4xf32>
%y = relay.on_device %x {virtual_device = 2.5} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: attribute 'virtual_device'

// -----

%x = "test.op"() : () -> tensor<4xf32>
%y = relay.device_copy %x {src_virtual_device = "cpu"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: relay.device_copy: attribute 'dst_virtual_device' is required

// -----

memory.pool @p {device = 3}
// CHECK: memory.pool: 'device' must be a #relay.virtual_device
