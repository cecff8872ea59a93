// nn::JoinTable: Torch7's JoinTable(dimension): the tensors of a table joined along dimension
// `dim` (from 0) into one tensor; gradInput item i is gradOutput's part of input i, copied.
#pragma once

#include "nn/core/Options.h"
#include "nn/core/TableModule.h"

namespace nn {

struct JoinTableOptions {
  int dim = 0;

  template <typename F>
  void visit(F&& field) {
    field("dim", dim);
  }
};

class JoinTable : public WithOptions<JoinTableOptions, TableModule<>> {
 public:
  explicit JoinTable(int dim) : JoinTable(Options{dim}) {}
  explicit JoinTable(const Options& options);

  const Activity& updateOutputActivity(const Activity& input) override;
  const Activity& updateGradInputActivity(const Activity& input, const Activity& gradOutput) override;
  std::string typeName() const override { return "nn.JoinTable"; }

 private:
  // The input's tensors, checked to be a table of tensors on one device.
  const std::vector<const Tensor*>& checkInput(const Activity& input);

  std::vector<const Tensor*> parts_;
  std::vector<int64_t> sizes_;
};

}  // namespace nn
