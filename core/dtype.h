// Element types of the IR and conversions between their storage forms.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gcomp {

enum class DType : uint8_t {
  kF32,
  kF16,
  kBF16,
  kF8E4M3,
  kF64,  // import only: computed in fp32 by every backend
  kI64,
  kI32,
  kI8,
  kU8,
  kBool,
};

// Short printable name ("f32", "i64", ...).
const char* DTypeName(DType t);
std::optional<DType> DTypeFromName(std::string_view name);
// Bytes per element in storage.
size_t DTypeSize(DType t);
bool IsFloat(DType t);
bool IsInteger(DType t);  // i64, i32, i8, u8 (not bool)

// ONNX TensorProto.DataType numbers <-> DType; nullopt for types gcomp does not support.
std::optional<DType> DTypeFromOnnx(int32_t onnx_type);
int32_t DTypeToOnnx(DType t);
// Name of an ONNX data type number for messages ("STRING", "UINT16", ...).
std::string OnnxTypeName(int32_t onnx_type);

// Storage conversions (round to nearest even; fp8 e4m3fn saturates to +-448, NaN stays NaN).
uint16_t FloatToHalf(float f);
float HalfToFloat(uint16_t h);
uint16_t FloatToBFloat16(float f);
float BFloat16ToFloat(uint16_t b);
uint8_t FloatToF8E4M3(float f);
float F8E4M3ToFloat(uint8_t v);

// Rounds `f` to the nearest value representable in `t` (identity for f32/f64).
float RoundToStorage(float f, DType t);

}  // namespace gcomp
