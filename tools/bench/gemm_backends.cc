// gemm_backends: two kernel entries on the real layer shapes of ResNet-50 (NHWC convs, 1x1 convs
// as GEMMs on N*H*W rows, the FC) and ViT-B/16 (patch conv, the encoder GEMMs), through the same
// CpuEntry interface the runtime uses (pack, create, Run): by default oneDNN against OpenBLAS in
// fp32; --bf16 compares bf16 storage, oneDNN against the own AMX GEMM (cpu.amx.gemm) on the GEMM
// layers (ResNet-50's stride-1 1x1 convs among them); its conv layers (the stride-2 1x1 ones
// included) have no second bf16 backend, so they show oneDNN alone. The totals cover the layers
// both backends ran.
// An entry that declines a layer shows why.
//
//   gemm_backends [--threads N] [--batches 1,8] [--min-runs R] [--bf16] [--conv FIRST,SECOND]
//                 [--gemm FIRST,SECOND]
//
// --conv compares two conv entries of the cpu table (e.g. cpu.onednn.conv,cpu.avx2.conv, or
// cpu.onednn.winograd_2x2,cpu.avx2.conv) on the conv layers alone, in fp32 or bf16; --gemm two
// GEMM entries (e.g. cpu.onednn.gemm,cpu.avx2.gemm) on the GEMM layers alone.
//
// Per layer: one warm-up run each, then at least R timed runs of each backend, alternating (more
// while under 0.4 s), the medians.
// Totals: sum over layers of median time x the layer's count in the model, per model, batch and
// op kind (FusedConv / FusedGemm), which is what entries.cc orders by.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "runtime/cpu/blas/entries.h"
#include "runtime/cpu/own/entries.h"

