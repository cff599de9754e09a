// Graphviz export. Every graph is a cluster; a node holding subgraphs is drawn
// inside a wrapper cluster together with the clusters of its subgraphs, so the
// nesting is visible. Each output that has a label (its buffer) or is one of
// several gets its own row in the node, and data edges leave from that row;
// control edges are dashed. Node ids in the DOT text are generated
// (g<graph>n<node>), so user names only ever appear inside escaped labels.
#include "ir/dot.h"

#include "ir/op_library.h"
#include "ir/printer.h"

#include <fmt/format.h>

#include <vector>

namespace graphvet {
namespace {

/// Length of the valid UTF-8 sequence starting at s[i], or 0.
size_t utf8Length(const std::string &s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (len == 0 || i + len > s.size())
    return 0;
  for (size_t k = 1; k < len; ++k)
    if ((byte(i + k) & 0xc0) != 0x80)
      return 0;
  return len;
}

/// Text for an HTML-like label: markup characters escaped, control bytes and
/// invalid UTF-8 replaced so graphviz never rejects the file.
std::string html(const std::string &s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    switch (c) {
    case '&':
      out += "&amp;";
      ++i;
      continue;
    case '<':
      out += "&lt;";
      ++i;
      continue;
    case '>':
      out += "&gt;";
      ++i;
      continue;
    case '"':
      out += "&quot;";
      ++i;
      continue;
    default:
      break;
    }
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += "&#xFFFD;";
      ++i;
      continue;
    }
    size_t len = utf8Length(s, i);
    if (len == 0) {
      out += "&#xFFFD;";
      ++i;
      continue;
    }
    out.append(s, i, len);
    i += len;
  }
  return out;
}

std::string truncated(std::string s, size_t limit) {
  if (s.size() > limit) {
    s.resize(limit);
    s += "...";
  }
  return s;
}

std::string valueText(const AttrValue &v) {
  if (v.isInt())
    return std::to_string(v.asInt());
  if (v.isBool())
    return v.asBool() ? "true" : "false";
  if (v.isString())
    return fmt::format("\"{}\"", v.asString());
  if (v.isIdent())
    return v.asIdent();
  // Floats and tensor literals (format version 2) as the printer writes them;
  // the label truncates a long tensor.
  if (!v.isList())
    return formatAttrValue(v);
  std::string out = "[";
  bool first = true;
  for (const AttrValue &e : v.asList()) {
    out += fmt::format("{}{}", first ? "" : ", ", valueText(e));
    first = false;
    if (out.size() > 64)
      break;
  }
  return out + "]";
}

std::string nodeId(GraphId g, NodeId n) {
  return fmt::format("g{}n{}", g, n);
}

constexpr size_t kMaxNestedDepth = 64;

class DotWriter {
public:
  DotWriter(const Module &m, const DotOptions &opts) : m_(m), opts_(opts) {}

  std::string run() {
    out_ += "digraph graphvet {\n";
    out_ += "  graph [compound=true, fontname=\"Helvetica\", fontsize=11, labelloc=t";
    if (!opts_.title.empty())
      out_ += fmt::format(", label=<{}>", html(opts_.title));
    out_ += "];\n";
    out_ += "  node [fontname=\"Helvetica\", fontsize=10, shape=box, style=rounded, "
            "margin=\"0.06,0.03\"];\n";
    out_ += "  edge [fontname=\"Helvetica\", fontsize=9, labelfontsize=8, "
            "labelfontcolor=\"#707070\", labeldistance=1.5];\n";
    emitted_.assign(m_.numGraphs(), false);
    if (m_.numGraphs() > 0 && m_.root().alive)
      emitGraph(0, "", 1, 0);
    // Graphs not reachable from the root (only in malformed modules) and
    // clusters nested beyond kMaxNestedDepth are drawn at the top level.
    for (size_t i = 0; i < deferred_.size(); ++i)
      emitGraph(deferred_[i].first, deferred_[i].second, 1, 0);
    for (GraphId g = 0; g < m_.numGraphs(); ++g)
      if (m_.graph(g).alive && !emitted_[g])
        emitGraph(g, "", 1, 0);
    emitEdges();
    out_ += "}\n";
    return std::move(out_);
  }

private:
  void line(int indent, const std::string &text) {
    out_.append(static_cast<size_t>(indent) * 2, ' ');
    out_ += text;
    out_ += '\n';
  }

