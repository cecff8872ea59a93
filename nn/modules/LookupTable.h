// nn::LookupTable: an embedding (Torch7's LookupTable(nIndex, nOutput), PyTorch's Embedding),
// with indices from 0: input [n] or [batch, n] of indices (floats holding integers in
// [0, nIndex)), output [n, nOutput] or [batch, n, nOutput], each row the weight's row of its
// index. The weight's gradient adds each gradOutput row into its index's row, in input order;
// the input gets no gradient (zeros, as Torch7's). Weights start normal(0, 1). Torch7's
// paddingValue and maxNorm are not offered. The indices are checked on the host: on a CUDA
// device that copies them there.
#pragma once

#include <vector>

#include "nn/core/Options.h"

namespace nn {

/// The arguments of LookupTable.
struct LookupTableOptions {
  /// The number of rows: indices run over [0, nIndex); positive.
  int64_t nIndex = 0;
  /// The size of each row, the output's last dimension; positive.
  int64_t nOutput = 0;

  template <typename F>
  void visit(F&& field) {
    field("nIndex", nIndex);
    field("nOutput", nOutput);
  }
};

/// Torch7's nn.LookupTable (PyTorch's Embedding): a learned row of nOutput values per index.
class LookupTable : public WithOptions<LookupTableOptions> {
 public:
  /// nIndex rows of nOutput values, initialised by reset().
  LookupTable(int64_t nIndex, int64_t nOutput) : LookupTable(Options{nIndex, nOutput}) {}
  /// The module of `options`; an nn::Error unless both sizes are positive.
  explicit LookupTable(const Options& options);

  /// Normal(0, 1) from the default generator (Torch7's reset).
  void reset();

  const Tensor& updateOutput(const Tensor& input) override;
  const Tensor& updateGradInput(const Tensor& input, const Tensor& gradOutput) override;
  void accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) override;
  void clearState() override;

  std::string typeName() const override { return "nn.LookupTable"; }

  /// The rows, [nIndex, nOutput]: row i is index i's.
  Tensor weight;
  /// Gradient of the loss with respect to weight, [nIndex, nOutput]: each gradOutput row added (times scale)
  /// into its index's row; zeroed by zeroGradParameters.
  Tensor gradWeight;

 private:
  // Checks `input` (sizes, device, every index), naming the module; sets outputSizes_.
  void checkInput(const Tensor& input);

  std::vector<int64_t> outputSizes_;
  Tensor contiguousInput_, contiguousGradOutput_;
};

}  // namespace nn
