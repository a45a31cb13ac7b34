// RUN: relay-opt %s -p 'relay-build{opt-level=3 engines=dnnl,native},lower-to-memory,alias-slices' | filecheck %s

// An ONNX LSTM (8 steps, batch 4, 6 -> 8, with bias) as the importer unrolls it: the input
// projection of every step is one dense, split into the steps' pieces, each reshaped by a
// step of its own. The reshapes become views of the pieces first; the split, whose pieces
// then live as long as their readers, becomes views of the projection on the second sweep
// (on the first, holding the projection beside the reshapes' copies would have raised the
// peak): no copy of the projection is left.

// CHECK:      %[[P:.*]] = memory.alloc_storage {size = 4096, alignment = 64, kind = "intermediate", lifetime = [0, 28]}
// CHECK-NEXT: %[[Y:.*]] = memory.alloc_tensor %[[P]] {offset = 0} : tensor<32x32xf32>
// CHECK:      memory.invoke @tvmgen_default_dnnl_main_0({{.*}}) outs(%[[Y]])
// CHECK:      memory.alloc_tensor %[[P]] {offset = 0} : tensor<1x128xf32>
// CHECK-NEXT: memory.alloc_tensor %[[P]] {offset = 512} : tensor<1x128xf32>
// CHECK-NOT:  memory.invoke @fused_reshape_split
// CHECK-NOT:  memory.invoke @fused_reshape(
// CHECK:      memory.invoke @fused_reshape_add_split

