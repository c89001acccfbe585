// Status propagation macros, written once for the whole code base.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define GCOMP_CONCAT_INNER(a, b) a##b
#define GCOMP_CONCAT(a, b) GCOMP_CONCAT_INNER(a, b)

// Returns from the enclosing function if `expr` (an absl::Status) is not OK.
#define RETURN_IF_ERROR(expr)                  \
  do {                                         \
    ::absl::Status gcomp_status_ = (expr);     \
    if (!gcomp_status_.ok()) return gcomp_status_; \
  } while (0)

#define ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                          \
  if (!tmp.ok()) return tmp.status();         \
  lhs = std::move(tmp).value()

// `lhs = value of expr` (an absl::StatusOr<T>), or returns its error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  ASSIGN_OR_RETURN_IMPL(GCOMP_CONCAT(gcomp_statusor_, __LINE__), lhs, expr)
