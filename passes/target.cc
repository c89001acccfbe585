#include "passes/target.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/epilogue.h"
#include "core/status_macros.h"
#include "passes/target_data.h"

namespace gcomp::passes {

bool TargetDescription::HasPrecision(const std::string& p) const {
  return std::find(precisions.begin(), precisions.end(), p) != precisions.end();
}

const GemmEpilogue* TargetDescription::Epilogue(const std::string& activation) const {
  for (const GemmEpilogue& e : gemm_epilogues) {
    if (e.activation == activation) return &e;
  }
  return nullptr;
}

absl::StatusOr<TargetDescription> ParseTargetDescription(const std::string& text, const std::string& source) {
  TargetDescription t;
  t.source = source;
  int line_no = 0;
  auto error = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(source, ":", line_no, ": ", what));
  };
  auto yes_no = [](const std::string& v) { return v != "no"; };
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_no;
    std::string line(absl::StripAsciiWhitespace(raw));
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    const std::string key = words[0];
    std::string rest = words.size() > 1 ? std::string(absl::StripAsciiWhitespace(line.substr(key.size()))) : "";
    if (rest.empty()) return error(absl::StrCat("'", key, "' needs a value"));
    if (key == "name") {
      t.name = rest;
    } else if (key == "alias") {
      t.aliases.push_back(rest);
    } else if (key == "description") {
      t.description = rest;
    } else if (key == "layout") {
      if (rest != "NCHW" && rest != "NHWC") return error(absl::StrCat("layout '", rest, "', expected NCHW or NHWC"));
      t.layout = rest;
    } else if (key == "precisions") {
      static const std::vector<std::string> kKnown = {"fp32", "tf32", "fp16", "bf16", "fp8"};
      for (size_t i = 1; i < words.size(); ++i) {
        if (std::find(kKnown.begin(), kKnown.end(), words[i]) == kKnown.end()) {
          return error(absl::StrCat("precision '", words[i], "', expected one of ", absl::StrJoin(kKnown, ", ")));
        }
        t.precisions.push_back(words[i]);
      }
    } else if (key == "conv-implicit-gemm") {
      t.implicit_gemm_conv = yes_no(rest) ? rest : "";
    } else if (key == "conv-im2col") {
      t.im2col = yes_no(rest);
    } else if (key == "attention-fused") {
      t.fused_attention = yes_no(rest) ? rest : "";
    } else if (key == "fp8-gemm") {
      t.fp8_gemm = yes_no(rest) ? rest : "";
    } else if (key == "rewrite") {
      t.rewrite = yes_no(rest);
    } else if (key == "gemm-epilogue") {
      if (words.size() < 3 || !ParseActivation(words[1]) ||
          (words[2] != "exact" && words[2] != "approx")) {
        return error(
            absl::StrCat("expected 'gemm-epilogue ACTIVATION exact|approx [note]' with ACTIVATION one of ",
                         ActivationNameList()));
      }
      GemmEpilogue e{words[1], words[2] == "exact", ""};
      std::vector<std::string> note(words.begin() + 3, words.end());
      e.note = absl::StrJoin(note, " ");
      t.gemm_epilogues.push_back(e);
    } else {
      return error(absl::StrCat("unknown key '", key, "'"));
    }
  }
  if (t.name.empty()) return absl::InvalidArgumentError(absl::StrCat(source, ": no 'name' line"));
  if (!t.HasPrecision("fp32"))
    return absl::InvalidArgumentError(absl::StrCat(source, ": fp32 is not among the precisions"));
  return t;
}

const std::vector<TargetDescription>& AllTargets() {
  static const std::vector<TargetDescription> kTargets = [] {
    std::vector<TargetDescription> out;
    for (const EmbeddedTarget& e : kEmbeddedTargets) {
      absl::StatusOr<TargetDescription> t = ParseTargetDescription(e.text, e.path);
      // The files are part of the build and tested (target_test); a bad one is a build defect.
      if (t.ok()) out.push_back(*std::move(t));
    }
    return out;
  }();
  return kTargets;
}

std::string TargetNames() {
  std::vector<std::string> names;
  for (const TargetDescription& t : AllTargets()) {
    names.push_back(t.aliases.empty() ? t.name : absl::StrCat(absl::StrJoin(t.aliases, ", "), " (= ", t.name, ")"));
  }
  return absl::StrJoin(names, ", ");
}

absl::StatusOr<const TargetDescription*> FindTarget(const std::string& name) {
  for (const TargetDescription& t : AllTargets()) {
    if (t.name == name || std::find(t.aliases.begin(), t.aliases.end(), name) != t.aliases.end()) return &t;
  }
  // A description file given by path (a custom or hypothetical target for inspect and the passes).
  if (absl::EndsWith(name, ".target")) {
    static std::mutex mu;
    static std::map<std::string, std::unique_ptr<TargetDescription>> loaded;
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = loaded.find(name); it != loaded.end()) return it->second.get();
    std::ifstream f(name);
    if (!f) return absl::InvalidArgumentError(absl::StrCat("target file '", name, "' cannot be read"));
    std::stringstream text;
    text << f.rdbuf();
    if (text.str().size() > (1 << 20)) {
      return absl::InvalidArgumentError(absl::StrCat("target file '", name, "' is over 1 MiB"));
    }
    ASSIGN_OR_RETURN(TargetDescription t, ParseTargetDescription(text.str(), name));
    t.source = std::filesystem::path(name).filename().string();  // decisions name the file, not its folder
    for (const TargetDescription& known : AllTargets()) {
      if (known.name == t.name) {
        return absl::InvalidArgumentError(
            absl::StrCat("target file '", name, "' names target '", t.name, "', which is built in"));
      }
    }
    auto& slot = loaded[name];
    slot = std::make_unique<TargetDescription>(std::move(t));
    return slot.get();
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown target '", name, "', expected one of: ", TargetNames(),
                                                 ", or the path of a .target file"));
}

}  // namespace gcomp::passes
