// The canonical `.graph` printer and the structural comparison that defines
// what "the same module" means for round trips. Canonical choices: options
// sorted; root, then subgraphs in order of first reference (graphs unreachable
// from the root, which only malformed modules have, follow in id order so
// nothing is lost); nodes in Graph::topoOrder (id order if cyclic);
// attributes sorted by key with `outputs` (only when it differs from the op's
// default) and `subgraphs` in their sorted positions; control edges last,
// sorted by printed names; no column alignment.
#include "ir/printer.h"

#include "ir/op_library.h"
#include "ir/tensor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

namespace graphvet {

bool isIdentifier(std::string_view s) {
  if (s.empty())
    return false;
  auto start = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!start(s[0]))
    return false;
  return std::all_of(s.begin() + 1, s.end(),
                     [&](char c) { return start(c) || (c >= '0' && c <= '9'); });
}

namespace {

bool isReservedName(const std::string &s) {
  // `_` is a valid identifier but means "unconnected" in an input list, so a
  // node called `_` is always quoted.
  return s == "graph" || s == "options" || s == "ctrl" || s == "true" || s == "false" || s == "_";
}

std::string quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
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
    case '\t':
      out += "\\t";
      break;
    default:
      out += c;
    }
  }
  out += '"';
  return out;
}

/// A 64-bit digest of `bytes`, eight bytes at a time (a multiply-xorshift
/// mix per word, then the length): fast on megabytes of weights; equal
/// bytes give equal digests, different ones almost never do.
uint64_t bytesDigest(std::span<const uint8_t> bytes) {
  auto mix = [](uint64_t h, uint64_t w) {
    h ^= w * 0x9e3779b97f4a7c15ull;
    h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 32);
  };
  uint64_t h = 0x6a09e667f3bcc909ull;
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    h = mix(h, w);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, bytes.data() + i, bytes.size() - i);
  return mix(mix(h, tail), bytes.size());
}

/// Where tensors above the inline limit go while printing one module.
struct SidecarWriter {
  const PrintOptions &opts;
  std::string fileRef(const Tensor &t) {
    std::vector<uint8_t> &sc = *opts.sidecar;
    sc.resize((sc.size() + 63) / 64 * 64, 0); // 64-byte aligned entries
    size_t offset = sc.size();
    sc.insert(sc.end(), t.bytes().begin(), t.bytes().end());
    return fmt::format("{} file({}, {})", t.type().str(), quote(opts.sidecarName), offset);
  }
};

void printValue(const AttrValue &v, std::string &out, SidecarWriter &sw) {
  if (v.isInt())
    out += std::to_string(v.asInt());
  else if (v.isBool())
    out += v.asBool() ? "true" : "false";
  else if (v.isString())
    out += quote(v.asString());
  else if (v.isIdent())
    out += v.asIdent();
  else if (v.isFloat())
    out += formatFloatAttr(v.asFloat());
  else if (v.isTensor()) {
    const Tensor &t = v.asTensor();
    // A sidecar holds bytes only: a tensor with indeterminate elements stays
    // inline, where `?` keeps them.
    const bool large = t.bytes().size() > sw.opts.inlineLimitBytes && !t.anyUndef();
    if (large && sw.opts.sidecar)
      out += sw.fileRef(t);
    else if (large && sw.opts.digestLargeTensors)
      out += fmt::format("{} digest({:016x})", t.type().str(), bytesDigest(t.bytes()));
    else
      out += formatTensorLiteral(t);
  } else {
    out += '[';
    bool first = true;
    for (const AttrValue &e : v.asList()) {
      if (!first)
        out += ", ";
      first = false;
      printValue(e, out, sw);
    }
    out += ']';
  }
}

} // namespace

std::string formatAttrValue(const AttrValue &v) {
  PrintOptions opts;
  SidecarWriter sw{opts};
  std::string out;
  printValue(v, out, sw);
  return out;
}

