#include "triton/json.h"

#include <charconv>
#include <cstdio>

namespace gcomp::triton {

Json Json::Bool(bool b) {
  Json j;
  j.kind_ = Kind::kBool;
  j.bool_ = b;
  return j;
}

Json Json::Number(int64_t v) {
  Json j;
  j.kind_ = Kind::kNumber;
  j.text_ = std::to_string(v);
  return j;
}

Json Json::String(std::string s) {
  Json j;
  j.kind_ = Kind::kString;
  j.text_ = std::move(s);
  return j;
}

Json Json::Array() {
  Json j;
  j.kind_ = Kind::kArray;
  return j;
}

Json Json::Object() {
  Json j;
  j.kind_ = Kind::kObject;
  return j;
}

const Json* Json::Find(std::string_view key) const {
  if (kind_ != Kind::kObject) return nullptr;
  for (const auto& [k, v] : members_) {
    if (k == key) return &v;
  }
  return nullptr;
}

Json* Json::Find(std::string_view key) { return const_cast<Json*>(static_cast<const Json*>(this)->Find(key)); }

void Json::Set(std::string key, Json value) {
  if (Json* j = Find(key)) {
    *j = std::move(value);
    return;
  }
  members_.emplace_back(std::move(key), std::move(value));
}

std::optional<int64_t> Json::AsInt() const {
  if (kind_ != Kind::kNumber && kind_ != Kind::kString) return std::nullopt;
  int64_t v = 0;
  const char* end = text_.data() + text_.size();
  auto [p, ec] = std::from_chars(text_.data(), end, v);
  if (ec != std::errc() || p != end || text_.empty()) return std::nullopt;
  return v;
}

namespace {

void DumpString(const std::string& s, std::string& out) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void DumpTo(const Json& j, std::string& out) {
  switch (j.kind()) {
    case Json::Kind::kNull:
      out += "null";
      break;
    case Json::Kind::kBool:
      out += j.boolean() ? "true" : "false";
      break;
    case Json::Kind::kNumber:
      out += j.str();
      break;
    case Json::Kind::kString:
      DumpString(j.str(), out);
      break;
    case Json::Kind::kArray: {
      out += '[';
      for (size_t i = 0; i < j.items().size(); ++i) {
        if (i) out += ',';
        DumpTo(j.items()[i], out);
      }
      out += ']';
      break;
    }
    case Json::Kind::kObject: {
      out += '{';
      bool first = true;
      for (const auto& [k, v] : j.members()) {
        if (!first) out += ',';
        first = false;
        DumpString(k, out);
        out += ':';
        DumpTo(v, out);
      }
      out += '}';
      break;
    }
  }
}

}  // namespace

std::string Json::Dump() const {
  std::string out;
  DumpTo(*this, out);
  return out;
}

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : s_(text) {}

  Result<Json> ParseAll() {
    Json j;
    if (Status st = Value(j, 0); !st.ok()) return st;
    Skip();
    if (pos_ != s_.size()) return Error("unexpected bytes after the value");
    return j;
  }

 private:
  static constexpr int kMaxDepth = 64;

  Status Error(const std::string& what) const {
    return Status(StatusCode::kInvalidArgument, "JSON at byte " + std::to_string(pos_) + ": " + what);
  }
  void Skip() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t')) ++pos_;
  }
  bool Consume(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Status Value(Json& out, int depth) {
    if (depth > kMaxDepth) return Error("nested deeper than 64 levels");
    Skip();
    if (pos_ >= s_.size()) return Error("unexpected end");
    const char c = s_[pos_];
    if (c == '{') return ObjectValue(out, depth);
    if (c == '[') return ArrayValue(out, depth);
    if (c == '"') {
      out.kind_ = Json::Kind::kString;
      return StringValue(out.text_);
    }
    if (Consume("true")) {
      out = Json::Bool(true);
      return Status();
    }
    if (Consume("false")) {
      out = Json::Bool(false);
      return Status();
    }
    if (Consume("null")) {
      out = Json();
      return Status();
    }
    return NumberValue(out);
  }

  Status NumberValue(Json& out) {
    const size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    auto digits = [&] {
      const size_t d = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ > d;
    };
    const size_t first = pos_;
    if (!digits()) return Error("expected a value");
    if (s_[first] == '0' && pos_ - first > 1) return Error("a number with a leading zero");
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (!digits()) return Error("expected digits after '.'");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) return Error("expected an exponent");
    }
    out.kind_ = Json::Kind::kNumber;
    out.text_ = std::string(s_.substr(start, pos_ - start));
    return Status();
  }

  static void AppendUtf8(uint32_t cp, std::string& out) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  Status Hex4(uint32_t& v) {
    if (pos_ + 4 > s_.size()) return Error("short \\u escape");
    v = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = s_[pos_++];
      v <<= 4;
      if (h >= '0' && h <= '9')
        v |= h - '0';
      else if (h >= 'a' && h <= 'f')
        v |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F')
        v |= h - 'A' + 10;
      else
        return Error("bad \\u escape");
    }
    return Status();
  }

  Status StringValue(std::string& out) {
    ++pos_;  // opening quote
    out.clear();
    while (true) {
      if (pos_ >= s_.size()) return Error("unterminated string");
      const char c = s_[pos_++];
      if (c == '"') return Status();
      if (static_cast<unsigned char>(c) < 0x20) return Error("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) return Error("unterminated escape");
      const char e = s_[pos_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = 0;
          if (Status st = Hex4(cp); !st.ok()) return st;
          if (cp >= 0xDC00 && cp < 0xE000) return Error("lone low surrogate");
          if (cp >= 0xD800 && cp < 0xDC00) {
            uint32_t low = 0;
            if (!Consume("\\u")) return Error("lone high surrogate");
            if (Status st = Hex4(low); !st.ok()) return st;
            if (low < 0xDC00 || low >= 0xE000) return Error("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          AppendUtf8(cp, out);
          break;
        }
        default:
          return Error(std::string("bad escape '\\") + e + "'");
      }
    }
  }

  Status ArrayValue(Json& out, int depth) {
    ++pos_;
    out = Json::Array();
    Skip();
    if (Consume("]")) return Status();
    while (true) {
      Json item;
      if (Status st = Value(item, depth + 1); !st.ok()) return st;
      out.items_.push_back(std::move(item));
      Skip();
      if (Consume("]")) return Status();
      if (!Consume(",")) return Error("expected ',' or ']'");
    }
  }

  Status ObjectValue(Json& out, int depth) {
    ++pos_;
    out = Json::Object();
    Skip();
    if (Consume("}")) return Status();
    while (true) {
      Skip();
      if (pos_ >= s_.size() || s_[pos_] != '"') return Error("expected a member name");
      std::string key;
      if (Status st = StringValue(key); !st.ok()) return st;
      Skip();
      if (!Consume(":")) return Error("expected ':'");
      Json value;
      if (Status st = Value(value, depth + 1); !st.ok()) return st;
      out.members_.emplace_back(std::move(key), std::move(value));
      Skip();
      if (Consume("}")) return Status();
      if (!Consume(",")) return Error("expected ',' or '}'");
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

Result<Json> Json::Parse(std::string_view text) { return JsonParser(text).ParseAll(); }

}  // namespace gcomp::triton
