// PyTorch 2.15.0+cu132's threshold, hardtanh, relu6, softplus, silu and gelu of the inputs below, and
// their input gradients: written by tests/reference/make_activation_reference.py, which says how. Do not edit.
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

inline const std::vector<float> kTorchSiLU{-0.142277613f, -0.278375179f, -0.268941432f, -0.188770339f, -0.0302737523f, 0.f, 0.311229676f, 0.407096803f, 0.731058598f, 2.31035447f, 5.98516464f, 7.4958539f, 25.f};
inline const std::vector<float> kTorchSiLUGradInput{-0.0440520532f, -0.0063191494f, 0.144658968f, 0.390058219f, -0.351577729f, 1.5f, -1.47992241f, 0.991608918f, -0.463835269f, 0.274850279f, 4.04930496f, -3.01077342f, 1.f};

inline const std::vector<float> kTorchGELU{-0.00405022502f, -0.132062212f, -0.158655256f, -0.154268771f, -0.0296926461f, 0.f, 0.345731229f, 0.458759069f, 0.841344714f, 2.48447585f, 6.f, 7.5f, 25.f};
inline const std::vector<float> kTorchGELUGradInput{-0.00597280264f, 0.122661471f, -0.166630864f, 0.198757365f, -0.337647766f, 1.5f, -1.73499012f, 1.17389393f, -0.541657686f, 0.259402752f, 4.f, -3.f, 1.f};

inline const std::vector<float> kTorchGELUTanh{-0.00363743305f, -0.132285804f, -0.158807993f, -0.154285997f, -0.0296926498f, 0.f, 0.345714003f, 0.458721161f, 0.841192007f, 2.48491573f, 6.f, 7.5f, 25.f};
inline const std::vector<float> kTorchGELUTanhGradInput{-0.00579214841f, 0.122492626f, -0.165928185f, 0.198945165f, -0.337648034f, 1.5f, -1.73473978f, 1.17363501f, -0.541482031f, 0.259487927f, 4.f, -3.f, 1.f};

}  // namespace nn::test
