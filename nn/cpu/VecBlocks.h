// transposeBlocks over Vec (Vec.h), which the direct Linear and the direct convolution share: a
// part of a kernel's half, included inside namespace nn::cpu::NN_VEC_LEVEL by the kernel files
// that VecLevels.h includes once per level, and so compiled once per level too. No include guard
// for that reason, and no includes: the kernel file includes <cstdint> before VecLevels.h.

// packed[block][c][R] = src[block * R + r][c] (r < R) for the blocks [begin, end) of src's rows
// ([rows][cols]) in blocks of R, each transposed a square of Vec::kLanes rows and columns at a
// time, zeros for the rows past `rows` (a Linear's batch, a direct convolution's gradOutput
// planes). Whole vectors are loaded and stored where the square is whole (a masked store takes
// several times as long on Zen 3).
template <int64_t R>
void transposeBlocks(const float* src, int64_t rows, int64_t cols, int64_t begin, int64_t end, float* packed) {
  constexpr int64_t lanes = Vec::kLanes;
  for (int64_t block = begin; block < end; ++block)
    for (int64_t g = 0; g < R; g += lanes) {  // groups of up to `lanes` rows of the block
      const int64_t first = block * R + g, groupRows = R - g < lanes ? R - g : lanes;
      const Vec::Mask stored = Vec::firstLanes(groupRows);
      for (int64_t c = 0; c < cols; c += lanes) {
        const int64_t n = cols - c < lanes ? cols - c : lanes;
        const Vec::Mask loaded = Vec::firstLanes(n);
        Vec::Reg r[lanes];
        for (int64_t i = 0; i < lanes; ++i) {
          if (i >= groupRows || first + i >= rows) {
            r[i] = Vec::zero();
          } else {
            const float* row = src + (first + i) * cols + c;
            r[i] = n == lanes ? Vec::load(row) : Vec::load(row, loaded);
          }
        }
        Vec::transpose(r);
        for (int64_t j = 0; j < n; ++j) {
          float* out = packed + (block * cols + c + j) * R + g;
          if (groupRows == lanes)
            Vec::store(out, r[j]);
          else
            Vec::store(out, stored, r[j]);
        }
      }
    }
}
