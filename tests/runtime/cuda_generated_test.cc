// The cuda backend's generated kernels, checked on the CPU.
//  - Every generated function compiles with NVRTC for sm_80 and sm_90 with no local-memory spills
//    (ptxas's report, as codegen records it in the plan).
//  - The same function bodies, compiled as host C++ (GCOMP_HOST_EMULATION: one thread walking every
//    item, the same index arithmetic), compute what the cpu backend's kernels compute for the same
//    steps: transposes, strided slices, casts, pools, means, broadcasting arithmetic, activations,
//    vectorized copies; im2col against a direct loop, grouped and not.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "codegen/device_compiler.h"
#include "core/dtype.h"
#include "gtest/gtest.h"
#include "runtime/cpu/kernel_table.h"
#include "runtime/cuda/cuda_kernels.h"
#include "runtime/cuda/device_kernels.h"
#include "runtime/op_geometry.h"

namespace gcomp::cuda {
namespace {

using runtime::KernelSpec;
using runtime::Operand;

// The host emulation: the generated functions compiled as host C++, run as real SIMT threads. A
// block is `block` std::threads (one block at a time, so `__shared__` arrays can be statics);
// __syncthreads is a block barrier; warp shuffles and mma.sync exchange registers through a
// per-warp barrier. The emulated mma implements the m16n8k16 fragment layout of the PTX ISA
// (groupID = lane / 4, threadID_in_group = lane % 4) independently of the kernels that use it.
constexpr char kHostEmulation[] = R"(#include <math.h>
#include <string.h>
#include <immintrin.h>
#include <barrier>
#include <memory>
#include <thread>
#include <vector>
#define GCOMP_HOST_EMULATION
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
struct uint4 { unsigned int x, y, z, w; };
struct uint2 { unsigned int x, y; };
struct uint1 { unsigned int x; };
struct gc_dim3 { unsigned int x = 0, y = 0, z = 0; };
static thread_local gc_dim3 threadIdx, blockIdx;
static gc_dim3 blockDim, gridDim;
struct gc_warp_state { std::barrier<> bar{32}; unsigned int slot[32][8]; };
struct gc_block_state {
  explicit gc_block_state(int threads) : bar(threads), warps(new gc_warp_state[threads / 32]) {}
  std::barrier<> bar;
  std::unique_ptr<gc_warp_state[]> warps;
};
static thread_local gc_block_state* gc_block;
static inline gc_warp_state& gc_warp() { return gc_block->warps[threadIdx.x / 32]; }
static inline void __syncthreads() { gc_block->bar.arrive_and_wait(); }
static inline float __uint_as_float(unsigned int u) { float f; memcpy(&f, &u, 4); return f; }
static inline unsigned int __float_as_uint(float f) { unsigned int u; memcpy(&u, &f, 4); return u; }
static inline float __int_as_float(int u) { float f; memcpy(&f, &u, 4); return f; }
static inline float gc_h2f(unsigned short h) { return _cvtsh_ss(h); }
static inline unsigned short gc_f2h(float f) { return _cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT); }
static inline float gc_b2f(unsigned short b) { return __uint_as_float(((unsigned int)b) << 16); }
static inline unsigned short gc_f2b(float f) {
  unsigned int u; memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (unsigned short)(u >> 16);
}
static inline long long gc_first() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }
static inline long long gc_stride() { return (long long)gridDim.x * blockDim.x; }
#define GC_WARP 32
static inline int gc_lane() { return threadIdx.x & 31; }
static inline long long gc_warp_first() { return gc_first() >> 5; }
static inline long long gc_warp_stride() { return gc_stride() >> 5; }
static inline float gc_shfl_xor(float v, int o) {
  gc_warp_state& w = gc_warp();
  w.slot[gc_lane()][0] = __float_as_uint(v);
  w.bar.arrive_and_wait();
  const float r = __uint_as_float(w.slot[gc_lane() ^ o][0]);
  w.bar.arrive_and_wait();
  return r;
}
static inline float gc_warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += gc_shfl_xor(v, o);
  return v;
}
static inline unsigned int gc_ld2(const unsigned short* p) { unsigned int v; memcpy(&v, p, 4); return v; }
static inline void gc_st2(unsigned short* p, unsigned int v) { memcpy(p, &v, 4); }
template <float (*ToFloat)(unsigned short)>
static void gc_mma(float* d, const unsigned int* a, unsigned int b0, unsigned int b1) {
  gc_warp_state& w = gc_warp();
  const int lane = gc_lane();
  for (int i = 0; i < 4; ++i) w.slot[lane][i] = a[i];
  w.slot[lane][4] = b0;
  w.slot[lane][5] = b1;
  w.bar.arrive_and_wait();
  auto half = [&](int l, int reg, int k) { return ToFloat((unsigned short)(w.slot[l][reg] >> (16 * (k & 1)))); };
  const int g = lane >> 2, t = lane & 3;
  for (int i = 0; i < 4; ++i) {
    const int row = g + (i >= 2 ? 8 : 0), col = 2 * t + (i & 1);
    float acc = d[i];
    for (int k = 0; k < 16; ++k) {
      const float x = half((row % 8) * 4 + (k % 8) / 2, (row >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0), k);
      const float y = half(col * 4 + (k % 8) / 2, k >= 8 ? 5 : 4, k);
      acc += x * y;
    }
    d[i] = acc;
  }
  w.bar.arrive_and_wait();
}
static inline void gc_mma_f16(float* d, const unsigned int* a, unsigned int b0, unsigned int b1) { gc_mma<gc_h2f>(d, a, b0, b1); }
static inline void gc_mma_bf16(float* d, const unsigned int* a, unsigned int b0, unsigned int b1) { gc_mma<gc_b2f>(d, a, b0, b1); }
)";

