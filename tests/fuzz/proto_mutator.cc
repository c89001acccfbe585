#include "tests/fuzz/proto_mutator.h"

#include <cmath>
#include <limits>
#include <map>

namespace gcomp::fuzz {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

constexpr int kMaxDepth = 12;

uint64_t Below(std::mt19937_64& rng, uint64_t n) { return n == 0 ? 0 : rng() % n; }

// Fields whose numbers are element types, opset versions or small enumerations: mostly valid
// values, so that the change reaches the code behind the parser.
bool IsDTypeField(const std::string& name) {
  return name == "data_type" || name == "elem_type" || name == "dtype" || name == "to";
}

int64_t MutatedInt(const std::string& name, int64_t v, std::mt19937_64& rng) {
  static constexpr int64_t kInteresting[] = {0,
                                             1,
                                             -1,
                                             2,
                                             3,
                                             4,
                                             7,
                                             8,
                                             16,
                                             63,
                                             64,
                                             255,
                                             256,
                                             4096,
                                             65535,
                                             65536,
                                             std::numeric_limits<int32_t>::max(),
                                             int64_t{1} << 31,
                                             std::numeric_limits<int32_t>::min(),
                                             int64_t{1} << 32,
                                             int64_t{1} << 40,
                                             int64_t{1} << 62,
                                             std::numeric_limits<int64_t>::max(),
                                             std::numeric_limits<int64_t>::min()};
  if (IsDTypeField(name) && Below(rng, 4) != 0) return static_cast<int64_t>(Below(rng, 27));
  if (name == "version" && Below(rng, 4) != 0) return 1 + static_cast<int64_t>(Below(rng, 25));
  switch (Below(rng, 5)) {
    case 0:
    case 1: return kInteresting[Below(rng, std::size(kInteresting))];
    case 2: return static_cast<int64_t>(static_cast<uint64_t>(v) + Below(rng, 7) - 3);
    case 3: {
      const uint64_t how = Below(rng, 3);
      // Wrapping arithmetic: the point is the boundary values it reaches.
      const uint64_t u = static_cast<uint64_t>(v);
      return static_cast<int64_t>(how == 0 ? u * 2 : (how == 1 ? u / 2 : 0 - u));
    }
    default: return static_cast<int64_t>(Below(rng, 2001)) - 1000;
  }
}

double MutatedFloat(double v, std::mt19937_64& rng) {
  static constexpr double kInteresting[] = {0.0,
                                            -0.0,
                                            1.0,
                                            -1.0,
                                            0.5,
                                            1e-45,
                                            1e-38,
                                            65504.0,
                                            1e30,
                                            -1e30,
                                            std::numeric_limits<double>::infinity(),
                                            -std::numeric_limits<double>::infinity(),
                                            std::numeric_limits<double>::quiet_NaN()};
  switch (Below(rng, 3)) {
    case 0: return kInteresting[Below(rng, std::size(kInteresting))];
    case 1: return v * (Below(rng, 2) ? 2.0 : -0.5);
    default: return (static_cast<double>(Below(rng, 20001)) - 10000.0) / 100.0;
  }
}

// The pool a string field draws other values from: every edge-like field shares one.
std::string PoolKey(const FieldDescriptor* field) {
  const std::string& n = field->name();
  if (n == "input" || n == "output" || n == "name" || n == "inputs" || n == "outputs") return "edge";
  return n;
}

void CutGrowOrFlip(std::string* s, std::mt19937_64& rng) {
  switch (Below(rng, 5)) {
    case 0: s->resize(Below(rng, s->size() + 1)); break;
    case 1:
      for (uint64_t k = 1 + Below(rng, 16); k > 0; --k) s->push_back(static_cast<char>(Below(rng, 256)));
      break;
    case 2:
      if (!s->empty()) (*s)[Below(rng, s->size())] ^= static_cast<char>(1u << Below(rng, 8));
      break;
    case 3: *s += *s; break;
    default: s->clear(); break;
  }
}

}  // namespace

void ProtoMutator::Collect(Message* message, std::vector<Site>* sites, Pools* pools,
                           int depth) const {
  if (depth > kMaxDepth) return;
  const google::protobuf::Descriptor* d = message->GetDescriptor();
  const Reflection* r = message->GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    sites->push_back({message, f});
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) {
        for (int k = 0; k < r->FieldSize(*message, f); ++k) {
          Collect(r->MutableRepeatedMessage(message, f, k), sites, pools, depth + 1);
        }
      } else if (r->HasField(*message, f)) {
        Collect(r->MutableMessage(message, f), sites, pools, depth + 1);
      }
    } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
      std::vector<std::string>& pool = (*pools)[PoolKey(f)];
      auto add = [&](std::string v) {
        if (v.size() <= 256) pool.push_back(std::move(v));
      };
      if (f->is_repeated()) {
        for (int k = 0; k < r->FieldSize(*message, f); ++k) add(r->GetRepeatedString(*message, f, k));
      } else if (r->HasField(*message, f) || f->file()->syntax() == google::protobuf::FileDescriptor::SYNTAX_PROTO3) {
        add(r->GetString(*message, f));
      }
    }
  }
}

