// erf as one rational function on [-4, 4] (erf is +-1 in float beyond): |error| < 4e-7 against
// std::erf, no branches or libm calls. A template over the operand type, so that fp32 rows
// (blas/fused_params.cc, vectorized by the compiler) and the AVX-512 epilogue of the AMX GEMM
// (own/gemm_amx.cc, on __m512) evaluate the same polynomials. Internal linkage: each file keeps
// its own copy compiled with its own instruction sets.
#pragma once

namespace gcomp::cpu {
namespace {

// erf(x) for x already clamped to [-4, 4]; T is float or a GCC vector of floats.
template <typename T>
inline T ErfRational(T x) {
  const T x2 = x * x;
  T p = x2 * -2.72614225801306e-10f + 2.77068142495902e-08f;
  p = p * x2 + -2.10102402082508e-06f;
  p = p * x2 + -5.69250639462346e-05f;
  p = p * x2 + -7.34990630326855e-04f;
  p = p * x2 + -2.95459980854025e-03f;
  p = p * x2 + -1.60960333262415e-02f;
  p = p * x;
  T q = x2 * -1.45660718464996e-05f + -2.13374055278905e-04f;
  q = q * x2 + -1.68282697438203e-03f;
  q = q * x2 + -7.37332916720468e-03f;
  q = q * x2 + -1.42647390514189e-02f;
  return p / q;
}

}  // namespace
}  // namespace gcomp::cpu