// After the generated functions (it needs their GcompArgs): runs `fn` over a grid of `grid` blocks
// of `block` threads, one block after another.
constexpr char kHostLauncher[] = R"(
extern "C" void gc_emulate(void (*fn)(GcompArgs), const GcompArgs* args, int grid, int block) {
  gridDim.x = grid;
  blockDim.x = block;
  for (int b = 0; b < grid; ++b) {
    gc_block_state state(block);
    std::vector<std::thread> threads;
    for (int t = 0; t < block; ++t) {
      threads.emplace_back([&, t] {
        threadIdx.x = t;
        blockIdx.x = b;
        gc_block = &state;
        fn(*args);
        gc_warp().bar.arrive_and_drop();
        state.bar.arrive_and_drop();
      });
    }
    for (std::thread& t : threads) t.join();
  }
}
)";

struct Case {
  std::string name;
  std::string op;
  Attributes attrs;
  std::vector<Operand> inputs;  // constants: bytes in `constants`
  std::vector<std::vector<uint8_t>> constants;
  Operand output;
  double tolerance = 0;  // relative; 0: the storage type's rounding
};

Operand Batched(DType t, std::vector<int64_t> dims) {
  Operand o;
  o.dtype = t;
  o.dims = std::move(dims);
  o.per_batch.assign(o.dims.size(), 0);
  o.per_batch[0] = 1;
  return o;
}

std::vector<uint8_t> Ints(const std::vector<int64_t>& v) {
  std::vector<uint8_t> b(v.size() * 8);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

std::vector<uint8_t> RandomBytes(DType t, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-2.0f, 2.0f);
  std::vector<uint8_t> out(static_cast<size_t>(n) * DTypeSize(t));
  for (int64_t i = 0; i < n; ++i) {
    const float f = d(rng);
    if (t == DType::kF32) {
      std::memcpy(out.data() + i * 4, &f, 4);
    } else {
      const uint16_t h = t == DType::kF16 ? FloatToHalf(f) : FloatToBFloat16(f);
      std::memcpy(out.data() + i * 2, &h, 2);
    }
  }
  return out;
}

float ToFloat(DType t, const uint8_t* p) {
  if (t == DType::kF32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return t == DType::kF16 ? HalfToFloat(h) : BFloat16ToFloat(h);
}

using Args = GeneratedArgs;  // GcompArgs as the host lays them out

// Compiles the generated sources as host C++ and returns the loaded library.
class HostModule {
 public:
  explicit HostModule(const std::vector<runtime::DeviceSource>& sources) {
    // A fresh path per module: a library with thread-local state stays loaded after dlclose, and
    // dlopen of the same path would return it again.
    static int serial = 0;
    dir_ = std::filesystem::temp_directory_path() /
           ("gcomp_emul_" + std::to_string(::getpid()) + "_" + std::to_string(serial++));
    std::filesystem::create_directories(dir_);
    const std::string src = (dir_ / "kernels.cc").string(), lib = (dir_ / "kernels.so").string();
    std::ofstream(src) << kHostEmulation << codegen::DeviceTranslationUnit(sources) << kHostLauncher;
    const std::string cmd = "c++ -std=c++20 -O1 -mf16c -pthread -shared -fPIC -w -o " + lib + " " + src + " 2> " +
                            (dir_ / "log.txt").string();
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream log(dir_ / "log.txt");
      error_ = std::string(std::istreambuf_iterator<char>(log), {});
      return;
    }
    handle_ = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) error_ = dlerror();
  }
  ~HostModule() {
    if (handle_) dlclose(handle_);
    std::filesystem::remove_all(dir_);
  }
  const std::string& error() const { return error_; }
  void* Find(const std::string& name) const { return handle_ ? dlsym(handle_, name.c_str()) : nullptr; }
  // Runs kernel `k` as the executor launches it, on at most 3 blocks (so that the grid-stride
  // loops take more than one turn).
  bool Run(const GeneratedKernel& k, const Args& args) const {
    void* fn = Find(k.code.name);
    auto emulate = reinterpret_cast<void (*)(void*, const Args*, int, int)>(Find("gc_emulate"));
    if (!fn || !emulate) return false;
    const int64_t threads = args.total * k.threads_per_item;
    const int grid = static_cast<int>(std::clamp<int64_t>((threads + k.block - 1) / k.block, 1, 3));
    emulate(fn, &args, grid, k.block);
    return true;
  }

 private:
  std::filesystem::path dir_;
  void* handle_ = nullptr;
  std::string error_;
};


constexpr int64_t kBatch = 2;  // every case's batch size (its batch-dependent dims are at it)