builtin.module {
  func.func @main(%X: tensor<8x4x6xf32>) -> tensor<8x1x4x8xf32> {
    %0 = relay.reshape %X {newshape = [32, 6]} : (tensor<8x4x6xf32>) -> tensor<32x6xf32>
    %1 = relay.constant dense<"0x6CBF003E7F4607BEBDF2233FDFD5D63DA12109BFFD22B93E79E9A63FE673723FFE2734BF55F9A1BFEA8E1FBF6E45293D4ECD14C0EC0A60BE037A9FBFE0753BBF8F540BBF18F2A1BE3DC1D23E1471853F979E03BE46E8AE3F334A2ABF21F9B33ED249673F8589C03DF8553EBF32F66BBF0A5BEABED57A613E2B3B81BF1F3256BEE20B23BEDB740A3F9ACF5B3E69F3B53E506127BF70B904BE9EB2483FC028BF3F0F29A1BF41C8C13FA545AC3F0604483FBA66873E7EBAA0BE6CA0BA3FBFE9FA3FF99BE63F5255A83F91FAB63E2FAA9ABFFAF391BBBE0E283F07E9A4BF704DCA3E1817DC3EDB2F323F2D9197BF576529BF7174DFBE12BC95BF9BA3DE3F03E8FDBEB56EA83E9F6384BE3DAFCA3F9701A93F6623223F4E060DC0551C553D0F062F3FD081803F282F1EBFAB37E93FE203A9BFE75929BF705F6F3F7EED483D332700402D0B413E021922BF0150C1BEADAA8BBF068BA3BFA662213F48C7143F1AB4A53FD82D41BFAC34D83F7B2493BE3686C93F1B96DDBEA2483CBFBDC77F3EA806843FB2DF243E38E515BF16ADABBF0465B3BFD3AF003FD55D7D3FD73C28BECA8489BFB17F5F3FF3E3A3BFA18B36BF07FB1E3F500210C03CD2C53E6AE614BF09CEDF3D67099BBD13F74E3E41B5313F852442BFBDE2B53F48E1393FDDFE573F431A953F629F493F8A15583FD3D09A3D87A0B6BF43490ABEE9FE44BF671CB6BFED53843E758C11BFA2D083BF0F8185BFF76D893EDAA3B73E4946A93F5AFA63BC015B853F6A7DB33FA138933F246117C082459D3FACE2AD3E8FF8D83E8511BE3EBFF8C33E438AA33E7CC3B7BEC968F3BFAF0EDFBD5FC14DBFCB428A3F34D993BE21F5AA3DC77F59BF27B802BF2BF53CBCC620BEBF66F3993E693CD9BDABC597BFA67C19C06257033FEF5C98BEA2AE07BF85D271BE4982E83F1AFC4BBD7165B13D6758BEBF02DCD23F7EE06A3F5291883F7B44433DE3A96A3FBEECBD3EF6F91C3F79D81BBE5CA8BCBF80B1833FC2ACF7BFF5B175BE586E51BE717C85BFA3F51C3F3B234DBE35ADDFBE5914053F2B02F4BE19CAB13FEBF1B33EC6DBF2BEADDDF8BF7564A7BF"> : tensor<32x6xf32>
    %2 = relay.nn.dense %0, %1 {units = 32} : (tensor<32x6xf32>, tensor<32x6xf32>) -> tensor<32x32xf32>
    %3 = relay.constant dense<[1.11007822, 1.74601674, -0.185125977, 0.520258904, 0.138715982, -1.27786589, -1.06290722, -1.17331421, 0.463705659, 1.17466283, -0.87506628, 0.928822219, -1.0797925, -2.61440015, 0.094142437, -7.417220e-01, 0.854532838, 0.997104645, -2.14060259, 0.230451092, 0.995132565, 0.108697921, -4.196230e+00, -1.58612132, 1.04219449, 1.81476307, 0.150884122, 1.84208894, 0.327342033, -0.961153805, -4.18982172, 0.606243968]> : tensor<32xf32>
    %4 = relay.add %2, %3 : (tensor<32x32xf32>, tensor<32xf32>) -> tensor<32x32xf32>
    %5 = relay.reshape %4 {newshape = [8, 128]} : (tensor<32x32xf32>) -> tensor<8x128xf32>
    %6, %7, %8, %9, %10, %11, %12, %13 = relay.split %5 {indices_or_sections = 8} : (tensor<8x128xf32>) -> (tensor<1x128xf32>, tensor<1x128xf32>, tensor<1x128xf32>, tensor<1x128xf32>, tensor<1x128xf32>, tensor<1x128xf32>, tensor<1x128xf32>, tensor<1x128xf32>)
    %14 = relay.reshape %6 {newshape = [4, 32]} : (tensor<1x128xf32>) -> tensor<4x32xf32>
    %15 = relay.reshape %7 {newshape = [4, 32]} : (tensor<1x128xf32>) -> tensor<4x32xf32>
    %16 = relay.reshape %8 {newshape = [4, 32]} : (tensor<1x128xf32>) -> tensor<4x32xf32>
    %17 = relay.reshape %9 {newshape = [4, 32]} : (tensor<1x128xf32>) -> tensor<4x32xf32>
    %18 = relay.reshape %10 {newshape = [4, 32]} : (tensor<1x128xf32>) -> tensor<4x32xf32>
    %19 = relay.reshape %11 {newshape = [4, 32]} : (tensor<1x128xf32>) -> tensor<4x32xf32>
    %20 = relay.reshape %12 {newshape = [4, 32]} : (tensor<1x128xf32>) -> tensor<4x32xf32>
    %21 = relay.reshape %13 {newshape = [4, 32]} : (tensor<1x128xf32>) -> tensor<4x32xf32>
    %22 = relay.constant dense<0.000000e+00> : tensor<4x32xf32>
    %23 = relay.add %14, %22 : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
    %24, %25, %26, %27 = relay.split %23 {indices_or_sections = 4, axis = 1} : (tensor<4x32xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
    %28 = relay.sigmoid %24 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %29 = relay.sigmoid %26 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %30 = relay.tanh %27 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %31 = relay.constant dense<0.000000e+00> : tensor<4x8xf32>
    %32 = relay.multiply %29, %31 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %33 = relay.multiply %28, %30 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %34 = relay.add %32, %33 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %35 = relay.sigmoid %25 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %36 = relay.tanh %34 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %37 = relay.multiply %35, %36 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %38 = relay.constant dense<"0x451D8B3F35464FBDC5F590BE1256D23FDA2DA4BFABED15BF03F7F1BE331A163F71DD29BFF4081DBF8975CDBFA4B63A3F265F4E3FA7E7F3BE9642273E6E75A5BF7E91F1BEB260B03FFFFC0A3EFFDC1340778549BF858D143FAE3248BE70D9103F454DECBBAEAA0FBF221C5EBFF239444016679EBDF81001C0B00A26BF03942D3F8D0000BF1A23AE3F964E803FA9FE1BBE4AC6F1BE529D80BF023133BFF48FBCBFA8299A3F159CCB3F22C9A0BF634197BF995EE2BF27BF76BF39CE46C0323692BF5301A63FFDFBB0BE08C65A3F275AFABE8C5DE13FCDFF4B3ECE95C3BEEA5A23402D21A6BE0C519CBF7FC14E3E7D111FBD537D883F33F06BBFEE014E3FB94D5A3F8EED2ABF7029273E29AC54BFB82116407E4234BF60F9E7BE616D88BFCF36B1BEAF8BC0BBD48D443FDA481CBF873B3EBE864FB5BFA2D053BF275F30407547853F680B48BFD52FABBFCCBF79BF08B1B1BCBA3E0E3D6B8E3EBF79AEA4BF8010B63F5143E73E61C7BFBE03F561BE4F8F07BF2BE83BC01CE0EC3D990789BFF65780BF3DE823BF20783B3FF4D395BF8996B7BF58CD233F521E413FAE7C75BF4BF90F3FD95095BEF8429A3E2567A1BF9238553F64049A3F3B17233F5EEF0E3FF56C71C04371853EB272D0BC199316BE8F6D21BF62C6623D0D01D33E3E0F87BED238EDBE93689D3FAB7C8DBF20DC833F540E353EFAE64DBF827894BEB3846BBF07D12C3F2E20B23E328A0EBF7D158DBF887A9A3E3917753F0823E9BD4D32D63EA186C0BEB9618A3D092395BEB18C963E3A40C1BFACE9243F6C736BBE7A9BB73E213DAEBE6206A43EBD4989BF3636983FC00DDABFC70585BF7252713E6A3EBB3F92668E3EB7DB7DBE5B69B6BF08DE43BE1DD5A2BC8E64D83F99431F3F51B9C3BFC0B60140BC3ECABE462461BFFDC6BC3FB2CC4BBD321CBCBE6F09603EA24A583F484B7E3FA206B0BF3ECEFF3F8565723FA426C2BEB19351BF331178BFD6ADFC3D65E425BFC8CE43BF5EAE4F3F92A8BA3E3E05CABEA7F73B3F4306AF3F75188CBF56711ABFAA4F713F7D0C383FBF23683E38CA943F864A8BBF6354BDBF6DD35DBF66F8FA3D58CC4BBFA874F9BE9C9979BF72D41EBFDE9C80BF8824BC3EFB7D4B3F03FDF5BE7C3D54BE8DBE14BF1400083F0363B63D550DCC3F6D388CBFED99B93ED752E33E9D8BB8BE7E62153F8321B8BF789A07401DC8ABBF7D786B3FF3808FBF2350933F1A01C5BE9D39223EFB7E5A3DDBE48C3FDEA1A4BE57E63DC0369342BF151F3C3E0C85E1BEFB12453F3CF6813F7E5117BEB3ACBEBF532CB13F7FA18A3F952F99BE33EE0640CE9FB2BE248D91BF499D1FBE75F6893FF3FC6FBFBEC1F93FBE8265BF0555743FE3610B3F22C11DBEE84E8A3F68F9BFBFEAC4AD3FC66C82BD09DD0ABFDFC93F3FC5AA873F5011453FBEEFFF3F3B558A3FF249A43F86340ABF2329DA3D"> : tensor<32x8xf32>
    %39 = relay.nn.dense %37, %38 {units = 32} : (tensor<4x8xf32>, tensor<32x8xf32>) -> tensor<4x32xf32>
    %40 = relay.add %15, %39 : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
    %41, %42, %43, %44 = relay.split %40 {indices_or_sections = 4, axis = 1} : (tensor<4x32xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
    %45 = relay.sigmoid %41 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %46 = relay.sigmoid %43 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %47 = relay.tanh %44 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %48 = relay.multiply %46, %34 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %49 = relay.multiply %45, %47 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %50 = relay.add %48, %49 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %51 = relay.sigmoid %42 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %52 = relay.tanh %50 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %53 = relay.multiply %51, %52 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %54 = relay.nn.dense %53, %38 {units = 32} : (tensor<4x8xf32>, tensor<32x8xf32>) -> tensor<4x32xf32>
    %55 = relay.add %16, %54 : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
    %56, %57, %58, %59 = relay.split %55 {indices_or_sections = 4, axis = 1} : (tensor<4x32xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
    %60 = relay.sigmoid %56 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %61 = relay.sigmoid %58 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %62 = relay.tanh %59 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %63 = relay.multiply %61, %50 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %64 = relay.multiply %60, %62 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %65 = relay.add %63, %64 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %66 = relay.sigmoid %57 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %67 = relay.tanh %65 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %68 = relay.multiply %66, %67 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %69 = relay.nn.dense %68, %38 {units = 32} : (tensor<4x8xf32>, tensor<32x8xf32>) -> tensor<4x32xf32>
    %70 = relay.add %17, %69 : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
    %71, %72, %73, %74 = relay.split %70 {indices_or_sections = 4, axis = 1} : (tensor<4x32xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
    %75 = relay.sigmoid %71 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %76 = relay.sigmoid %73 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %77 = relay.tanh %74 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %78 = relay.multiply %76, %65 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %79 = relay.multiply %75, %77 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %80 = relay.add %78, %79 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %81 = relay.sigmoid %72 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %82 = relay.tanh %80 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %83 = relay.multiply %81, %82 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %84 = relay.nn.dense %83, %38 {units = 32} : (tensor<4x8xf32>, tensor<32x8xf32>) -> tensor<4x32xf32>
    %85 = relay.add %18, %84 : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
    %86, %87, %88, %89 = relay.split %85 {indices_or_sections = 4, axis = 1} : (tensor<4x32xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
    %90 = relay.sigmoid %86 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %91 = relay.sigmoid %88 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %92 = relay.tanh %89 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %93 = relay.multiply %91, %80 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %94 = relay.multiply %90, %92 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %95 = relay.add %93, %94 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %96 = relay.sigmoid %87 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %97 = relay.tanh %95 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %98 = relay.multiply %96, %97 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %99 = relay.nn.dense %98, %38 {units = 32} : (tensor<4x8xf32>, tensor<32x8xf32>) -> tensor<4x32xf32>
    %100 = relay.add %19, %99 : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
    %101, %102, %103, %104 = relay.split %100 {indices_or_sections = 4, axis = 1} : (tensor<4x32xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
    %105 = relay.sigmoid %101 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %106 = relay.sigmoid %103 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %107 = relay.tanh %104 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %108 = relay.multiply %106, %95 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %109 = relay.multiply %105, %107 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %110 = relay.add %108, %109 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %111 = relay.sigmoid %102 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %112 = relay.tanh %110 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %113 = relay.multiply %111, %112 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %114 = relay.nn.dense %113, %38 {units = 32} : (tensor<4x8xf32>, tensor<32x8xf32>) -> tensor<4x32xf32>
    %115 = relay.add %20, %114 : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
    %116, %117, %118, %119 = relay.split %115 {indices_or_sections = 4, axis = 1} : (tensor<4x32xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
    %120 = relay.sigmoid %116 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %121 = relay.sigmoid %118 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %122 = relay.tanh %119 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %123 = relay.multiply %121, %110 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %124 = relay.multiply %120, %122 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %125 = relay.add %123, %124 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %126 = relay.sigmoid %117 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %127 = relay.tanh %125 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %128 = relay.multiply %126, %127 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %129 = relay.nn.dense %128, %38 {units = 32} : (tensor<4x8xf32>, tensor<32x8xf32>) -> tensor<4x32xf32>
    %130 = relay.add %21, %129 : (tensor<4x32xf32>, tensor<4x32xf32>) -> tensor<4x32xf32>
    %131, %132, %133, %134 = relay.split %130 {indices_or_sections = 4, axis = 1} : (tensor<4x32xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
    %135 = relay.sigmoid %131 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %136 = relay.sigmoid %133 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %137 = relay.tanh %134 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %138 = relay.multiply %136, %125 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %139 = relay.multiply %135, %137 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %140 = relay.add %138, %139 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %141 = relay.sigmoid %132 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %142 = relay.tanh %140 : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %143 = relay.multiply %141, %142 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    %144 = relay.stack %37, %53, %68, %83, %98, %113, %128, %143 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x4x8xf32>
    %Y = relay.stack %144 {axis = 1} : (tensor<8x4x8xf32>) -> tensor<8x1x4x8xf32>
    %145 = relay.stack %143 : (tensor<4x8xf32>) -> tensor<1x4x8xf32>
    %146 = relay.stack %140 : (tensor<4x8xf32>) -> tensor<1x4x8xf32>
    func.return %Y : tensor<8x1x4x8xf32>
  }
}
