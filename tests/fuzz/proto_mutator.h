// A structure-aware mutator for any protobuf message, written with protobuf reflection (Debian has
// no libprotobuf-mutator). One call makes one change at a site chosen uniformly among every field
// of every nested message: numbers become boundary values (0, -1, 2^31, 2^63 - 1, ...) or move a
// little, floats become NaN/inf/denormals, repeated fields lose, duplicate, swap or gain elements,
// strings take other values of the same field (edge-like fields: any edge) in the message tree, op_type
// strings become other operators, dtype-like fields other element types, opset versions other
// versions, and bytes are cut, grown or flipped. The fuzz targets that read ModelProto
// (fuzz_compile) and the plan's PlanProgram/PlanHeader (fuzz_plan) share it.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "google/protobuf/message.h"

namespace gcomp::fuzz {

class ProtoMutator {
 public:
  // `op_types`: the values a field named op_type or op may take.
  explicit ProtoMutator(std::vector<std::string> op_types) : op_types_(std::move(op_types)) {}

  // Makes one change to `message` with randomness from `rng`.
  void Mutate(google::protobuf::Message* message, std::mt19937_64& rng) const;

 private:
  struct Site {
    google::protobuf::Message* message;
    const google::protobuf::FieldDescriptor* field;
  };
  // Short string values of the message tree by pool (edge-like fields share one, others by name).
  using Pools = std::map<std::string, std::vector<std::string>>;
  void Collect(google::protobuf::Message* message, std::vector<Site>* sites, Pools* pools,
               int depth) const;
  void MutateRepeated(const Site& site, std::mt19937_64& rng, const Pools& pools) const;
  void MutateScalar(const Site& site, int index, std::mt19937_64& rng, const Pools& pools) const;
  std::string MutatedString(const google::protobuf::FieldDescriptor* field, std::string value, std::mt19937_64& rng,
                            const Pools& pools) const;

  std::vector<std::string> op_types_;
};

}  // namespace gcomp::fuzz