std::vector<Case> Cases() {
  std::vector<Case> cases;
  auto add = [&](std::string name, std::string op, Attributes attrs, std::vector<Operand> ins, Operand out,
                 std::vector<std::vector<uint8_t>> constants = {}, double tolerance = 0) {
    cases.push_back(
        {std::move(name), std::move(op), std::move(attrs), std::move(ins), std::move(constants), out, tolerance});
  };
  {
    Attributes a;
    a.Set("perm", std::vector<int64_t>{0, 2, 3, 1});
    add("transpose_nchw_nhwc", "Transpose", a, {Batched(DType::kF32, {2, 3, 5, 7})},
        Batched(DType::kF32, {2, 5, 7, 3}));
  }
  {
    Attributes a;
    a.Set("to", std::string("f16"));
    add("cast_f32_f16", "Cast", a, {Batched(DType::kF32, {2, 6, 5})}, Batched(DType::kF16, {2, 6, 5}));
    Attributes b;
    b.Set("to", std::string("bf16"));
    add("cast_f16_bf16", "Cast", b, {Batched(DType::kF16, {2, 33})}, Batched(DType::kBF16, {2, 33}));
  }
  {
    // The strided downsample of a 1x1 stride-2 convolution: NHWC [2, 9, 9, 16] -> [2, 5, 5, 16].
    Operand starts{true, DType::kI64, {2}}, ends{true, DType::kI64, {2}}, axes{true, DType::kI64, {2}},
        steps{true, DType::kI64, {2}};
    add("slice_stride2", "Slice", {},
        {Batched(DType::kF16, {2, 9, 9, 16}), starts, ends, axes, steps}, Batched(DType::kF16, {2, 5, 5, 16}),
        {{}, Ints({0, 0}), Ints({INT64_MAX, INT64_MAX}), Ints({1, 2}), Ints({2, 2})});
  }
  {
    Attributes a;
    a.Set("kind", std::string("max"));
    a.Set("layout", std::string("NHWC"));
    a.Set("kernel_shape", std::vector<int64_t>{3, 3});
    a.Set("strides", std::vector<int64_t>{2, 2});
    a.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
    add("pool_max_nhwc_f16", "Pool", a, {Batched(DType::kF16, {2, 9, 9, 8})}, Batched(DType::kF16, {2, 5, 5, 8}));
    Attributes b = a;
    b.Set("kind", std::string("average"));
    b.Set("layout", std::string("NCHW"));
    add("pool_avg_nchw", "Pool", b, {Batched(DType::kF32, {2, 3, 9, 9})}, Batched(DType::kF32, {2, 3, 5, 5}));
    Attributes c = b;
    c.Set("count_include_pad", int64_t{1});
    add("pool_avg_pad_nchw", "Pool", c, {Batched(DType::kBF16, {2, 3, 9, 9})}, Batched(DType::kBF16, {2, 3, 5, 5}));
    add("global_avg", "GlobalAveragePool", {}, {Batched(DType::kF32, {2, 4, 6, 5})},
        Batched(DType::kF32, {2, 4, 1, 1}));
  }
  {
    Attributes a;
    a.Set("axes", std::vector<int64_t>{1, 2});
    a.Set("keepdims", int64_t{0});
    add("reduce_mean_hw", "ReduceMean", a, {Batched(DType::kF16, {2, 7, 7, 16})}, Batched(DType::kF16, {2, 16}));
  }
  {
    Operand bias{true, DType::kF32, {6}};
    bias.per_batch = {0};
    add("add_broadcast", "Add", {}, {Batched(DType::kF32, {2, 4, 6}), bias}, Batched(DType::kF32, {2, 4, 6}),
        {{}, RandomBytes(DType::kF32, 6, 7)});
    add("mul_broadcast", "Mul", {}, {Batched(DType::kF16, {2, 4, 6}), Batched(DType::kF16, {2, 1, 6})},
        Batched(DType::kF16, {2, 4, 6}));
    add("relu", "Relu", {}, {Batched(DType::kBF16, {2, 40})}, Batched(DType::kBF16, {2, 40}));
    add("copy_vectorized", "Identity", {}, {Batched(DType::kF16, {2, 64})}, Batched(DType::kF16, {2, 64}));
  }
  {
    // The ViT class token: concat with the patches, later gathered back; and a dynamic shape.
    Attributes cat;
    cat.Set("axis", int64_t{1});
    add("concat_class_token", "Concat", cat, {Batched(DType::kF16, {2, 1, 8}), Batched(DType::kF16, {2, 4, 8})},
        Batched(DType::kF16, {2, 5, 8}));
    Attributes g;
    g.Set("axis", int64_t{1});
    Operand index{true, DType::kI64, {}};
    index.per_batch = {};
    add("gather_class_token", "Gather", g, {Batched(DType::kBF16, {2, 5, 8}), index}, Batched(DType::kBF16, {2, 8}),
        {{}, Ints({0})});
    Operand shape{true, DType::kI64, {3}};
    shape.per_batch = {0};
    add("shape_dynamic", "Shape", {}, {Batched(DType::kF32, {2, 5, 6})}, shape);
  }
  {
    Attributes ln;
    ln.Set("axis", int64_t{-1});
    ln.Set("epsilon", 1e-6f);
    Operand gamma{true, DType::kF32, {40}}, beta{true, DType::kF32, {40}};
    gamma.per_batch = beta.per_batch = {0};
    add("layernorm_f16", "LayerNorm", ln, {Batched(DType::kF16, {2, 3, 40}), gamma, beta},
        Batched(DType::kF16, {2, 3, 40}), {{}, RandomBytes(DType::kF32, 40, 11), RandomBytes(DType::kF32, 40, 12)});
    // Rows of whole 16-byte chunks per lane: the vectorized kernel (ViT-B's 768 in fp32, 6 chunks
    // per lane; fp16 and bf16 rows of 256 and 512).
    for (const auto& [t, len] : {std::pair{DType::kF32, int64_t{768}}, std::pair{DType::kF16, int64_t{256}},
                                 std::pair{DType::kBF16, int64_t{512}}}) {
      Operand g{true, DType::kF32, {len}}, b{true, DType::kF32, {len}};
      g.per_batch = b.per_batch = {0};
      add(std::string("layernorm_vectorized_") + DTypeName(t), "LayerNorm", ln, {Batched(t, {2, 3, len}), g, b},
          Batched(t, {2, 3, len}), {{}, RandomBytes(DType::kF32, len, 13), RandomBytes(DType::kF32, len, 14)});
    }
  }
  {
    // Attention, packed [B, S, H*D] (3 heads of 8, 5 queries, 7 keys) and 4-D [B, H, S, D] with
    // grouped K/V heads (4 query heads over 2).
    Attributes packed;
    packed.Set("q_num_heads", int64_t{3});
    packed.Set("kv_num_heads", int64_t{3});
    add("attention_packed", "Attention", packed,
        {Batched(DType::kF32, {2, 5, 24}), Batched(DType::kF32, {2, 7, 24}), Batched(DType::kF32, {2, 7, 24})},
        Batched(DType::kF32, {2, 5, 24}));
    Attributes gqa;
    gqa.Set("scale", 0.3f);
    add("attention_4d_gqa", "Attention", gqa,
        {Batched(DType::kF32, {2, 4, 5, 40}), Batched(DType::kF32, {2, 2, 6, 40}), Batched(DType::kF32, {2, 2, 6, 36})},
        Batched(DType::kF32, {2, 4, 5, 36}));
    // The Tensor Core kernel (emulated mma.sync): query and key counts off the 64-row and 64-key
    // tiles, cross attention, grouped heads, head 128 (tiles of 32 keys), fp16 and bf16.
    Attributes two;
    two.Set("q_num_heads", int64_t{2});
    two.Set("kv_num_heads", int64_t{2});
    add("flash_attention_packed_f16", "Attention", two,
        {Batched(DType::kF16, {2, 70, 64}), Batched(DType::kF16, {2, 75, 64}), Batched(DType::kF16, {2, 75, 64})},
        Batched(DType::kF16, {2, 70, 64}), {}, 4e-3);
    Attributes scaled;
    scaled.Set("scale", 0.2f);
    add("flash_attention_4d_gqa_bf16", "Attention", scaled,
        {Batched(DType::kBF16, {2, 4, 20, 16}), Batched(DType::kBF16, {2, 2, 100, 16}),
         Batched(DType::kBF16, {2, 2, 100, 32})},
        Batched(DType::kBF16, {2, 4, 20, 32}), {}, 3e-2);
    // The strided form: heads read from wider rows at column offsets, sequence first with the batch
    // in the middle (its stride in the generated code depends on the run's batch) and batch first.
    auto strided = [](const char* layout, int64_t heads, int64_t d, int64_t q_off, int64_t k_off, int64_t v_off) {
      Attributes a;
      a.Set("qkv_layout", std::string(layout));
      a.Set("q_num_heads", heads);
      a.Set("kv_num_heads", heads);
      a.Set("head_size", d);
      a.Set("v_head_size", d);
      a.Set("q_offset", q_off);
      a.Set("k_offset", k_off);
      a.Set("v_offset", v_off);
      return a;
    };
    auto seq_first = [](DType t, std::vector<int64_t> dims) {
      Operand o = Batched(t, std::move(dims));
      o.per_batch = {0, 1, 0};
      return o;
    };
    add("attention_strided_sbw_f32", "Attention", strided("SBW", 2, 8, 0, 16, 40),
        {seq_first(DType::kF32, {9, 2, 56}), seq_first(DType::kF32, {9, 2, 56}), seq_first(DType::kF32, {9, 2, 56})},
        seq_first(DType::kF32, {9, 2, 16}));
    add("flash_attention_strided_sbw_bf16", "Attention", strided("SBW", 2, 32, 0, 64, 128),
        {seq_first(DType::kBF16, {70, 2, 192}), seq_first(DType::kBF16, {70, 2, 192}),
         seq_first(DType::kBF16, {70, 2, 192})},
        seq_first(DType::kBF16, {70, 2, 64}), {}, 3e-2);
    add("flash_attention_strided_bsw_f16", "Attention", strided("BSW", 2, 16, 8, 40, 72),
        {Batched(DType::kF16, {2, 33, 112}), Batched(DType::kF16, {2, 33, 112}), Batched(DType::kF16, {2, 33, 112})},
        Batched(DType::kF16, {2, 33, 32}), {}, 4e-3);
    add("flash_attention_head128_f16", "Attention", {},
        {Batched(DType::kF16, {2, 1, 17, 128}), Batched(DType::kF16, {2, 1, 40, 128}),
         Batched(DType::kF16, {2, 1, 40, 128})},
        Batched(DType::kF16, {2, 1, 17, 128}), {}, 4e-3);
  }
  {
    // [S, batch, E] -> [batch, S, E] (exporters' attention layouts): the batch axis in the middle.
    Attributes a;
    a.Set("perm", std::vector<int64_t>{1, 0, 2});
    Operand x{true, DType::kF32, {5, 2, 6}};
    x.per_batch = {0, 1, 0};
    add("transpose_batch_in_the_middle", "Transpose", a, {x}, Batched(DType::kF32, {2, 5, 6}));
  }
  return cases;
}