namespace {

std::string graphName(const Module &m, GraphId g) {
  if (g < m.numGraphs())
    return m.graph(g).name;
  return fmt::format("<graph {}>", g);
}

/// The attributes of `n` as printed: key -> rendered value, sorted.
std::map<std::string, std::string> printedAttrs(const Module &m, const Node &n, SidecarWriter &sw) {
  std::map<std::string, std::string> attrs;
  for (const auto &[key, value] : n.attrs) {
    if (key == "outputs" || key == "subgraphs")
      continue; // held by numOutputs and subgraphs
    std::string text;
    printValue(value, text, sw);
    attrs.emplace(key, std::move(text));
  }
  if (n.numOutputs != defaultOutputCount(n.type, n.inputs.size()))
    attrs["outputs"] = std::to_string(n.numOutputs);
  if (!n.subgraphs.empty()) {
    std::string list = "[";
    for (size_t i = 0; i < n.subgraphs.size(); ++i) {
      if (i)
        list += ", ";
      list += formatName(graphName(m, n.subgraphs[i]));
    }
    attrs["subgraphs"] = list + "]";
  }
  return attrs;
}

std::string nodeName(const Graph &g, NodeId id) {
  if (id < g.capacity())
    return g.node(id).name;
  return fmt::format("<node {}>", id);
}

void printGraph(const Module &m, const Graph &g, std::string &out, SidecarWriter &sw) {
  out += fmt::format("graph {} {{\n", formatName(g.name));
  auto topo = g.topoOrder();
  std::vector<NodeId> order = topo ? *topo : g.liveNodes();
  for (NodeId id : order) {
    const Node &n = g.node(id);
    out += fmt::format("  {} = {}(", formatName(n.name), n.type);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      if (i)
        out += ", ";
      const auto &in = n.inputs[i];
      if (!in) {
        out += '_';
        continue;
      }
      out += formatName(nodeName(g, in->node));
      if (in->index != 0)
        out += fmt::format(":{}", in->index);
    }
    out += ')';
    auto attrs = printedAttrs(m, n, sw);
    if (!attrs.empty()) {
      out += " {";
      bool first = true;
      for (const auto &[key, value] : attrs) {
        if (!first)
          out += ", ";
        first = false;
        out += key + " = " + value;
      }
      out += '}';
    }
    out += '\n';
  }
  std::vector<std::pair<std::string, std::string>> ctrls;
  for (NodeId id : g.liveNodes())
    for (NodeId to : g.node(id).ctrlOut)
      ctrls.emplace_back(formatName(g.node(id).name), formatName(nodeName(g, to)));
  std::sort(ctrls.begin(), ctrls.end());
  for (const auto &[from, to] : ctrls)
    out += fmt::format("  ctrl {} -> {}\n", from, to);
  out += "}\n";
}

/// Graph ids in printing order: canonical order, then any other live graph.
std::vector<GraphId> printOrder(const Module &m) {
  std::vector<GraphId> order = m.canonicalGraphOrder();
  std::vector<bool> seen(m.numGraphs(), false);
  for (GraphId g : order)
    seen[g] = true;
  for (GraphId g = 0; g < m.numGraphs(); ++g)
    if (!seen[g] && m.graph(g).alive)
      order.push_back(g);
  return order;
}

// --- structural comparison -------------------------------------------------

struct NodeShape {
  std::string type;
  uint32_t numOutputs;
  std::vector<std::string> inputs; ///< "_" or "name:k" (quoted names)
  AttrMap attrs;
  std::vector<std::string> subgraphs;
  std::vector<std::string> ctrlOut; ///< sorted target names
};

NodeShape shapeOf(const Module &m, const Graph &g, const Node &n) {
  NodeShape s;
  s.type = n.type;
  s.numOutputs = n.numOutputs;
  for (const auto &in : n.inputs)
    s.inputs.push_back(in ? fmt::format("{}:{}", formatName(nodeName(g, in->node)), in->index)
                          : std::string("_"));
  s.attrs = n.attrs;
  s.attrs.erase("outputs");
  s.attrs.erase("subgraphs");
  for (GraphId sub : n.subgraphs)
    s.subgraphs.push_back(graphName(m, sub));
  for (NodeId to : n.ctrlOut)
    s.ctrlOut.push_back(nodeName(g, to));
  std::sort(s.ctrlOut.begin(), s.ctrlOut.end());
  return s;
}

std::string joined(const std::vector<std::string> &v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i)
    out += fmt::format("{}{}", i ? ", " : "", v[i]);
  return out + "]";
}

