// PyTorch 1.13.0's broadcast products and sums, sums and means along a dimension, of the inputs
// described in tests/reference/make_broadcast_reference.py, which wrote this file. Do not edit.
#pragma once

#include <vector>

namespace nn::test {

inline const std::vector<float> kTorchCMulPlanes{
    0.75f, 0.28125f, -0.1875f, -0.65625f, -0.f, 0.f,
    0.f, -0.f, -0.1875f, 0.28125f, 0.75f, -0.375f,
    -0.09375f, -0.5625f, 0.5625f, 0.09375f, 0.f, -0.f,
    -0.f, 0.f, 0.65625f, -0.46875f, 0.f, 0.46875f,
};
inline const std::vector<float> kTorchCMulPlanesGradInput{
    1.125f, -0.1875f, 0.9375f, -0.375f, -0.f, 0.f,
    -0.f, 0.f, -0.375f, 0.9375f, -0.1875f, 1.125f,
    -0.f, 1.125f, -0.1875f, 0.9375f, 0.f, -0.f,
    0.f, -0.f, 0.75f, -0.375f, 0.9375f, -0.1875f,
};
inline const std::vector<float> kTorchCMulPlanesGradParameter{
    0.375f, 0.0625f, 0.625f,
};

inline const std::vector<float> kTorchCMulSample{
    0.75f, -0.f, 0.1875f, -0.21875f, -0.3125f, -0.f,
    0.15625f, 0.65625f, -0.f, 0.28125f, -0.25f, -0.25f,
    -0.09375f, 0.f, -0.5625f, 0.03125f, 0.25f, 0.5f,
    -0.09375f, -0.1875f, 0.f, -0.46875f, -0.f, 0.3125f,
};
inline const std::vector<float> kTorchCMulSampleGradInput{
    1.125f, 0.f, -0.9375f, -0.125f, -0.5f, -0.375f,
    -0.1875f, -0.75f, -0.f, 0.9375f, 0.0625f, 0.75f,
    -0.f, -0.f, 0.1875f, 0.3125f, 0.25f, 0.5f,
    0.1875f, 0.5625f, 0.f, -0.375f, -0.3125f, -0.125f,
};
inline const std::vector<float> kTorchCMulSampleGradParameter{
    1.5f, -1.21875f, -0.5f, 0.59375f, 0.875f, 1.f,
    -0.75f, -1.0625f, 1.f, 0.78125f, -0.25f, -0.90625f,
};

inline const std::vector<float> kTorchCMulColumns{
    0.75f, 0.28125f, -0.1875f, -0.65625f, -0.f, 0.f,
    0.f, -0.f, -0.1875f, 0.28125f, 0.75f, -0.375f,
    -0.09375f, -0.5625f, 0.5625f, 0.09375f, 0.f, -0.f,
    -0.f, 0.f, 0.65625f, -0.46875f, 0.f, 0.46875f,
};
inline const std::vector<float> kTorchCMulColumnsGradInput{
    1.125f, -0.1875f, 0.9375f, -0.375f, -0.f, 0.f,
    -0.f, 0.f, -0.375f, 0.9375f, -0.1875f, 1.125f,
    -0.f, 1.125f, -0.1875f, 0.9375f, 0.f, -0.f,
    0.f, -0.f, 0.75f, -0.375f, 0.9375f, -0.1875f,
};
inline const std::vector<float> kTorchCMulColumnsGradParameter{
    0.375f, 0.0625f, 0.625f,
};

inline const std::vector<float> kTorchMul{
    0.75f, 0.28125f, -0.1875f, -0.65625f, 0.46875f, -0.f,
    -0.46875f, 0.65625f, 0.1875f, -0.28125f, -0.75f, 0.375f,
    -0.09375f, -0.5625f, 0.5625f, 0.09375f, -0.375f, 0.75f,
    0.28125f, -0.1875f, -0.65625f, 0.46875f, -0.f, -0.46875f,
};
inline const std::vector<float> kTorchMulGradInput{
    1.125f, -0.1875f, 0.9375f, -0.375f, 0.75f, -0.5625f,
    0.5625f, -0.75f, 0.375f, -0.9375f, 0.1875f, -1.125f,
    -0.f, 1.125f, -0.1875f, 0.9375f, -0.375f, 0.75f,
    -0.5625f, 0.5625f, -0.75f, 0.375f, -0.9375f, 0.1875f,
};
inline const std::vector<float> kTorchMulGradParameter{
    1.0625f,
};

inline const std::vector<float> kTorchAddFlat{
    -1.75f, -0.375f, 1.f, 0.625f, -0.125f, -0.5f,
    0.875f, -1.625f, -0.25f, 1.125f, 0.75f, 0.f,
    -0.625f, 0.75f, 0.f, -0.375f, 1.f, -1.5f,
    -0.125f, -0.5f, 0.875f, 0.125f, -0.25f, 1.125f,
};
inline const std::vector<float> kTorchAddFlatGradInput{
    -1.5f, 0.25f, -1.25f, 0.5f, -1.f, 0.75f,
    -0.75f, 1.f, -0.5f, 1.25f, -0.25f, 1.5f,
    0.f, -1.5f, 0.25f, -1.25f, 0.5f, -1.f,
    0.75f, -0.75f, 1.f, -0.5f, 1.25f, -0.25f,
};
inline const std::vector<float> kTorchAddFlatGradParameter{
    -1.5f, -1.25f, -1.f, -0.75f, -0.5f, -0.25f,
    0.f, 0.25f, 0.5f, 0.75f, 1.f, 1.25f,
};

inline const std::vector<float> kTorchAddPlanes{
    -1.75f, -1.125f, -0.5f, 0.125f, -0.625f, 0.f,
    0.625f, -0.875f, 0.5f, 1.125f, 1.75f, 0.25f,
    -0.625f, 0.f, -1.5f, -0.875f, 0.5f, -1.f,
    -0.375f, 0.25f, 1.625f, 0.125f, 0.75f, 1.375f,
};
inline const std::vector<float> kTorchAddPlanesGradInput{
    -1.5f, 0.25f, -1.25f, 0.5f, -1.f, 0.75f,
    -0.75f, 1.f, -0.5f, 1.25f, -0.25f, 1.5f,
    0.f, -1.5f, 0.25f, -1.25f, 0.5f, -1.f,
    0.75f, -0.75f, 1.f, -0.5f, 1.25f, -0.25f,
};
inline const std::vector<float> kTorchAddPlanesGradParameter{
    -4.5f, -0.5f, 3.5f,
};

inline const std::vector<float> kTorchPReLUPlanes{
    0.75f, 0.28125f, 0.25f, 0.875f, -0.f, 0.f,
    0.625f, -0.f, -0.1875f, 0.375f, 1.f, -0.375f,
    0.125f, 0.75f, 0.5625f, 0.09375f, 0.5f, -0.f,
    -0.f, 0.25f, 0.875f, -0.46875f, 0.f, 0.625f,
};
inline const std::vector<float> kTorchPReLUPlanesGradInput{
    1.125f, -0.1875f, -1.25f, 0.5f, -0.f, 0.f,
    -0.75f, 0.f, -0.375f, 1.25f, -0.25f, 1.125f,
    0.f, -1.5f, -0.1875f, 0.9375f, 0.5f, -0.f,
    0.f, -0.75f, 1.f, -0.375f, 0.9375f, -0.25f,
};
inline const std::vector<float> kTorchPReLUPlanesGradParameter{
    1.375f, 0.46875f, -0.3125f,
};

inline const std::vector<float> kTorchPReLUShared{
    0.75f, 0.28125f, 0.25f, 0.875f, 0.46875f, -0.f,
    0.625f, 0.65625f, 0.1875f, 0.375f, 1.f, 0.375f,
    0.125f, 0.75f, 0.5625f, 0.09375f, 0.5f, 0.75f,
    0.28125f, 0.25f, 0.875f, 0.46875f, -0.f, 0.625f,
};
inline const std::vector<float> kTorchPReLUSharedGradInput{
    1.125f, -0.1875f, -1.25f, 0.5f, 0.75f, -0.5625f,
    -0.75f, -0.75f, 0.375f, 1.25f, -0.25f, -1.125f,
    0.f, -1.5f, -0.1875f, 0.9375f, 0.5f, 0.75f,
    -0.5625f, -0.75f, 1.f, 0.375f, -0.9375f, -0.25f,
};
inline const std::vector<float> kTorchPReLUSharedGradParameter{
    1.53125f,
};

inline const std::vector<float> kTorchSum1{
    -1.875f, 0.f, 1.875f, -0.5f, 1.5f, -0.875f,
    -1.125f, 0.75f,
};
inline const std::vector<float> kTorchSum1GradInput{
    -1.5f, 0.25f, -1.25f, 0.5f, -1.5f, 0.25f,
    -1.25f, 0.5f, -1.5f, 0.25f, -1.25f, 0.5f,
    -1.f, 0.75f, -0.75f, 1.f, -1.f, 0.75f,
    -0.75f, 1.f, -1.f, 0.75f, -0.75f, 1.f,
};

inline const std::vector<float> kTorchMeanLast{
    -0.0625f, -0.21875f, 0.15625f, 0.f, -0.15625f, 0.21875f,
};
inline const std::vector<float> kTorchMeanLastGradInput{
    -0.375f, -0.375f, -0.375f, -0.375f, 0.0625f, 0.0625f,
    0.0625f, 0.0625f, -0.3125f, -0.3125f, -0.3125f, -0.3125f,
    0.125f, 0.125f, 0.125f, 0.125f, -0.25f, -0.25f,
    -0.25f, -0.25f, 0.1875f, 0.1875f, 0.1875f, 0.1875f,
};

inline const std::vector<float> kTorchSumKept{
    -0.875f, 0.375f, -0.5f, 0.75f, -0.125f, -1.f,
    0.25f, -0.625f, 0.625f, -0.25f, 1.f, 0.125f,
};
inline const std::vector<float> kTorchSumKeptGradInput{
    -1.5f, 0.25f, -1.25f, 0.5f, -1.f, 0.75f,
    -0.75f, 1.f, -0.5f, 1.25f, -0.25f, 1.5f,
    -1.5f, 0.25f, -1.25f, 0.5f, -1.f, 0.75f,
    -0.75f, 1.f, -0.5f, 1.25f, -0.25f, 1.5f,
};

inline const std::vector<float> kTorchMax1{
    -0.25f, 0.375f, 1.f, 0.875f, 0.875f, 0.75f,
    0.f, 0.625f,
};
inline const std::vector<float> kTorchMax1GradInput{
    0.f, 0.f, 0.f, 0.5f, 0.f, 0.f,
    0.f, 0.f, -1.5f, 0.25f, -1.25f, 0.f,
    0.f, 0.75f, 0.f, 0.f, 0.f, 0.f,
    0.f, 0.f, -1.f, 0.f, -0.75f, 1.f,
};

inline const std::vector<float> kTorchMaxLast{
    0.875f, 0.625f, 1.f, 0.5f, 0.875f, 1.f,
    0.75f, 0.875f, 1.f, 0.75f, 0.875f, 0.625f,
};
inline const std::vector<float> kTorchMaxLastGradInput{
    0.f, 0.f, 0.f, -1.5f, 0.f, 0.f,
    0.25f, 0.f, 0.f, 0.f, -1.25f, 0.f,
    0.f, 0.f, 0.f, 0.f, 0.5f, 0.f,
    0.f, 0.f, -1.f, 0.f, 0.f, 0.f,
    0.f, 0.f, 0.f, 0.75f, 0.f, 0.f,
    -0.75f, 0.f, 0.f, 0.f, 0.f, 0.f,
    0.f, 1.f, 0.f, 0.f, 0.f, 0.f,
    0.f, 0.f, -0.5f, 0.f, 0.f, 1.25f,
    0.f, 0.f, 0.f, 0.f, 0.f, 0.f,
    -0.25f, 0.f, 0.f, 1.5f, 0.f, 0.f,
};

}  // namespace nn::test