KernelSpec SpecOf(Case& c) {
  KernelSpec spec;
  spec.name = c.name;
  spec.op = c.op;
  spec.params = &c.attrs;
  spec.inputs = c.inputs;
  for (size_t i = 0; i < c.constants.size(); ++i) {
    if (c.constants[i].empty()) continue;
    spec.inputs[i].constant = c.constants[i].data();
    spec.inputs[i].constant_bytes = c.constants[i].size();
  }
  spec.outputs = {c.output};
  spec.batch = kBatch;
  return spec;
}

TEST(CudaGeneratedTest, MatchesCpuKernelsWhenEmulatedOnTheHost) {
  std::vector<Case> cases = Cases();
  std::vector<runtime::DeviceSource> sources;
  std::vector<GeneratedKernel> kernels;
  for (Case& c : cases) {
    std::string why;
    std::optional<GeneratedKernel> k = GeneratedKernelFor(SpecOf(c), &why);
    ASSERT_TRUE(k) << c.name << ": " << why;
    kernels.push_back(*k);
    bool seen = false;
    for (const auto& s : sources) seen |= s.name == k->code.name;
    if (!seen) sources.push_back(k->code);
  }
  HostModule module(sources);
  ASSERT_TRUE(module.error().empty()) << module.error();
  for (size_t i = 0; i < cases.size(); ++i) {
    Case& c = cases[i];
    SCOPED_TRACE(c.name + " (" + kernels[i].code.name + ")");
    KernelSpec spec = SpecOf(c);
    // Inputs: random non-constant operands, 64-byte aligned (the vector path checks alignment).
    std::vector<std::vector<uint8_t>> data(spec.inputs.size());
    std::vector<const void*> ptrs;
    for (size_t k = 0; k < spec.inputs.size(); ++k) {
      if (spec.inputs[k].is_constant()) {
        ptrs.push_back(spec.inputs[k].constant);
        continue;
      }
      data[k] = RandomBytes(spec.inputs[k].dtype, runtime::NumElements(spec.inputs[k].dims), 100 + k);
      ptrs.push_back(data[k].data());
    }
    const size_t out_bytes = runtime::NumElements(c.output.dims) * DTypeSize(c.output.dtype);
    std::vector<uint8_t> got(out_bytes + 64, 0xcd), want(out_bytes, 0);
    // The cpu backend's kernel for the same step.
    auto sel = runtime::SelectKernel(cpu::CpuKernelTable(), spec);
    ASSERT_TRUE(sel.ok()) << sel.status();
    Attributes params = sel->params;
    spec.params = &params;
    auto cpu_kernel = sel->entry->create(spec);
    ASSERT_TRUE(cpu_kernel.ok()) << cpu_kernel.status();
    ASSERT_TRUE((*cpu_kernel)->Reshape(spec).ok());
    std::vector<void*> outs = {want.data()};
    ASSERT_TRUE((*cpu_kernel)->Run(runtime::RunContext{}, ptrs, outs, {}).ok());
    // The generated function, on the host, with its arguments as the executor packs them (every
    // operand of the step offered).
    void* out_ptr = got.data();
    auto packed = PackGeneratedArgs(kernels[i], kBatch, WorkItems(kernels[i], runtime::NumElements(c.output.dims)),
                                    ptrs, std::span<void* const>(&out_ptr, 1));
    ASSERT_TRUE(packed.ok()) << packed.status();
    ASSERT_TRUE(module.Run(kernels[i], *packed));
    EXPECT_EQ(got[out_bytes], 0xcd) << "wrote past the output";
    if (!runtime::IsStorageFloat(c.output.dtype)) {  // integers: exact
      EXPECT_EQ(std::vector<uint8_t>(got.begin(), got.begin() + out_bytes), want);
      continue;
    }
    const size_t es = DTypeSize(c.output.dtype);
    const double ulp = c.tolerance > 0                     ? c.tolerance
                       : c.output.dtype == DType::kF32 ? 1e-6
                       : c.output.dtype == DType::kF16 ? 1e-3
                                                       : 8e-3;
    int bad = 0;
    for (size_t e = 0; e < out_bytes / es && bad < 5; ++e) {
      const float g = ToFloat(c.output.dtype, got.data() + e * es), w = ToFloat(c.output.dtype, want.data() + e * es);
      if (std::fabs(g - w) > ulp * (1.0 + std::fabs(w))) {
        ADD_FAILURE() << "element " << e << ": generated " << g << ", cpu " << w;
        ++bad;
      }
    }
  }
}