namespace gcomp::cpu {
namespace {

struct Layer {
  std::string model;  // resnet50 / vit_b_16
  std::string name;
  int count = 1;  // occurrences in the model
  bool conv = false;
  // conv (NHWC, square): input h = w, c -> cout, k x k stride s pad p
  int64_t h = 0, c = 0, cout = 0, k = 1, s = 1, p = 0;
  // gemm: rows per image, K, N
  int64_t rows = 0, kk = 0, n = 0;
  bool residual = false;
  std::string act = "relu";
};

std::vector<Layer> Layers() {
  std::vector<Layer> l;
  auto conv = [&](const char* name, int count, int64_t h, int64_t c, int64_t cout, int64_t k, int64_t s, int64_t p) {
    Layer x;
    x.model = "resnet50";
    x.name = name;
    x.count = count;
    x.conv = true;
    x.h = h, x.c = c, x.cout = cout, x.k = k, x.s = s, x.p = p;
    l.push_back(x);
  };
  auto gemm = [&](const char* model, const char* name, int count, int64_t rows, int64_t kk, int64_t n, bool residual,
                  const char* act) {
    Layer x;
    x.model = model;
    x.name = name;
    x.count = count;
    x.rows = rows, x.kk = kk, x.n = n;
    x.residual = residual;
    x.act = act;
    l.push_back(x);
  };
  // torchvision ResNet-50 (v1.5: stride on the 3x3): 53 convs + FC.
  conv("stem 7x7/2", 1, 224, 3, 64, 7, 2, 3);
  gemm("resnet50", "l1 1x1 64>64", 1, 56 * 56, 64, 64, false, "relu");
  gemm("resnet50", "l1 1x1 256>64", 2, 56 * 56, 256, 64, false, "relu");
  conv("l1 3x3 64", 3, 56, 64, 64, 3, 1, 1);
  gemm("resnet50", "l1 1x1 64>256 (+down)", 4, 56 * 56, 64, 256, true, "relu");
  gemm("resnet50", "l2 1x1 256>128", 1, 56 * 56, 256, 128, false, "relu");
  conv("l2 3x3/2 128", 1, 56, 128, 128, 3, 2, 1);
  conv("l2 down 1x1/2 256>512", 1, 56, 256, 512, 1, 2, 0);
  gemm("resnet50", "l2 1x1 128>512", 4, 28 * 28, 128, 512, true, "relu");
  gemm("resnet50", "l2 1x1 512>128", 3, 28 * 28, 512, 128, false, "relu");
  conv("l2 3x3 128", 3, 28, 128, 128, 3, 1, 1);
  gemm("resnet50", "l3 1x1 512>256", 1, 28 * 28, 512, 256, false, "relu");
  conv("l3 3x3/2 256", 1, 28, 256, 256, 3, 2, 1);
  conv("l3 down 1x1/2 512>1024", 1, 28, 512, 1024, 1, 2, 0);
  gemm("resnet50", "l3 1x1 256>1024", 6, 14 * 14, 256, 1024, true, "relu");
  gemm("resnet50", "l3 1x1 1024>256", 5, 14 * 14, 1024, 256, false, "relu");
  conv("l3 3x3 256", 5, 14, 256, 256, 3, 1, 1);
  gemm("resnet50", "l4 1x1 1024>512", 1, 14 * 14, 1024, 512, false, "relu");
  conv("l4 3x3/2 512", 1, 14, 512, 512, 3, 2, 1);
  conv("l4 down 1x1/2 1024>2048", 1, 14, 1024, 2048, 1, 2, 0);
  gemm("resnet50", "l4 1x1 512>2048", 3, 7 * 7, 512, 2048, true, "relu");
  gemm("resnet50", "l4 1x1 2048>512", 2, 7 * 7, 2048, 512, false, "relu");
  conv("l4 3x3 512", 2, 7, 512, 512, 3, 1, 1);
  gemm("resnet50", "fc 2048>1000", 1, 1, 2048, 1000, false, "none");
  // ViT-B/16: patch embedding, 12 encoder layers, head.
  Layer patch;
  patch.model = "vit_b_16";
  patch.name = "patch 16x16/16 3>768";
  patch.conv = true;
  patch.h = 224, patch.c = 3, patch.cout = 768, patch.k = 16, patch.s = 16, patch.p = 0;
  patch.act = "none";
  l.push_back(patch);
  gemm("vit_b_16", "qkv 768>2304", 12, 197, 768, 2304, false, "none");
  gemm("vit_b_16", "attn out 768>768", 12, 197, 768, 768, true, "none");
  gemm("vit_b_16", "mlp1 768>3072 gelu", 12, 197, 768, 3072, false, "gelu");
  gemm("vit_b_16", "mlp2 3072>768", 12, 197, 3072, 768, true, "none");
  gemm("vit_b_16", "head 768>1000", 1, 1, 768, 1000, false, "none");
  return l;
}

std::vector<float> RandomF32(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = u(rng);
  return v;
}

// One kernel ready to run on its own buffers.
struct Prepared {
  std::string note;  // why it is not runnable ("declined", an error); empty when it is
  std::unique_ptr<ShapedKernel> kernel;
  std::vector<std::vector<uint8_t>> data;
  std::vector<Packed> packed;
  std::vector<uint8_t> y;
  std::vector<const void*> ins;
  std::vector<void*> outs;
  std::vector<double> times;
  double Median() {
    if (times.empty()) return -1;
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
  }
  double Min() { return times.empty() ? -1 : *std::min_element(times.begin(), times.end()); }
};

std::unique_ptr<Prepared> Prepare(const CpuEntry& e, const Layer& l, int64_t batch, int threads, DType dtype) {
  auto r = std::make_unique<Prepared>();
  Attributes attrs;
  attrs.Set("activation", l.act);
  KernelSpec spec;
  spec.name = l.name;
  spec.params = &attrs;
  spec.threads = threads;
  auto operand = [dtype](std::vector<int64_t> dims) {
    Operand o;
    o.dtype = dtype;
    o.dims = std::move(dims);
    return o;
  };
  std::vector<int64_t> ydims;
  if (l.conv) {
    spec.op = "FusedConv";
    attrs.Set("kernel_shape", std::vector<int64_t>{l.k, l.k});
    attrs.Set("strides", std::vector<int64_t>{l.s, l.s});
    attrs.Set("pads", std::vector<int64_t>{l.p, l.p, l.p, l.p});
    attrs.Set("layout", std::string("NHWC"));
    const int64_t ho = (l.h + 2 * l.p - l.k) / l.s + 1;
    ydims = {batch, ho, ho, l.cout};
    spec.inputs = {operand({batch, l.h, l.h, l.c}), operand({l.cout, l.c, l.k, l.k}), operand({l.cout})};
  } else {
    spec.op = "FusedGemm";
    ydims = {batch * l.rows, l.n};
    spec.inputs = {operand({batch * l.rows, l.kk}), operand({l.kk, l.n}), operand({l.n})};
  }
  if (l.residual) spec.inputs.push_back(operand(ydims));
  spec.outputs = {operand(ydims)};
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    const int64_t n = NumElements(spec.inputs[i].dims);
    const std::vector<float> v = RandomF32(n, static_cast<uint32_t>(7 + i));
    r->data.emplace_back(static_cast<size_t>(n) * DTypeSize(dtype));
    StoreF32(dtype, v.data(), r->data.back().data(), n);
  }
  for (size_t i = 1; i <= 2; ++i) {
    spec.inputs[i].constant = r->data[i].data();
    spec.inputs[i].constant_bytes = r->data[i].size();
  }
  if (!e.accepts(spec)) {
    r->note = "declined";
    return r;
  }
  r->packed.resize(3);
  if (e.pack) {
    for (size_t i = 1; i <= 2; ++i) {
      auto p = e.pack(spec, i);
      if (!p.ok()) {
        r->note = std::string(p.status().message());
        return r;
      }
      r->packed[i] = std::move(*p);
      spec.inputs[i].constant = r->packed[i].bytes.data();
      spec.inputs[i].constant_bytes = r->packed[i].bytes.size();
      spec.inputs[i].format = r->packed[i].format;
    }
  }
  auto k = e.create(spec);
  if (!k.ok()) {
    r->note = std::string(k.status().message());
    return r;
  }
  r->kernel = std::move(*k);
  r->y.resize(static_cast<size_t>(NumElements(ydims)) * DTypeSize(dtype));
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    r->ins.push_back(i == 1 || i == 2 ? static_cast<const void*>(spec.inputs[i].constant)
                                      : static_cast<const void*>(r->data[i].data()));
  }
  r->outs = {r->y.data()};
  if (absl::Status s = r->kernel->Run(r->ins, r->outs); !s.ok()) {  // warm-up
    r->note = std::string(s.message());
    r->kernel.reset();
  }
  return r;
}