  void emitGraph(GraphId gid, const std::string &role, int indent, size_t depth) {
    if (emitted_[gid])
      return;
    emitted_[gid] = true;
    const Graph &g = m_.graph(gid);
    line(indent, fmt::format("subgraph cluster_g{} {{", gid));
    std::string label = fmt::format("{} <b>{}</b>", gid == 0 ? "graph" : "subgraph", html(g.name));
    if (!role.empty())
      label += fmt::format(" ({})", html(role));
    line(indent + 1, fmt::format("label=<{}>;", label));
    line(indent + 1, gid == 0 ? "color=\"#606060\";" : "color=\"#4a7bd0\"; style=rounded;");
    for (NodeId id : g.liveNodes()) {
      const Node &n = g.node(id);
      if (n.subgraphs.empty()) {
        emitNode(gid, n, indent + 1);
        continue;
      }
      // The holder and its subgraphs share a wrapper cluster.
      line(indent + 1, fmt::format("subgraph cluster_g{}n{}_holder {{", gid, id));
      line(indent + 2, holderStyle(n));
      emitNode(gid, n, indent + 2);
      for (size_t k = 0; k < n.subgraphs.size(); ++k) {
        GraphId sub = n.subgraphs[k];
        if (sub >= m_.numGraphs() || !m_.graph(sub).alive || emitted_[sub])
          continue;
        std::string subRole = subgraphRole(n, k);
        if (depth + 1 >= kMaxNestedDepth)
          deferred_.emplace_back(sub, subRole);
        else
          emitGraph(sub, subRole, indent + 2, depth + 1);
      }
      line(indent + 1, "}");
    }
    line(indent, "}");
  }

  /// The wrapper cluster's label and style. A call outlined as one kernel
  /// (partition-graph's `_target`, fuse-ops' `_fused`) is a filled box named
  /// after its kernel, so the kernels of a graph show at a glance.
  std::string holderStyle(const Node &n) const {
    if (opKind(n) == OpKind::Call && !n.subgraphs.empty() && n.subgraphs[0] < m_.numGraphs()) {
      const std::string &body = m_.graph(n.subgraphs[0]).name;
      if (const std::string *t = n.stringAttr("_target"))
        return fmt::format("label=<kernel <b>{}</b> on target <b>{}</b>>; style=\"filled,bold\"; "
                           "color=\"#c47a00\"; fillcolor=\"#fff4e0\";",
                           html(body), html(*t));
      if (const std::string *f = n.stringAttr("_fused"))
        return fmt::format("label=<fused kernel <b>{}</b>>; style=\"filled,bold\"; "
                           "color=\"#2e8b57\"; fillcolor=\"#eaf7ef\";",
                           html(f->empty() ? body : *f));
    }
    return "label=\"\"; style=dashed; color=\"#9aa5b1\";";
  }

  static std::string subgraphRole(const Node &n, size_t k) {
    std::string role;
    switch (opKind(n)) {
    case OpKind::If:
      role = k == 0 ? "then" : k == 1 ? "else" : fmt::format("#{}", k);
      break;
    case OpKind::While:
      role = k == 0 ? "cond" : k == 1 ? "body" : fmt::format("#{}", k);
      break;
    case OpKind::Case:
      role = fmt::format("branch {}", k);
      break;
    default:
      role = "body";
    }
    return fmt::format("{} of {}", role, n.name);
  }

  std::string outputLabel(GraphId g, const Node &n, uint32_t k) const {
    if (!opts_.outputLabel)
      return "";
    return opts_.outputLabel(g, OutPort{n.id, k});
  }

  /// True when output rows are drawn (edges then leave from the rows).
  bool hasOutputRows(GraphId g, const Node &n) const {
    if (n.numOutputs > 1)
      return true;
    return n.numOutputs == 1 && !outputLabel(g, n, 0).empty();
  }