TEST(CudaGeneratedTest, Im2ColMatchesDirectLoopsGroupedAndNot) {
  for (int64_t group : {1, 2}) {
    Im2ColGeometry g;
    g.c = 4;
    g.h = 6;
    g.w = 5;
    g.kh = 3;
    g.kw = 3;
    g.sh = 2;
    g.sw = 1;
    g.pt = 1;
    g.pl = 1;
    g.ho = (g.h + 2 - 3) / 2 + 1;
    g.wo = (g.w + 2 - 3) / 1 + 1;
    g.group = group;
    g.dtype = DType::kF32;
    GeneratedKernel k = Im2ColKernel(g);
    HostModule module({k.code});
    ASSERT_TRUE(module.error().empty()) << module.error();
    const int64_t n = 2, cg = g.c / group, kk = g.kh * g.kw * cg;
    std::vector<float> x(n * g.h * g.w * g.c);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f + 1.0f;
    std::vector<float> got(n * g.ho * g.wo * group * kk, -7.0f);
    Args args{};
    args.in[0] = x.data();
    args.out[0] = got.data();
    args.batch = n;
    args.total = static_cast<long long>(got.size());
    ASSERT_TRUE(module.Run(k, args));
    size_t i = 0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t oh = 0; oh < g.ho; ++oh)
        for (int64_t ow = 0; ow < g.wo; ++ow)
          for (int64_t gi = 0; gi < group; ++gi)
            for (int64_t r = 0; r < g.kh; ++r)
              for (int64_t s = 0; s < g.kw; ++s)
                for (int64_t c = 0; c < cg; ++c, ++i) {
                  const int64_t h = oh * g.sh - g.pt + r, w = ow * g.sw - g.pl + s;
                  const float want = (h < 0 || h >= g.h || w < 0 || w >= g.w)
                                         ? 0.0f
                                         : x[((b * g.h + h) * g.w + w) * g.c + gi * cg + c];
                  ASSERT_EQ(got[i], want) << "group " << group << " item " << i;
                }
  }
}

