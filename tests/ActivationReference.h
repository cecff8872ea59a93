// PyTorch 1.13.0's threshold, hardtanh, relu6 and softplus of the inputs below, and their input
// gradients: written by tests/make_activation_reference.py, which says how. Do not edit.
#pragma once

#include <vector>

namespace nn::test {

inline const std::vector<float> kActivationX{-3.f, -1.25f, -1.f, -0.5f, -0.0625f, 0.f, 0.5f, 0.625f, 1.f, 2.5f, 6.f, 7.5f, 25.f};
inline const std::vector<float> kActivationGrad{0.5f, -1.f, 2.f, 1.5f, -0.75f, 3.f, -2.f, 1.25f, -0.5f, 0.25f, 4.f, -3.f, 1.f};

inline const std::vector<float> kTorchThreshold{-2.f, -2.f, -2.f, -2.f, -2.f, -2.f, -2.f, 0.625f, 1.f, 2.5f, 6.f, 7.5f, 25.f};
inline const std::vector<float> kTorchThresholdGradInput{0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 1.25f, -0.5f, 0.25f, 4.f, -3.f, 1.f};

inline const std::vector<float> kTorchHardTanh{-1.f, -1.f, -1.f, -0.5f, -0.0625f, 0.f, 0.5f, 0.625f, 1.f, 2.5f, 2.5f, 2.5f, 2.5f};
inline const std::vector<float> kTorchHardTanhGradInput{0.f, 0.f, 0.f, 1.5f, -0.75f, 3.f, -2.f, 1.25f, -0.5f, 0.f, 0.f, 0.f, 0.f};

inline const std::vector<float> kTorchReLU6{0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.5f, 0.625f, 1.f, 2.5f, 6.f, 6.f, 6.f};
inline const std::vector<float> kTorchReLU6GradInput{0.f, 0.f, 0.f, 0.f, 0.f, 0.f, -2.f, 1.25f, -0.5f, 0.25f, 0.f, 0.f, 0.f};

inline const std::vector<float> kTorchSoftPlus{0.0012378426f, 0.0394448675f, 0.0634640008f, 0.156630844f, 0.316299528f, 0.346573591f, 0.656630814f, 0.750964522f, 1.06346405f, 2.50335765f, 6.f, 7.5f, 25.f};
inline const std::vector<float> kTorchSoftPlusGradInput{0.00123631163f, -0.0758581758f, 0.238405839f, 0.403412193f, -0.351592988f, 1.5f, -1.4621172f, 0.971624732f, -0.440398544f, 0.248326793f, 4.f, -3.f, 1.f};

}  // namespace nn::test
