#include "core/attribute.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace gcomp {

const char* AttrTypeName(const AttrValue& v) {
  static const char* const kNames[] = {"int", "float", "string", "ints", "floats", "strings", "tensor"};
  return kNames[v.index()];
}

const AttrValue* Attributes::Find(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

int64_t Attributes::GetInt(const std::string& name, int64_t def) const {
  const AttrValue* v = Find(name);
  if (v && std::holds_alternative<int64_t>(*v)) return std::get<int64_t>(*v);
  return def;
}

float Attributes::GetFloat(const std::string& name, float def) const {
  const AttrValue* v = Find(name);
  if (v && std::holds_alternative<float>(*v)) return std::get<float>(*v);
  return def;
}

std::string Attributes::GetString(const std::string& name, const std::string& def) const {
  const AttrValue* v = Find(name);
  if (v && std::holds_alternative<std::string>(*v)) return std::get<std::string>(*v);
  return def;
}

std::vector<int64_t> Attributes::GetInts(const std::string& name, std::vector<int64_t> def) const {
  const AttrValue* v = Find(name);
  if (v && std::holds_alternative<std::vector<int64_t>>(*v)) return std::get<std::vector<int64_t>>(*v);
  return def;
}

std::vector<float> Attributes::GetFloats(const std::string& name, std::vector<float> def) const {
  const AttrValue* v = Find(name);
  if (v && std::holds_alternative<std::vector<float>>(*v)) return std::get<std::vector<float>>(*v);
  return def;
}

const Tensor* Attributes::GetTensor(const std::string& name) const {
  const AttrValue* v = Find(name);
  if (v && std::holds_alternative<Tensor>(*v)) return &std::get<Tensor>(*v);
  return nullptr;
}

std::string AttrValueToString(const AttrValue& v) {
  struct Printer {
    std::string operator()(int64_t x) const { return absl::StrCat(x); }
    std::string operator()(float x) const { return absl::StrCat(x); }
    std::string operator()(const std::string& x) const { return absl::StrCat("\"", x, "\""); }
    std::string operator()(const std::vector<int64_t>& x) const {
      return absl::StrCat("[", absl::StrJoin(x, ","), "]");
    }
    std::string operator()(const std::vector<float>& x) const {
      return absl::StrCat("[", absl::StrJoin(x, ","), "]");
    }
    std::string operator()(const std::vector<std::string>& x) const {
      return absl::StrCat("[\"", absl::StrJoin(x, "\",\""), "\"]");
    }
    std::string operator()(const Tensor& t) const { return t.DebugString(); }
  };
  return std::visit(Printer{}, v);
}

bool TypeMatches(const AttrValue& v, AttrType t) {
  switch (t) {
    case AttrType::kInt: return std::holds_alternative<int64_t>(v);
    case AttrType::kFloat: return std::holds_alternative<float>(v);
    case AttrType::kString: return std::holds_alternative<std::string>(v);
    case AttrType::kInts: return std::holds_alternative<std::vector<int64_t>>(v);
    case AttrType::kFloats: return std::holds_alternative<std::vector<float>>(v);
    case AttrType::kStrings: return std::holds_alternative<std::vector<std::string>>(v);
    case AttrType::kTensor: return std::holds_alternative<Tensor>(v);
  }
  return false;
}

const char* AttrTypeLabel(AttrType t) {
  static const char* const kNames[] = {"int", "float", "string", "ints", "floats", "strings", "tensor"};
  return kNames[static_cast<int>(t)];
}

absl::Status CheckAttributes(const Attributes& attrs, const std::vector<AttrSpec>& specs, bool allow_unknown) {
  for (const auto& [name, value] : attrs.all()) {
    auto it = std::find_if(specs.begin(), specs.end(), [&key = name](const AttrSpec& s) { return s.name == key; });
    if (it == specs.end()) {
      if (allow_unknown) continue;  // ONNX runtimes ignore unknown attributes of ops
      return absl::InvalidArgumentError(absl::StrCat("attribute '", name, "' is not one this takes"));
    }
    if (!TypeMatches(value, it->type)) {
      return absl::InvalidArgumentError(absl::StrCat("attribute '", name, "' has type ", AttrTypeName(value),
                                                     ", expected ", AttrTypeLabel(it->type)));
    }
  }
  for (const AttrSpec& s : specs) {
    if (s.required && !attrs.Has(s.name)) {
      return absl::InvalidArgumentError(absl::StrCat("required attribute '", s.name, "' is missing"));
    }
  }
  return absl::OkStatus();
}

}  // namespace gcomp