// The fp8 kernels' e4m3 conversion is bit arithmetic written for the device; on the host build it
// must give core's FloatToF8E4M3 for every value class: NaN, infinities, the saturation edge
// (448, 463.99, 464), normal ties, the subnormal steps and their ties, signed zeros, and random
// values over the whole e4m3 range; FakeQuantFp8 must give the reference's f16 round trip.
TEST(CudaGeneratedTest, Fp8QuantizationMatchesTheReferenceBitForBit) {
  std::vector<float> values = {0.0f, -0.0f, NAN, INFINITY, -INFINITY, 448.0f, -448.0f, 463.99f, 464.0f, -464.0f,
                               1e6f, 240.0f, 1.0625f, 1.1875f, 0.0078125f, 0.015625f, 0.0009765625f, 0.00146484375f,
                               0.001953125f, 0.0029296875f, 1e-9f, -1e-30f, 0.017578125f, 3.0f, -5.5f};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> exponent(-12.0f, 9.5f);
  for (int i = 0; i < 4000; ++i) values.push_back((i % 2 ? -1.0f : 1.0f) * std::exp2(exponent(rng)));
  const int64_t n = static_cast<int64_t>(values.size());
  Attributes attrs;
  attrs.Set("scale", 1.0f);
  Case quantize{"quantize", "QuantizeFp8", attrs, {Operand{true, DType::kF32, {n}}}, {}, Operand{true, DType::kF8E4M3, {n}}};
  Attributes fq_attrs;
  fq_attrs.Set("scale", 3.5f);
  Case fakequant{"fakequant", "FakeQuantFp8", fq_attrs, {Operand{true, DType::kF16, {n}}}, {},
                 Operand{true, DType::kF16, {n}}};
  std::string why;
  std::optional<GeneratedKernel> kq = GeneratedKernelFor(SpecOf(quantize), &why);
  ASSERT_TRUE(kq) << why;
  std::optional<GeneratedKernel> kf = GeneratedKernelFor(SpecOf(fakequant), &why);
  ASSERT_TRUE(kf) << why;
  HostModule module({kq->code, kf->code});
  ASSERT_TRUE(module.error().empty()) << module.error();

  std::vector<uint8_t> q(values.size());
  Args args{};
  args.in[0] = values.data();
  args.out[0] = q.data();
  args.batch = 1;
  args.total = n;
  ASSERT_TRUE(module.Run(*kq, args));
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(static_cast<int>(q[i]), static_cast<int>(FloatToF8E4M3(values[i]))) << "value " << values[i];
  }

  std::vector<uint16_t> halves(values.size()), out(values.size());
  for (size_t i = 0; i < values.size(); ++i) halves[i] = FloatToHalf(values[i] / 8.0f);
  args.in[0] = halves.data();
  args.out[0] = out.data();
  ASSERT_TRUE(module.Run(*kf, args));
  for (size_t i = 0; i < values.size(); ++i) {
    const float x = HalfToFloat(halves[i]);
    const uint16_t want = FloatToHalf(RoundToStorage(x * 3.5f, DType::kF8E4M3) / 3.5f);
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(HalfToFloat(out[i])));
    } else {
      EXPECT_EQ(out[i], want) << "value " << x;
    }
  }
  // A per-channel FakeQuantFp8 (weights) folds at compile time: the generated kernel declines it.
  Case per_channel = fakequant;
  per_channel.inputs.push_back(Operand{true, DType::kF32, {n}});
  EXPECT_FALSE(GeneratedKernelFor(SpecOf(per_channel), &why));
}