std::string ProtoMutator::MutatedString(const FieldDescriptor* field, std::string value, std::mt19937_64& rng,
                                        const Pools& pools) const {
  const std::string key = PoolKey(field);
  if ((key == "op_type" || key == "op") && !op_types_.empty() && Below(rng, 4) != 0) {
    return op_types_[Below(rng, op_types_.size())];
  }
  if (auto it = pools.find(key); it != pools.end() && !it->second.empty() && Below(rng, key == "edge" ? 4 : 2) != 0) {
    return it->second[Below(rng, it->second.size())];
  }
  if (key == "domain" && Below(rng, 2) != 0) {
    static const char* kDomains[] = {"", "ai.onnx", "ai.onnx.ml", "com.microsoft", "pkg.onnxscript.torch_lib", "x"};
    return kDomains[Below(rng, std::size(kDomains))];
  }
  CutGrowOrFlip(&value, rng);
  return value;
}

void ProtoMutator::MutateScalar(const Site& site, int index, std::mt19937_64& rng,
                                const Pools& pools) const {
  Message* m = site.message;
  const FieldDescriptor* f = site.field;
  const Reflection* r = m->GetReflection();
  const bool rep = index >= 0;
  const std::string& name = f->name();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      const int64_t v = rep ? r->GetRepeatedInt32(*m, f, index) : r->GetInt32(*m, f);
      const auto nv = static_cast<int32_t>(MutatedInt(name, v, rng));
      rep ? r->SetRepeatedInt32(m, f, index, nv) : r->SetInt32(m, f, nv);
      break;
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      const int64_t v = rep ? r->GetRepeatedInt64(*m, f, index) : r->GetInt64(*m, f);
      const int64_t nv = MutatedInt(name, v, rng);
      rep ? r->SetRepeatedInt64(m, f, index, nv) : r->SetInt64(m, f, nv);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      const int64_t v = rep ? r->GetRepeatedUInt32(*m, f, index) : r->GetUInt32(*m, f);
      const auto nv = static_cast<uint32_t>(MutatedInt(name, v, rng));
      rep ? r->SetRepeatedUInt32(m, f, index, nv) : r->SetUInt32(m, f, nv);
      break;
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      const auto v = static_cast<int64_t>(rep ? r->GetRepeatedUInt64(*m, f, index) : r->GetUInt64(*m, f));
      const auto nv = static_cast<uint64_t>(MutatedInt(name, v, rng));
      rep ? r->SetRepeatedUInt64(m, f, index, nv) : r->SetUInt64(m, f, nv);
      break;
    }
    case FieldDescriptor::CPPTYPE_FLOAT: {
      const double v = rep ? r->GetRepeatedFloat(*m, f, index) : r->GetFloat(*m, f);
      const double d = MutatedFloat(v, rng);
      // Out-of-range doubles become infinities (a plain cast would be undefined).
      const float nv = std::fabs(d) > std::numeric_limits<float>::max() ? static_cast<float>(std::copysign(INFINITY, d))
                                                                          : static_cast<float>(d);
      rep ? r->SetRepeatedFloat(m, f, index, nv) : r->SetFloat(m, f, nv);
      break;
    }
    case FieldDescriptor::CPPTYPE_DOUBLE: {
      const double v = rep ? r->GetRepeatedDouble(*m, f, index) : r->GetDouble(*m, f);
      const double nv = MutatedFloat(v, rng);
      rep ? r->SetRepeatedDouble(m, f, index, nv) : r->SetDouble(m, f, nv);
      break;
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      const bool v = rep ? r->GetRepeatedBool(*m, f, index) : r->GetBool(*m, f);
      rep ? r->SetRepeatedBool(m, f, index, !v) : r->SetBool(m, f, !v);
      break;
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const google::protobuf::EnumDescriptor* e = f->enum_type();
      const int nv = e->value(static_cast<int>(Below(rng, e->value_count())))->number();
      rep ? r->SetRepeatedEnumValue(m, f, index, nv) : r->SetEnumValue(m, f, nv);
      break;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string v = rep ? r->GetRepeatedString(*m, f, index) : r->GetString(*m, f);
      std::string nv = MutatedString(f, std::move(v), rng, pools);
      rep ? r->SetRepeatedString(m, f, index, std::move(nv)) : r->SetString(m, f, std::move(nv));
      break;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE: break;
  }
}

