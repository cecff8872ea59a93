// The JSON of nn/io's files (a safetensors header, the module tree): the parser's type, the check
// of a text's cost before it is parsed, and a value cut short for an error message. The layer's
// own: its sources include it, and it is not installed (the parser's header is not the library's).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace nn::io {

// Keeps the keys in the order written: tensors in stateDict order, config entries as given.
using Json = nlohmann::ordered_json;

// The values a JSON text may hold: a safetensors header has a handful per tensor, far fewer than
// this for any model.
constexpr int64_t kMaxJsonValues = int64_t{1} << 22;

// Throws unless parsing `text` costs little: at most `maxDepth` levels of arrays and objects
// and kMaxJsonValues values. One pass over the bytes, before the parser builds anything: a
// 100 MB header of nested brackets or of zeros would otherwise take gigabytes to refuse.
void checkJsonCost(const std::string& text, int maxDepth, const std::string& what);

// A JSON value for an error message, cut short: a corrupted header can be 100 MB.
std::string brief(const Json& value);

}  // namespace nn::io