// The fp8 GEMM's fallback epilogue (cuBLASLt without outer-vector scales): fp32 product times the
// column scale, + f16 bias, + f16 residual, activation, stored f16; in place over the residual too.
TEST(CudaGeneratedTest, Fp8EpilogueAppliesColumnScalesBiasResidualAndActivation) {
  const int64_t m = 37, n = 24;
  Epilogue relu;
  relu.act = Activation::kRelu;
  const GeneratedKernel k = Fp8EpilogueKernel(n, true, true, relu);
  HostModule module({k.code});
  ASSERT_TRUE(module.error().empty()) << module.error();
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> d(m * n), scale(n);
  std::vector<uint16_t> bias(n), z(m * n);
  for (float& v : d) v = u(rng) * 100.0f;
  for (float& v : scale) v = std::fabs(u(rng)) / 400.0f;
  for (uint16_t& v : bias) v = FloatToHalf(u(rng));
  for (uint16_t& v : z) v = FloatToHalf(u(rng));
  std::vector<uint16_t> want(m * n);
  for (int64_t i = 0; i < m * n; ++i) {
    float v = d[i] * scale[i % n] + HalfToFloat(bias[i % n]);
    v += HalfToFloat(z[i]);
    want[i] = FloatToHalf(v > 0 ? v : 0.0f);
  }
  Args args{};
  args.in[0] = d.data();
  args.in[1] = scale.data();
  args.in[2] = bias.data();
  args.in[3] = z.data();
  args.out[0] = z.data();  // Y aliases Z, as the memory plan may make it
  args.batch = 1;
  args.total = m * n;
  ASSERT_TRUE(module.Run(k, args));
  for (int64_t i = 0; i < m * n; ++i) EXPECT_EQ(z[i], want[i]) << i;
}

// LayerNorm with its fp8 output (lower-fp8 fused the QuantizeFp8 that read it): the e4m3 bytes of
// the fp32 result times fp8_scale, from the vectorized kernel (768 f16 per row: 3 chunks of 8 per
// lane, 8-byte stores) and the strided one (40 f32 per row), against a direct computation: every
// byte within one e4m3 step, and all but a few (summation order at rounding midpoints) equal.
TEST(CudaGeneratedTest, LayerNormWritesE4m3BytesAtItsScale) {
  for (const auto& [len, dtype] : std::vector<std::pair<int64_t, DType>>{{768, DType::kF16}, {40, DType::kF32}}) {
    SCOPED_TRACE(len);
    const int64_t rows = 37;
    Attributes attrs;
    attrs.Set("axis", int64_t{-1});
    attrs.Set("epsilon", 1e-6f);
    attrs.Set("fp8_scale", 97.5f);
    Case c{"ln8", "LayerNorm", attrs,
           {Operand{true, dtype, {rows, len}}, Operand{true, DType::kF32, {len}}, Operand{true, DType::kF32, {len}}},
           {{}, RandomBytes(DType::kF32, len, 5), RandomBytes(DType::kF32, len, 6)},
           Operand{true, DType::kF8E4M3, {rows, len}}};
    std::string why;
    std::optional<GeneratedKernel> k = GeneratedKernelFor(SpecOf(c), &why);
    ASSERT_TRUE(k) << why;
    EXPECT_EQ(k->alignment, len == 768 ? 16 : 1) << k->description;
    HostModule module({k->code});
    ASSERT_TRUE(module.error().empty()) << module.error();
    std::vector<uint8_t> x = RandomBytes(dtype, rows * len, 7), y(rows * len);
    const float* g = reinterpret_cast<const float*>(c.constants[1].data());
    const float* b = reinterpret_cast<const float*>(c.constants[2].data());
    Args args{};
    args.in[0] = x.data();
    args.in[1] = g;
    args.in[2] = b;
    args.out[0] = y.data();
    args.batch = 1;
    args.total = rows;
    ASSERT_TRUE(module.Run(*k, args));
    int64_t differ = 0;
    for (int64_t r = 0; r < rows; ++r) {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < len; ++j) mean += ToFloat(dtype, &x[(r * len + j) * DTypeSize(dtype)]);
      mean /= len;
      for (int64_t j = 0; j < len; ++j) {
        const double d = ToFloat(dtype, &x[(r * len + j) * DTypeSize(dtype)]) - mean;
        var += d * d;
      }
      const double inv = 1.0 / std::sqrt(var / len + 1e-6);
      for (int64_t j = 0; j < len; ++j) {
        const double v = (ToFloat(dtype, &x[(r * len + j) * DTypeSize(dtype)]) - mean) * inv * g[j] + b[j];
        const uint8_t want = FloatToF8E4M3(static_cast<float>(v * 97.5));
        const uint8_t got = y[r * len + j];
        if (got != want) {
          ++differ;
          // Adjacent codes of the same sign: one e4m3 step apart.
          EXPECT_EQ(got & 0x80, want & 0x80) << r << "," << j;
          EXPECT_LE(std::abs(static_cast<int>(got & 0x7f) - static_cast<int>(want & 0x7f)), 1) << r << "," << j;
        }
      }
    }
    EXPECT_LE(differ, rows * len / 200) << differ << " of " << rows * len << " bytes differ";
  }
}

