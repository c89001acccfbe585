#include "core/dtype.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace gcomp {

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kF8E4M3: return "f8e4m3";
    case DType::kF64: return "f64";
    case DType::kI64: return "i64";
    case DType::kI32: return "i32";
    case DType::kI8: return "i8";
    case DType::kU8: return "u8";
    case DType::kBool: return "bool";
  }
  return "?";
}

std::optional<DType> DTypeFromName(std::string_view name) {
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kF8E4M3, DType::kF64, DType::kI64,
                  DType::kI32, DType::kI8, DType::kU8, DType::kBool}) {
    if (DTypeName(t) == name) return t;
  }
  return std::nullopt;
}

size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kF32: return 4;
    case DType::kF16: return 2;
    case DType::kBF16: return 2;
    case DType::kF8E4M3: return 1;
    case DType::kF64: return 8;
    case DType::kI64: return 8;
    case DType::kI32: return 4;
    case DType::kI8: return 1;
    case DType::kU8: return 1;
    case DType::kBool: return 1;
  }
  return 0;
}

bool IsFloat(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 || t == DType::kF8E4M3 ||
         t == DType::kF64;
}

bool IsInteger(DType t) {
  return t == DType::kI64 || t == DType::kI32 || t == DType::kI8 || t == DType::kU8;
}

// ONNX TensorProto.DataType values.
namespace onnx_type {
constexpr int32_t kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6,
                  kInt64 = 7, kString = 8, kBool = 9, kFloat16 = 10, kDouble = 11, kUint32 = 12,
                  kUint64 = 13, kComplex64 = 14, kComplex128 = 15, kBfloat16 = 16,
                  kFloat8E4M3FN = 17, kFloat8E4M3FNUZ = 18, kFloat8E5M2 = 19,
                  kFloat8E5M2FNUZ = 20, kUint4 = 21, kInt4 = 22, kFloat4E2M1 = 23;
}

std::optional<DType> DTypeFromOnnx(int32_t v) {
  switch (v) {
    case onnx_type::kFloat: return DType::kF32;
    case onnx_type::kFloat16: return DType::kF16;
    case onnx_type::kBfloat16: return DType::kBF16;
    case onnx_type::kFloat8E4M3FN: return DType::kF8E4M3;
    case onnx_type::kDouble: return DType::kF64;
    case onnx_type::kInt64: return DType::kI64;
    case onnx_type::kInt32: return DType::kI32;
    case onnx_type::kInt8: return DType::kI8;
    case onnx_type::kUint8: return DType::kU8;
    case onnx_type::kBool: return DType::kBool;
    default: return std::nullopt;
  }
}

int32_t DTypeToOnnx(DType t) {
  switch (t) {
    case DType::kF32: return onnx_type::kFloat;
    case DType::kF16: return onnx_type::kFloat16;
    case DType::kBF16: return onnx_type::kBfloat16;
    case DType::kF8E4M3: return onnx_type::kFloat8E4M3FN;
    case DType::kF64: return onnx_type::kDouble;
    case DType::kI64: return onnx_type::kInt64;
    case DType::kI32: return onnx_type::kInt32;
    case DType::kI8: return onnx_type::kInt8;
    case DType::kU8: return onnx_type::kUint8;
    case DType::kBool: return onnx_type::kBool;
  }
  return 0;
}

std::string OnnxTypeName(int32_t v) {
  static const char* const kNames[] = {
      "UNDEFINED", "FLOAT",     "UINT8",      "INT8",          "UINT16",     "INT16",
      "INT32",     "INT64",     "STRING",     "BOOL",          "FLOAT16",    "DOUBLE",
      "UINT32",    "UINT64",    "COMPLEX64",  "COMPLEX128",    "BFLOAT16",   "FLOAT8E4M3FN",
      "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4",   "FLOAT4E2M1"};
  if (v >= 0 && v < static_cast<int32_t>(std::size(kNames))) return kNames[v];
  return "type " + std::to_string(v);
}

uint16_t FloatToHalf(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {  // subnormal half (or zero): value = m * 2^-24
    float a = std::bit_cast<float>(abs);
    // Adding 0.5 (2^-1) forces rounding at 2^-24 granularity in fp32 arithmetic.
    float r = a + 0.5f;
    uint32_t m = std::bit_cast<uint32_t>(r) - 0x3f000000u;
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t mant_odd = (abs >> 13) & 1u;
  abs += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
  return static_cast<uint16_t>(sign | (abs >> 13));
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t FloatToBFloat16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // NaN
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

float BFloat16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

uint8_t FloatToF8E4M3(float f) {
  // e4m3fn: 1 sign, 4 exponent (bias 7), 3 mantissa; no inf; 0x7f/0xff is NaN; max 448.
  if (std::isnan(f)) return 0x7f;
  uint8_t sign = std::signbit(f) ? 0x80 : 0;
  float a = std::fabs(f);
  if (a >= 464.0f) return sign | 0x7e;  // saturate (448 is the largest finite)
  if (a < std::ldexp(1.0f, -10)) {       // below half the smallest subnormal 2^-9
    return sign;
  }
  int e;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int exp = e - 1;    // a = 1.x * 2^exp
  if (exp < -6) exp = -6;  // subnormal range uses the fixed exponent -6
  float step = std::ldexp(1.0f, exp - 3);
  float q = std::nearbyint(a / step) * step;  // round half to even (default rounding mode)
  if (q >= 464.0f) return sign | 0x7e;
  if (q > 448.0f) q = 448.0f;
  if (q == 0.0f) return sign;
  std::frexp(q, &e);
  int qexp = e - 1;
  if (qexp < -6) {  // subnormal: q = m * 2^-9
    return static_cast<uint8_t>(sign | static_cast<uint8_t>(q / std::ldexp(1.0f, -9)));
  }
  int mant = static_cast<int>(q / std::ldexp(1.0f, qexp - 3)) - 8;
  return static_cast<uint8_t>(sign | ((qexp + 7) << 3) | mant);
}

float F8E4M3ToFloat(uint8_t v) {
  bool neg = v & 0x80;
  int exp = (v >> 3) & 0xf;
  int mant = v & 0x7;
  float r;
  if (exp == 0xf && mant == 0x7) {
    r = std::nanf("");
  } else if (exp == 0) {
    r = std::ldexp(static_cast<float>(mant), -9);
  } else {
    r = std::ldexp(1.0f + mant / 8.0f, exp - 7);
  }
  return neg ? -r : r;
}

float RoundToStorage(float f, DType t) {
  switch (t) {
    case DType::kF16: return HalfToFloat(FloatToHalf(f));
    case DType::kBF16: return BFloat16ToFloat(FloatToBFloat16(f));
    case DType::kF8E4M3: return F8E4M3ToFloat(FloatToF8E4M3(f));
    default: return f;
  }
}

}  // namespace gcomp