std::optional<std::string> compareGraphs(const Module &ma, const Graph &a, const Module &mb,
                                         const Graph &b) {
  auto prefix = fmt::format("graph '{}': ", a.name);
  if (a.name != b.name)
    return fmt::format("graph '{}' vs graph '{}'", a.name, b.name);
  std::map<std::string, NodeId> na, nb;
  for (NodeId id : a.liveNodes())
    na.emplace(a.node(id).name, id);
  for (NodeId id : b.liveNodes())
    nb.emplace(b.node(id).name, id);
  for (const auto &[name, id] : na)
    if (!nb.count(name))
      return prefix + fmt::format("node '{}' only in the first module", name);
  for (const auto &[name, id] : nb)
    if (!na.count(name))
      return prefix + fmt::format("node '{}' only in the second module", name);
  for (const auto &[name, ida] : na) {
    NodeShape sa = shapeOf(ma, a, a.node(ida));
    NodeShape sb = shapeOf(mb, b, b.node(nb.at(name)));
    auto where = prefix + fmt::format("node '{}': ", name);
    if (sa.type != sb.type)
      return where + fmt::format("type {} vs {}", sa.type, sb.type);
    if (sa.numOutputs != sb.numOutputs)
      return where + fmt::format("{} vs {} outputs", sa.numOutputs, sb.numOutputs);
    if (sa.inputs != sb.inputs)
      return where + fmt::format("inputs {} vs {}", joined(sa.inputs), joined(sb.inputs));
    if (sa.attrs != sb.attrs)
      return where + "attributes differ";
    if (sa.subgraphs != sb.subgraphs)
      return where + fmt::format("subgraphs {} vs {}", joined(sa.subgraphs), joined(sb.subgraphs));
    if (sa.ctrlOut != sb.ctrlOut)
      return where +
             fmt::format("control successors {} vs {}", joined(sa.ctrlOut), joined(sb.ctrlOut));
  }
  return std::nullopt;
}

} // namespace

std::string formatName(const std::string &name) {
  if (isIdentifier(name) && !isReservedName(name))
    return name;
  return quote(name);
}

std::string formatTensorLiteral(const Tensor &t) {
  std::string out = t.type().str();
  int64_t n = t.size();
  uint32_t w = dtypeBytes(t.dtype());
  std::vector<std::string> texts;
  texts.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    auto text = formatElement(t.dtype(), t.at(i));
    if (!text) { // a NaN payload: only the raw bytes keep it
      out += " hex \"";
      for (uint8_t b : t.bytes())
        out += fmt::format("{:02x}", b);
      return out + "\"";
    }
    texts.push_back(std::move(*text));
  }
  bool allSame = n >= 2;
  for (int64_t i = 1; allSame && i < n; ++i)
    allSame = std::equal(t.at(i), t.at(i) + w, t.at(0));
  if (allSame)
    return out + " splat(" + texts[0] + ")";
  out += " {";
  for (int64_t i = 0; i < n; ++i) {
    if (i)
      out += ", ";
    out += texts[static_cast<size_t>(i)];
  }
  return out + "}";
}

std::string printModule(const Module &m, const PrintOptions &opts) {
  SidecarWriter sw{opts};
  std::string out;
  if (!m.options.empty()) {
    out += "options {\n";
    for (const auto &[key, value] : m.options)
      out += fmt::format("  {} = {}\n", key, quote(value));
    out += "}\n";
  }
  if (m.numGraphs() == 0)
    return out;
  for (GraphId g : printOrder(m)) {
    if (!out.empty())
      out += '\n';
    printGraph(m, m.graph(g), out, sw);
  }
  return out;
}

bool writeModuleFile(const Module &m, const std::string &path, std::string &error,
                     uint64_t inlineLimitBytes) {
  std::filesystem::path graphPath(path);
  std::filesystem::path sidecarPath = graphPath;
  sidecarPath.replace_extension(".weights");
  std::vector<uint8_t> sidecar;
  PrintOptions opts;
  opts.sidecar = &sidecar;
  opts.sidecarName = sidecarPath.filename().string();
  opts.inlineLimitBytes = inlineLimitBytes;
  std::string text = printModule(m, opts);
  std::ofstream out(graphPath, std::ios::binary);
  if (!out || !(out << text)) {
    error = fmt::format("cannot write '{}'", path);
    return false;
  }
  if (!sidecar.empty()) {
    std::ofstream w(sidecarPath, std::ios::binary);
    if (!w || !w.write(reinterpret_cast<const char *>(sidecar.data()),
                       static_cast<std::streamsize>(sidecar.size()))) {
      error = fmt::format("cannot write '{}'", sidecarPath.string());
      return false;
    }
  }
  return true;
}

std::optional<std::string> structuralDifference(const Module &a, const Module &b) {
  if (a.options != b.options)
    return std::string("options differ");
  if (a.numGraphs() == 0 || b.numGraphs() == 0) {
    if (a.numGraphs() != b.numGraphs())
      return std::string("one module has no graphs");
    return std::nullopt;
  }
  std::vector<GraphId> oa = printOrder(a), ob = printOrder(b);
  if (oa.size() != ob.size())
    return fmt::format("{} vs {} graphs", oa.size(), ob.size());
  for (size_t i = 0; i < oa.size(); ++i)
    if (auto d = compareGraphs(a, a.graph(oa[i]), b, b.graph(ob[i])))
      return d;
  return std::nullopt;
}

} // namespace graphvet
