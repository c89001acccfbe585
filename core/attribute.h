// Typed node attributes.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "core/tensor.h"

namespace gcomp {

using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                               std::vector<float>, std::vector<std::string>, Tensor>;

// Attribute type names for messages: "int", "float", "string", "ints", "floats", "strings", "tensor".
const char* AttrTypeName(const AttrValue& v);

// Sorted by name so printing and serialization are deterministic.
class Attributes {
 public:
  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  void Set(const std::string& name, AttrValue v) { values_[name] = std::move(v); }
  void Erase(const std::string& name) { values_.erase(name); }
  const AttrValue* Find(const std::string& name) const;
  const std::map<std::string, AttrValue>& all() const { return values_; }

  // Typed getters: the default when absent; callers validate types with the Expect* helpers
  // of the op table before calling these.
  int64_t GetInt(const std::string& name, int64_t def) const;
  float GetFloat(const std::string& name, float def) const;
  std::string GetString(const std::string& name, const std::string& def) const;
  std::vector<int64_t> GetInts(const std::string& name, std::vector<int64_t> def = {}) const;
  std::vector<float> GetFloats(const std::string& name, std::vector<float> def = {}) const;
  const Tensor* GetTensor(const std::string& name) const;

 private:
  std::map<std::string, AttrValue> values_;
};

std::string AttrValueToString(const AttrValue& v);

enum class AttrType { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor };
const char* AttrTypeLabel(AttrType t);
bool TypeMatches(const AttrValue& v, AttrType t);

// One attribute an op (or a kernel's parameter blob) takes.
struct AttrSpec {
  std::string name;
  AttrType type;
  bool required = false;
};

// Checks `attrs` against `specs`: each known attribute's type, every required one present, and,
// unless `allow_unknown`, no attribute outside `specs`. Errors name the attribute.
absl::Status CheckAttributes(const Attributes& attrs, const std::vector<AttrSpec>& specs, bool allow_unknown);

}  // namespace gcomp