void TimeOnce(Prepared& p) {
  if (!p.kernel) return;
  auto t0 = std::chrono::steady_clock::now();
  (void)p.kernel->Run(p.ins, p.outs);
  p.times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

double Flops(const Layer& l, int64_t batch) {
  if (l.conv) {
    const int64_t ho = (l.h + 2 * l.p - l.k) / l.s + 1;
    return 2.0 * batch * ho * ho * l.cout * l.c * l.k * l.k;
  }
  return 2.0 * batch * l.rows * l.kk * l.n;
}

std::string Shape(const Layer& l, int64_t batch) {
  if (l.conv) return absl::StrCat("conv N", batch, " ", l.h, "x", l.h, "x", l.c, " k", l.k, "/", l.s, " >", l.cout);
  return absl::StrCat("gemm M", batch * l.rows, " K", l.kk, " N", l.n);
}

int Main(int argc, char** argv) {
  int threads = 2, min_runs = 5;
  bool bf16 = false;
  std::vector<int64_t> batches = {1, 8};
  std::vector<std::string> conv_pair;  // --conv: the two conv entries compared, conv layers only
  std::vector<std::string> gemm_pair;  // --gemm: the two GEMM entries compared, GEMM layers only
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (a == "--min-runs" && i + 1 < argc) {
      min_runs = std::atoi(argv[++i]);
    } else if (a == "--bf16") {
      bf16 = true;
    } else if (a == "--conv" && i + 1 < argc) {
      conv_pair = absl::StrSplit(argv[++i], ',');
    } else if (a == "--gemm" && i + 1 < argc) {
      gemm_pair = absl::StrSplit(argv[++i], ',');
    } else if (a == "--batches" && i + 1 < argc) {
      batches.clear();
      for (absl::string_view b : absl::StrSplit(argv[++i], ',')) batches.push_back(std::atoll(std::string(b).c_str()));
    } else {
      std::fprintf(stderr,
                   "usage: gemm_backends [--threads N] [--batches 1,8] [--min-runs R] [--bf16] [--conv FIRST,SECOND] "
                   "[--gemm FIRST,SECOND]\n");
      return 2;
    }
  }
  if ((!conv_pair.empty() && conv_pair.size() != 2) || (!gemm_pair.empty() && gemm_pair.size() != 2) ||
      (!conv_pair.empty() && !gemm_pair.empty())) {
    std::fprintf(stderr, "--conv or --gemm takes two entry ids, FIRST,SECOND\n");
    return 2;
  }
  const DType dtype = bf16 ? DType::kBF16 : DType::kF32;
  std::printf("%s; ISA %s; %d threads; %s; median of >= %d runs after a warm-up\n", BlasLibraryVersions().c_str(),
              CpuIsa().c_str(), threads, DTypeName(dtype), min_runs);
  std::vector<CpuEntry> entries = BlasKernelEntries();
  for (CpuEntry& e : own::GemmEntries()) entries.push_back(std::move(e));
  for (CpuEntry& e : own::Avx2GemmEntries()) entries.push_back(std::move(e));
  entries.push_back(own::Avx2ConvEntry());
  for (CpuEntry& e : own::Avx2WinogradEntries()) entries.push_back(std::move(e));
  for (CpuEntry& e : own::Avx512WinogradEntries()) entries.push_back(std::move(e));
  // The columns' entries (bf16: the second on GEMM layers only).
  const bool convs_only = !conv_pair.empty(), gemms_only = !gemm_pair.empty();
  const std::string first_conv = convs_only ? conv_pair[0] : "cpu.onednn.conv";
  const std::string other_conv = convs_only ? conv_pair[1] : "cpu.openblas.conv";
  const std::string first_gemm = gemms_only ? gemm_pair[0] : "cpu.onednn.gemm";
  const std::string other_gemm = gemms_only ? gemm_pair[1] : bf16 ? "cpu.amx.gemm" : "cpu.openblas.gemm";
  const std::string first_name = convs_only ? first_conv : gemms_only ? first_gemm : "oneDNN";
  const std::string other_name = convs_only ? other_conv : gemms_only ? other_gemm : bf16 ? "own AMX" : "OpenBLAS";
  auto find = [&](const std::string& id) -> const CpuEntry& {
    for (const CpuEntry& e : entries) {
      if (e.id == id) return e;
    }
    std::fprintf(stderr, "no entry %s\n", id.c_str());
    std::exit(1);
  };
  // (model, batch, op) -> {oneDNN seconds, OpenBLAS seconds}, of the medians and of the minima
  // (the minima are the steadier figure on a machine shared with other jobs).
  std::map<std::string, std::pair<double, double>> totals, best;
  std::printf("%-26s %-38s %5s %12s %12s %8s\n", "layer", "shape", "count", absl::StrCat(first_name, " GF/s").c_str(),
              absl::StrCat(other_name, " GF/s").c_str(), "ratio");
  for (int64_t batch : batches) {
    for (const Layer& l : Layers()) {
      if ((convs_only && !l.conv) || (gemms_only && l.conv)) continue;
      const bool alone = bf16 && l.conv && !convs_only;  // oneDNN only
      const char* kind = l.conv ? "conv" : "gemm";
      // The two backends' runs alternate, so that both see the same machine load.
      std::unique_ptr<Prepared> d = Prepare(find(l.conv ? first_conv : first_gemm), l, batch, threads, dtype);
      std::unique_ptr<Prepared> o =
          alone ? nullptr : Prepare(find(l.conv ? other_conv : other_gemm), l, batch, threads, dtype);
      double spent = 0;
      for (int run = 0; run < min_runs || (spent < 0.4 && run < 50); ++run) {
        auto t0 = std::chrono::steady_clock::now();
        TimeOnce(*d);
        if (o) TimeOnce(*o);
        spent += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
      const double ds = d->Median(), os = o ? o->Median() : -1;
      const double f = Flops(l, batch) * 1e-9;
      auto gf = [&](const Prepared& p, double t) {
        return t > 0 ? absl::StrCat(static_cast<int>(f / t + 0.5)) : p.note.substr(0, 12);
      };
      std::printf("%-26s %-38s %5d %12s %12s %8.2f\n", l.name.c_str(), Shape(l, batch).c_str(), l.count,
                  gf(*d, ds).c_str(), o ? gf(*o, os).c_str() : "-", ds > 0 && os > 0 ? os / ds : 0.0);
      std::fflush(stdout);
      if (!o || ds <= 0 || os <= 0) continue;  // the totals cover the layers both backends ran
      for (const std::string& key :
           {absl::StrCat(l.model, " b", batch, " ", kind), absl::StrCat(l.model, " b", batch, " all")}) {
        totals[key].first += l.count * ds;
        totals[key].second += l.count * os;
        best[key].first += l.count * d->Min();
        best[key].second += l.count * o->Min();
      }
    }
  }
  std::printf("\nratio = %s time / %s time (> 1: the first faster); totals = sum of time x count\n\n",
              other_name.c_str(), first_name.c_str());
  std::printf("%-22s %14s %14s %8s %14s %14s %8s\n", "totals", absl::StrCat(first_name, " ms").c_str(),
              absl::StrCat(other_name, " ms").c_str(), "ratio", absl::StrCat("min ", first_name).c_str(),
              absl::StrCat("min ", other_name).c_str(), "ratio");
  for (const auto& [key, t] : totals) {
    const auto& b = best[key];
    std::printf("%-22s %14.2f %14.2f %8.2f %14.2f %14.2f %8.2f\n", key.c_str(), t.first * 1e3, t.second * 1e3,
                t.second / t.first, b.first * 1e3, b.second * 1e3, b.second / b.first);
  }
  return 0;
}

}  // namespace
}  // namespace gcomp::cpu

int main(int argc, char** argv) { return gcomp::cpu::Main(argc, argv); }