TEST(CudaGeneratedTest, CompileForSm80AndSm90WithoutSpills) {
  std::vector<Case> cases = Cases();
  std::vector<runtime::DeviceSource> sources;
  for (Case& c : cases) {
    std::string why;
    std::optional<GeneratedKernel> k = GeneratedKernelFor(SpecOf(c), &why);
    ASSERT_TRUE(k) << why;
    bool seen = false;
    for (const auto& s : sources) seen |= s.name == k->code.name;
    if (!seen) sources.push_back(k->code);
  }
  Im2ColGeometry g;
  g.c = 64, g.h = g.w = 56, g.ho = g.wo = 56, g.kh = g.kw = 3, g.pt = g.pl = 1, g.dtype = DType::kF16;
  sources.push_back(Im2ColKernel(g).code);
  Epilogue gelu;
  gelu.act = Activation::kGelu;
  sources.push_back(ActivationKernel(DType::kBF16, gelu).code);
  {
    Attributes a;
    a.Set("scale", 12.5f);
    Case q{"q", "QuantizeFp8", a, {Batched(DType::kF16, {2, 197, 768})}, {}, Batched(DType::kF8E4M3, {2, 197, 768})};
    Case f{"f", "FakeQuantFp8", a, {Batched(DType::kF16, {2, 197, 2304})}, {}, Batched(DType::kF16, {2, 197, 2304})};
    for (Case* c : {&q, &f}) {
      std::string why;
      std::optional<GeneratedKernel> k = GeneratedKernelFor(SpecOf(*c), &why);
      ASSERT_TRUE(k) << why;
      sources.push_back(k->code);
    }
  }
  sources.push_back(Fp8EpilogueKernel(3072, true, false, Epilogue{}).code);
  auto modules = codegen::CompileDeviceCode(sources, {"sm_90", "sm_80"});
  ASSERT_TRUE(modules.ok()) << modules.status();
  ASSERT_EQ(modules->size(), 2u);
  for (const plan::DeviceCode& m : *modules) {
    EXPECT_FALSE(m.cubin.empty());
    EXPECT_NE(m.ptx.find(".target " + std::string(m.arch == "sm_90" ? "sm_90" : "sm_80")), std::string::npos);
    ASSERT_EQ(m.functions.size(), sources.size());
    for (const plan::DeviceFunction& f : m.functions) {
      EXPECT_GT(f.registers, 0) << f.name;
      EXPECT_EQ(f.spill_store_bytes + f.spill_load_bytes, 0) << m.arch << " " << f.name << " spills";
      EXPECT_EQ(f.stack_bytes, 0) << m.arch << " " << f.name;
    }
  }
}

TEST(CudaGeneratedTest, NamesIdentifyCode) {
  std::vector<Case> cases = Cases();
  std::string why;
  auto a = GeneratedKernelFor(SpecOf(cases[0]), &why);
  auto b = GeneratedKernelFor(SpecOf(cases[0]), &why);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->code.name, b->code.name);
  EXPECT_EQ(a->code.source, b->code.source);
  auto c = GeneratedKernelFor(SpecOf(cases[1]), &why);
  ASSERT_TRUE(c);
  EXPECT_NE(a->code.name, c->code.name);
}

TEST(CudaGeneratedTest, OneFunctionServesEveryBatchAndTwoBatchAxesAreDeclined) {
  // The same function at batch 2 and batch 7: the batch-dependent dims are expressions of a.batch.
  Attributes a;
  a.Set("perm", std::vector<int64_t>{1, 0, 2});
  auto spec_at = [&](int64_t b, Case& c) {
    Operand x{true, DType::kF16, {5, b, 6}};
    x.per_batch = {0, 1, 0};
    c = Case{"t", "Transpose", a, {x}, {}, Batched(DType::kF16, {b, 5, 6})};
    KernelSpec s = SpecOf(c);
    s.batch = b;
    return s;
  };
  Case c2, c7;
  std::string why;
  auto k2 = GeneratedKernelFor(spec_at(2, c2), &why);
  auto k7 = GeneratedKernelFor(spec_at(7, c7), &why);
  ASSERT_TRUE(k2 && k7) << why;
  EXPECT_EQ(k2->code.name, k7->code.name);
  EXPECT_EQ(k2->code.source, k7->code.source);
  // [batch, batch, batch]: the leading stride would be quadratic in the batch.
  Operand x{true, DType::kF32, {2, 2, 2}};
  x.per_batch = {1, 1, 1};
  Case q{"q", "Transpose", a, {x}, {}, x};
  EXPECT_FALSE(GeneratedKernelFor(SpecOf(q), &why));
  EXPECT_NE(why.find("two batch-dependent dims"), std::string::npos) << why;
}

}  // namespace
}  // namespace gcomp::cuda
