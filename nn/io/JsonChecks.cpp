// nn/io's JSON: the cost of a text checked before it is parsed, a value cut short for an error
// message (nn/io/JsonChecks.h).
#include "nn/io/JsonChecks.h"

#include "nn/tensor/Error.h"

namespace nn::io {

void checkJsonCost(const std::string& text, int maxDepth, const std::string& what) {
  int depth = 0;
  int64_t values = 1;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    switch (c) {
      case '"':
        inString = true;
        break;
      case '[':
      case '{':
        NN_CHECK(++depth <= maxDepth, what << " is nested more than " << maxDepth << " levels deep");
        break;
      case ']':
      case '}':
        --depth;
        break;
      case ',':
        NN_CHECK(++values <= kMaxJsonValues, what << " holds more than " << kMaxJsonValues << " values");
        break;
      default:
        break;
    }
  }
}

namespace {

// Appends `value` as dump() writes it, stopping soon after `out` holds `limit` characters
// and writing containers nested deeper than kBriefDepth as [...] or {...}: dump() recurses
// once per level, and a corrupted header can nest millions of levels deep.
constexpr int kBriefDepth = 8;
void appendBrief(const Json& value, int depth, size_t limit, std::string& out) {
  if (!value.is_structured()) {
    out += value.dump();
    return;
  }
  const bool array = value.is_array();
  if (depth == kBriefDepth && !value.empty()) {
    out += array ? "[...]" : "{...}";
    return;
  }
  out += array ? '[' : '{';
  for (auto it = value.begin(); it != value.end() && out.size() <= limit; ++it) {
    if (it != value.begin()) out += ',';
    if (!array) out += Json(it.key()).dump() + ':';
    appendBrief(*it, depth + 1, limit, out);
  }
  out += array ? ']' : '}';
}

}  // namespace

std::string brief(const Json& value) {
  constexpr size_t kLimit = 200;
  std::string text;
  appendBrief(value, 0, kLimit, text);
  return text.size() <= kLimit ? text : text.substr(0, kLimit) + "...";
}

}  // namespace nn::io