  void emitNode(GraphId gid, const Node &n, int indent) {
    std::string label = "<table border=\"0\" cellborder=\"0\" cellspacing=\"0\" cellpadding=\"1\">";
    label += fmt::format("<tr><td><b>{}</b></td></tr>", html(truncated(n.name, 80)));
    label += fmt::format("<tr><td><font point-size=\"9\">{}</font></td></tr>",
                         html(truncated(n.type, 80)));
    std::string attrs;
    size_t shown = 0;
    for (const auto &[key, value] : n.attrs) {
      if (shown == 6) {
        attrs += "<br/>...";
        break;
      }
      attrs += fmt::format("{}{}", shown ? "<br/>" : "",
                           html(truncated(fmt::format("{} = {}", key, valueText(value)), 60)));
      ++shown;
    }
    if (!attrs.empty())
      label += fmt::format("<tr><td><font point-size=\"8\" color=\"#505050\">{}</font></td></tr>",
                           attrs);
    if (hasOutputRows(gid, n)) {
      for (uint32_t k = 0; k < n.numOutputs && k < 64; ++k) {
        std::string buf = outputLabel(gid, n, k);
        std::string text =
            buf.empty() ? fmt::format("out{}", k) : fmt::format("out{}: {}", k, truncated(buf, 60));
        label += fmt::format("<tr><td port=\"o{}\" border=\"1\" sides=\"t\" color=\"#b0b0b0\">"
                             "<font point-size=\"9\">{}</font></td></tr>",
                             k, html(text));
      }
    }
    label += "</table>";

    std::vector<std::string> style{"rounded"};
    std::string extra;
    OpKind kind = opKind(n);
    if (isTensorMove(n)) {
      style.push_back("filled");
      extra += ", fillcolor=\"#ffb347\", penwidth=2";
    } else if (kind == OpKind::DataSource || kind == OpKind::Variable) {
      style.push_back("filled");
      extra += ", fillcolor=\"#e3ecfa\"";
    } else if (kind == OpKind::Weight) {
      style.push_back("filled");
      extra += ", fillcolor=\"#ececec\"";
    } else if (kind == OpKind::NetOutput) {
      style.push_back("filled");
      extra += ", fillcolor=\"#e6f4ea\"";
    }
    if (opts_.highlighted.count({gid, n.id})) {
      style.push_back("bold");
      extra += ", color=red, penwidth=3";
    }
    std::string styleText;
    for (size_t i = 0; i < style.size(); ++i)
      styleText += fmt::format("{}{}", i ? "," : "", style[i]);
    line(indent, fmt::format("{} [label=<{}>, style=\"{}\"{}];", nodeId(gid, n.id), label,
                             styleText, extra));
  }

  void emitEdges() {
    for (GraphId gid = 0; gid < m_.numGraphs(); ++gid) {
      const Graph &g = m_.graph(gid);
      if (!g.alive)
        continue;
      for (NodeId id : g.liveNodes()) {
        const Node &n = g.node(id);
        for (uint32_t i = 0; i < n.inputs.size(); ++i) {
          const auto &in = n.inputs[i];
          if (!in || in->node >= g.capacity() || !g.node(in->node).alive)
            continue;
          const Node &p = g.node(in->node);
          std::string tail = nodeId(gid, p.id);
          std::string attrs;
          if (hasOutputRows(gid, p) && in->index < 64)
            tail += fmt::format(":o{}:s", in->index);
          else if (in->index != 0)
            attrs = fmt::format("taillabel=\"{}\"", in->index);
          if (n.inputs.size() > 1)
            attrs += fmt::format("{}headlabel=\"{}\"", attrs.empty() ? "" : ", ", i);
          if (auto mark = opts_.markedInputs.find({gid, id, i}); mark != opts_.markedInputs.end())
            attrs += fmt::format("{}color=red, fontcolor=red, penwidth=3, label=<{}>",
                                 attrs.empty() ? "" : ", ", html(mark->second));
          line(1, fmt::format("{} -> {}{};", tail, nodeId(gid, id),
                              attrs.empty() ? std::string() : fmt::format(" [{}]", attrs)));
        }
        for (NodeId to : n.ctrlOut)
          if (to < g.capacity() && g.node(to).alive)
            line(1, fmt::format("{} -> {} [style=dashed, color=\"#707070\", arrowhead=empty];",
                                nodeId(gid, id), nodeId(gid, to)));
      }
    }
  }

  const Module &m_;
  const DotOptions &opts_;
  std::string out_;
  std::vector<bool> emitted_;
  std::vector<std::pair<GraphId, std::string>> deferred_;
};

} // namespace

std::string toDot(const Module &m, const DotOptions &opts) {
  return DotWriter(m, opts).run();
}

} // namespace graphvet
