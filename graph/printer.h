// Printers and the verifier of the graph IR: stable text (golden tests), summary, DOT, JSON, HTML.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "graph/graph.h"

namespace gcomp {

inline constexpr int kJsonSchemaVersion = 1;

// Stable, readable text form: one line per input, constant, node and output.
std::string PrintGraph(const Graph& g);
// Op histogram, node/value/parameter counts, input and output signatures.
std::string PrintSummary(const Graph& g);
std::string GraphToDot(const Graph& g);
// JSON with schema_version: graph, inputs, outputs, constants, nodes, edges.
std::string GraphToJson(const Graph& g);
// One self-contained HTML page (inline SVG, CSS, JS; nothing fetched): the graph in a layered
// layout, nodes coloured by kind and precision, details and decisions on hover/click, pan/zoom,
// search. Deterministic (graph/printer_html.cc).
std::string GraphToHtml(const Graph& g, const std::string& title);

// Structural checks: producers/users consistent, topological order, every node matches its op
// definition, outputs produced, names unique.
absl::Status VerifyGraph(const Graph& g);

// JSON string literal with escapes.
std::string JsonString(const std::string& s);

}  // namespace gcomp
