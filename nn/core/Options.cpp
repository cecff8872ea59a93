// nn/core/Options.h: the field codecs of the library's own types.
#include "nn/core/Options.h"

namespace nn {

Config::Value FieldCodec<std::vector<Device>>::write(const std::vector<Device>& devices) {
  std::string text;
  for (const Device& d : devices) text += (text.empty() ? "" : ",") + d.str();
  return text;
}

std::vector<Device> FieldCodec<std::vector<Device>>::read(const Config& config, const std::string& key,
                                                          const std::string& who) {
  std::string text;
  config.read(key, text, who);
  std::vector<Device> devices;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    devices.push_back(Device::parse(text.substr(start, end - start)));
    start = end + 1;
  }
  return devices;
}

}  // namespace nn