void ProtoMutator::MutateRepeated(const Site& site, std::mt19937_64& rng, const Pools& pools) const {
  Message* m = site.message;
  const FieldDescriptor* f = site.field;
  const Reflection* r = m->GetReflection();
  const int n = r->FieldSize(*m, f);
  const bool is_message = f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE;
  const uint64_t op = n == 0 ? 3 : Below(rng, is_message ? 4 : 6);
  switch (op) {
    case 0: {  // remove one element, keeping the others' order
      for (int k = static_cast<int>(Below(rng, n)); k + 1 < n; ++k) r->SwapElements(m, f, k, k + 1);
      r->RemoveLast(m, f);
      break;
    }
    case 1: {  // swap two
      r->SwapElements(m, f, static_cast<int>(Below(rng, n)), static_cast<int>(Below(rng, n)));
      break;
    }
    case 2: {  // duplicate one (appended)
      const int k = static_cast<int>(Below(rng, n));
      if (is_message) {
        std::unique_ptr<Message> copy(r->GetRepeatedMessage(*m, f, k).New());
        copy->CopyFrom(r->GetRepeatedMessage(*m, f, k));
        r->AddMessage(m, f)->CopyFrom(*copy);
      } else {
        switch (f->cpp_type()) {
          case FieldDescriptor::CPPTYPE_INT32: r->AddInt32(m, f, r->GetRepeatedInt32(*m, f, k)); break;
          case FieldDescriptor::CPPTYPE_INT64: r->AddInt64(m, f, r->GetRepeatedInt64(*m, f, k)); break;
          case FieldDescriptor::CPPTYPE_UINT32: r->AddUInt32(m, f, r->GetRepeatedUInt32(*m, f, k)); break;
          case FieldDescriptor::CPPTYPE_UINT64: r->AddUInt64(m, f, r->GetRepeatedUInt64(*m, f, k)); break;
          case FieldDescriptor::CPPTYPE_FLOAT: r->AddFloat(m, f, r->GetRepeatedFloat(*m, f, k)); break;
          case FieldDescriptor::CPPTYPE_DOUBLE: r->AddDouble(m, f, r->GetRepeatedDouble(*m, f, k)); break;
          case FieldDescriptor::CPPTYPE_BOOL: r->AddBool(m, f, r->GetRepeatedBool(*m, f, k)); break;
          case FieldDescriptor::CPPTYPE_ENUM: r->AddEnumValue(m, f, r->GetRepeatedEnumValue(*m, f, k)); break;
          case FieldDescriptor::CPPTYPE_STRING: r->AddString(m, f, r->GetRepeatedString(*m, f, k)); break;
          case FieldDescriptor::CPPTYPE_MESSAGE: break;
        }
      }
      break;
    }
    case 3: {  // a new element: empty message, or a mutated default value
      if (is_message) {
        r->AddMessage(m, f);
        break;
      }
      switch (f->cpp_type()) {
        case FieldDescriptor::CPPTYPE_INT32: r->AddInt32(m, f, 0); break;
        case FieldDescriptor::CPPTYPE_INT64: r->AddInt64(m, f, 0); break;
        case FieldDescriptor::CPPTYPE_UINT32: r->AddUInt32(m, f, 0); break;
        case FieldDescriptor::CPPTYPE_UINT64: r->AddUInt64(m, f, 0); break;
        case FieldDescriptor::CPPTYPE_FLOAT: r->AddFloat(m, f, 0); break;
        case FieldDescriptor::CPPTYPE_DOUBLE: r->AddDouble(m, f, 0); break;
        case FieldDescriptor::CPPTYPE_BOOL: r->AddBool(m, f, false); break;
        case FieldDescriptor::CPPTYPE_ENUM: r->AddEnumValue(m, f, f->enum_type()->value(0)->number()); break;
        case FieldDescriptor::CPPTYPE_STRING: r->AddString(m, f, ""); break;
        case FieldDescriptor::CPPTYPE_MESSAGE: break;
      }
      MutateScalar(site, r->FieldSize(*m, f) - 1, rng, pools);
      break;
    }
    default:  // change one element in place
      MutateScalar(site, static_cast<int>(Below(rng, n)), rng, pools);
      break;
  }
}

void ProtoMutator::Mutate(Message* message, std::mt19937_64& rng) const {
  std::vector<Site> sites;
  Pools pools;
  Collect(message, &sites, &pools, 0);
  if (sites.empty()) return;
  const Site& site = sites[Below(rng, sites.size())];
  const Reflection* r = site.message->GetReflection();
  if (site.field->is_repeated()) {
    MutateRepeated(site, rng, pools);
  } else if (site.field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    // A nested message appears or disappears (its fields are sites of their own).
    if (r->HasField(*site.message, site.field)) {
      r->ClearField(site.message, site.field);
    } else {
      r->MutableMessage(site.message, site.field);
    }
  } else {
    MutateScalar(site, -1, rng, pools);
  }
}

}  // namespace gcomp::fuzz
