// A small JSON value for Triton's model configuration messages: parsed from and written back to
// the JSON that TRITONBACKEND_ModelConfig / TRITONBACKEND_ModelSetConfig exchange. Objects keep
// their key order; numbers keep their text, so 64-bit integers round-trip exactly.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gcomp/gcomp.h"

namespace gcomp::triton {

class Json {
 public:
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

  Json() = default;
  static Json Bool(bool b);
  static Json Number(int64_t v);
  static Json String(std::string s);
  static Json Array();
  static Json Object();

  // Parses `text`; nesting deeper than 64 levels or trailing bytes are errors.
  static Result<Json> Parse(std::string_view text);
  std::string Dump() const;

  Kind kind() const { return kind_; }
  bool is_object() const { return kind_ == Kind::kObject; }
  bool is_array() const { return kind_ == Kind::kArray; }

  // Object members (nullptr when absent or not an object).
  const Json* Find(std::string_view key) const;
  Json* Find(std::string_view key);
  // Sets (replacing or appending) a member of an object.
  void Set(std::string key, Json value);
  const std::vector<std::pair<std::string, Json>>& members() const { return members_; }

  const std::vector<Json>& items() const { return items_; }
  std::vector<Json>& mutable_items() { return items_; }
  void Push(Json value) { items_.push_back(std::move(value)); }

  const std::string& str() const { return text_; }  // a string's value
  bool boolean() const { return bool_; }
  // An integer from a number or from a string holding one (protobuf writes int64 as strings).
  std::optional<int64_t> AsInt() const;

 private:
  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  std::string text_;  // string value or number text
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;

  friend class JsonParser;
};

}  // namespace gcomp::triton
