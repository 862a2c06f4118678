// Stands in for 3rdparty/cutlass_fpA_intB_gemm/tvm_binding/tvm_binding.cu. The tree we build
// from (tlc-pack/cutlass_fpA_intB_gemm f09824e) still binds through the pre-tvm-ffi API
// (tvm/runtime/packed_func.h, registry.h, TVM_REGISTER_GLOBAL), none of which exists in TVM
// v0.26.0, so that file cannot compile here and tvm/ must stay untouched. TVM v0.26 itself no
// longer calls these globals, but external call_dps_packed users (MLC-LLM style) do, so names and
// argument orders are upstream's exactly; only the glue to the FFI differs.

#include <cuda_runtime.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/extra/c_env_api.h>
#include <tvm/ffi/function.h>
#include <tvm/ffi/reflection/registry.h>
#include <tvm/ffi/string.h>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include <cutlass_kernels/fpA_intB_gemm.h>
#include <cutlass_kernels/moe_gemm/moe_gemm_kernels.h>

namespace fpa_intb_tvm {
namespace {

using tvm::ffi::TensorView;

// TensorView, not Tensor: it accepts an owning Tensor as well as a raw DLTensor* (what upstream's
// signatures took), and the call neither keeps nor frees the tensors.
template <typename T>
T* Ptr(const TensorView& t) {
  return reinterpret_cast<T*>(static_cast<char*>(t.data_ptr()) + t.byte_offset());
}

// The kernels launch on whatever stream TVM has made current for the tensor's device; reading it
// from the tensor (not cudaGetDevice) matches what v0.26's own contrib kernels do.
cudaStream_t StreamFor(const TensorView& t) {
  TVM_FFI_CHECK(t.device().device_type == kDLCUDA, ValueError)
      << "fastertransformer kernels need CUDA tensors, got device type " << t.device().device_type;
  return static_cast<cudaStream_t>(TVMFFIEnvGetStream(kDLCUDA, t.device().device_id));
}

void CheckGroupSize(int group_size, int k) {
  TVM_FFI_CHECK_GT(group_size, 0, ValueError);
  TVM_FFI_CHECK_LE(group_size, k, ValueError);
}

// A group spanning all of k is per-column scaling; anything smaller is fine-grained. The library
// only instantiates these two ops, so the choice has to be made at compile time per branch.
template <typename Fn>
void WithQuantOp(int group_size, int k, Fn&& fn) {
  using Op = cutlass::WeightOnlyQuantOp;
  if (group_size == k) {
    fn(std::integral_constant<Op, Op::PER_COLUMN_SCALE_ONLY>{});
  } else {
    fn(std::integral_constant<Op, Op::FINEGRAINED_SCALE_ONLY>{});
  }
}

// "identity" is how callers spell "no activation"; the kernel wants that as an empty optional.
std::optional<std::string> ActivationOrNone(const std::string& activation) {
  if (activation == "identity") return std::nullopt;
  return activation;
}

// Without a bias the kernel takes a null pointer and a zero stride.
void BiasAct(TensorView x, TensorView weight, TensorView scale, const cutlass::half_t* bias,
             const std::string& activation, int m, int n, int k, int group_size, int bias_stride,
             TensorView output) {
  CheckGroupSize(group_size, k);
  cudaStream_t stream = StreamFor(x);
  std::optional<std::string> activation_opt = ActivationOrNone(activation);
  WithQuantOp(group_size, k, [&](auto op) {
    constexpr auto quant_op = decltype(op)::value;
    fastertransformer::gemm_fp16_int_bias_act<cutlass::uint4b_t, quant_op>(
        Ptr<cutlass::half_t>(x), Ptr<cutlass::uint4b_t>(weight), Ptr<cutlass::half_t>(scale), bias,
        Ptr<cutlass::half_t>(output), activation_opt, m, n, k, group_size, bias_stride, nullptr, 0,
        stream);
  });
}

void GemmFp16Int(TensorView x, TensorView weight, TensorView scale, std::string activation, int m,
                 int n, int k, int group_size, TensorView output) {
  BiasAct(x, weight, scale, nullptr, activation, m, n, k, group_size, 0, output);
}

void GemmFp16IntBias(TensorView x, TensorView weight, TensorView scale, TensorView bias,
                     std::string activation, int m, int n, int k, int group_size, int bias_stride,
                     TensorView output) {
  BiasAct(x, weight, scale, Ptr<cutlass::half_t>(bias), activation, m, n, k, group_size,
          bias_stride, output);
}

void GemmFp16IntBiasResidual(TensorView x, TensorView weight, TensorView scale, TensorView bias,
                             TensorView residual, std::string activation, std::string binary_op,
                             std::string unary_op, int m, int n, int k, int group_size,
                             TensorView output) {
  CheckGroupSize(group_size, k);
  cudaStream_t stream = StreamFor(x);
  // Unlike the two above, this entry point takes the activation string as is ("identity"
  // included); the library resolves it itself.
  WithQuantOp(group_size, k, [&](auto op) {
    constexpr auto quant_op = decltype(op)::value;
    fastertransformer::gemm_fp16_int_bias_act_residual<cutlass::uint4b_t, quant_op>(
        Ptr<cutlass::half_t>(x), Ptr<cutlass::uint4b_t>(weight), Ptr<cutlass::half_t>(scale),
        Ptr<cutlass::half_t>(bias), Ptr<cutlass::half_t>(residual), Ptr<cutlass::half_t>(output),
        activation, binary_op, unary_op, m, n, k, group_size, nullptr, 0, stream);
  });
}

// `half` here is CUDA's ::half (__half), not fastertransformer::half (cutlass::half_t): the MoE
// translation units instantiate moe_gemm for the CUDA type, so the symbol must match that.
void MoeGemmFp16Fp16(TensorView x, TensorView weight, TensorView total_rows_before_expert,
                     int64_t total_rows, int64_t n, int64_t k, int num_experts, TensorView out) {
  cudaStream_t stream = StreamFor(x);
  fastertransformer::moe_gemm<half, half>(Ptr<half>(x), Ptr<half>(weight), nullptr, Ptr<half>(out),
                                          Ptr<int64_t>(total_rows_before_expert), total_rows, n, k,
                                          num_experts, stream);
}

void MoeGemmFp16Int(TensorView x, TensorView weight, TensorView scale,
                    TensorView total_rows_before_expert, int64_t total_rows, int64_t n, int64_t k,
                    int num_experts, int group_size, TensorView out) {
  cudaStream_t stream = StreamFor(x);
  // Only the per-column uint4 MoE kernel is instantiated by the library.
  TVM_FFI_CHECK(group_size == k, ValueError) << "group quantization not supported yet";
  fastertransformer::moe_gemm<half, cutlass::uint4b_t>(
      Ptr<half>(x), Ptr<cutlass::uint4b_t>(weight), Ptr<half>(scale), Ptr<half>(out),
      Ptr<int64_t>(total_rows_before_expert), total_rows, n, k, num_experts, stream);
}

}  // namespace
}  // namespace fpa_intb_tvm

TVM_FFI_STATIC_INIT_BLOCK() {
  namespace refl = tvm::ffi::reflection;
  refl::GlobalDef()
      .def("fastertransformer.gemm_fp16_int", fpa_intb_tvm::GemmFp16Int)
      .def("fastertransformer.gemm_fp16_int_bias", fpa_intb_tvm::GemmFp16IntBias)
      .def("fastertransformer.gemm_fp16_int_bias_residual", fpa_intb_tvm::GemmFp16IntBiasResidual)
      .def("fastertransformer.moe_gemm_fp16_fp16", fpa_intb_tvm::MoeGemmFp16Fp16)
      .def("fastertransformer.moe_gemm_fp16_int", fpa_intb_tvm::MoeGemmFp16Int);
}
