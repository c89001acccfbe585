// Helpers shared by the op definitions in graph/ops/: shape checks, broadcasting, index math.
#pragma once

#include <cstdint>
#include <vector>

#include "core/size.h"
#include "core/slice.h"
#include "graph/op_def.h"

namespace gcomp::ops {

// Numpy-style broadcast of two shapes; a symbolic dim against a constant > 1 takes the constant.
absl::StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b);
// Maps a possibly negative axis into [0, rank); error names `what` and the rank.
absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank, const char* what = "axis");

absl::Status ExpectFloat(const InferContext& ctx, size_t i);
absl::Status ExpectInteger(const InferContext& ctx, size_t i);
absl::Status ExpectRank(const InferContext& ctx, size_t i, int64_t rank);
absl::Status ExpectSameDType(const InferContext& ctx, size_t i, size_t j);

inline OutputInfo Out(DType dtype, Shape shape) { return OutputInfo{dtype, std::move(shape), std::nullopt}; }
inline std::vector<OutputInfo> One(DType dtype, Shape shape) { return {Out(dtype, std::move(shape))}; }

// For each flat index of `out_dims`, the flat index into an input of `in_dims` broadcast to it.
std::vector<int64_t> BroadcastIndexMap(const std::vector<int64_t>& in_dims,
                                       const std::vector<int64_t>& out_dims);

// Kernel-side conversions: every float kernel computes in fp32.
inline std::vector<float> ReadF32(const Tensor& t) { return t.ToF32(); }
void WriteF32(Tensor& t, const std::vector<float>& v);
void WriteI64(Tensor& t, const std::vector<int64_t>& v);

// Data-dependent dims: where an output dim depends on the values of a tensor known only at run
// time (a Reshape target or Slice starts fed as a graph input), shape inference gives it a fresh
// symbol "?NODE:OUTPUT:AXIS". The interpreter infers shapes again with the data, so the reference
// runs such graphs; a backend that plans memory ahead of time must refuse these symbols.
Dim DataDependentDim(const InferContext& ctx, size_t output, size_t axis);
Shape DataDependentShape(const InferContext& ctx, size_t output, int64_t rank);
bool IsDataDependentSymbol(const std::string& symbol);
// Number of entries of 1-D input i (an axes, pads or shape input), which must be a constant dim.
absl::StatusOr<int64_t> VectorLength(const InferContext& ctx, size_t i);


}  // namespace gcomp::ops
