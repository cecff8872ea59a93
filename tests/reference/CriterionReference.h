// PyTorch 1.13.0's point-wise losses and multi_margin_loss of the inputs below, and their input
// gradients: written by tests/reference/make_criterion_reference.py, which says how. Do not edit.
#pragma once

#include <vector>

namespace nn::test {

inline const std::vector<float> kLossX{0.5f, -1.25f, 2.f, 0.f, 3.5f, -0.75f, 1.f, 0.25f, -2.f, 1.5f, -0.5f, 4.f};
inline const std::vector<float> kLossT{0.5f, -1.f, 1.f, 2.5f, 1.f, -0.75f, 1.25f, -0.75f, -1.5f, 0.f, 0.5f, 4.5f};
inline const std::vector<float> kLossLogP{-0.5f, -1.25f, -2.f, -3.f, -0.25f, -4.f, -1.f, -0.75f, -1.5f, -2.5f, -0.125f, -6.f};
inline const std::vector<float> kLossP{0.25f, 0.f, 0.5f, 0.25f, 0.125f, 0.375f, 0.f, 0.5f, 1.f, 0.f, 0.f, 0.f};
inline const std::vector<float> kLossProb{0.5f, 0.125f, 0.875f, 0.f, 1.f, 0.25f, 0.75f, 0.0625f, 0.9375f, 0.375f, 0.625f, 1.f};
inline const std::vector<float> kLossLabel{1.f, 0.f, 1.f, 0.f, 1.f, 0.25f, 0.5f, 1.f, 0.f, 0.75f, 1.f, 0.f};
inline const std::vector<float> kLossBceWeights{0.5f, 2.f, 1.f, 1.5f};
inline const std::vector<float> kLossScores{0.5f, -1.f, 2.f, 0.25f, 1.5f, 3.f, 1.f, -0.5f, 2.f, 0.f, -0.25f, 0.75f, 1.25f, -1.5f, 0.5f};
inline const std::vector<float> kLossClasses{2.f, 0.f, 4.f};
inline const std::vector<float> kLossMarginWeights{1.f, 0.5f, 2.f, 1.5f, 0.25f};

inline constexpr float kTorchMseMean = 1.53125f;
inline const std::vector<float> kTorchMseMeanGradInput{0.f, -0.0416666679f, 0.166666672f, -0.416666687f, 0.416666687f, 0.f, -0.0416666679f, 0.166666672f, -0.0833333358f, 0.25f, -0.166666672f, -0.0833333358f};
inline constexpr float kTorchMseSum = 18.375f;
inline const std::vector<float> kTorchMseSumGradInput{0.f, -0.5f, 2.f, -5.f, 5.f, 0.f, -0.5f, 2.f, -1.f, 3.f, -2.f, -1.f};

inline constexpr float kTorchAbsMean = 0.916666687f;
inline const std::vector<float> kTorchAbsMeanGradInput{0.f, -0.0833333358f, 0.0833333358f, -0.0833333358f, 0.0833333358f, 0.f, -0.0833333358f, 0.0833333358f, -0.0833333358f, 0.0833333358f, -0.0833333358f, -0.0833333358f};
inline constexpr float kTorchAbsSum = 11.f;
inline const std::vector<float> kTorchAbsSumGradInput{0.f, -1.f, 1.f, -1.f, 1.f, 0.f, -1.f, 1.f, -1.f, 1.f, -1.f, -1.f};

inline constexpr float kTorchSmoothL1Mean = 0.567708313f;
inline const std::vector<float> kTorchSmoothL1MeanGradInput{0.f, -0.020833334f, 0.0833333358f, -0.0833333358f, 0.0833333358f, 0.f, -0.020833334f, 0.0833333358f, -0.0416666679f, 0.0833333358f, -0.0833333358f, -0.0416666679f};
inline constexpr float kTorchSmoothL1Sum = 6.8125f;
inline const std::vector<float> kTorchSmoothL1SumGradInput{0.f, -0.25f, 1.f, -1.f, 1.f, 0.f, -0.25f, 1.f, -0.5f, 1.f, -1.f, -0.5f};

inline constexpr float kTorchDistKLDivMean = 0.272267878f;
inline const std::vector<float> kTorchDistKLDivMeanGradInput{-0.020833334f, -0.f, -0.0416666679f, -0.020833334f, -0.010416667f, -0.03125f, -0.f, -0.0416666679f, -0.0833333358f, -0.f, -0.f, -0.f};
inline constexpr float kTorchDistKLDivSum = 3.26721454f;
inline const std::vector<float> kTorchDistKLDivSumGradInput{-0.25f, -0.f, -0.5f, -0.25f, -0.125f, -0.375f, -0.f, -0.5f, -1.f, -0.f, -0.f, -0.f};

inline constexpr float kTorchBceMean = 9.10231972f;
inline const std::vector<float> kTorchBceMeanGradInput{-0.166666672f, 0.095238097f, -0.095238097f, 0.f, 0.f, 0.f, 0.111111112f, -1.33333337f, 1.33333337f, -0.13333334f, -0.13333334f, 8.3333333e+10f};
inline constexpr float kTorchBceSum = 109.227837f;
inline const std::vector<float> kTorchBceSumGradInput{-2.f, 1.14285719f, -1.14285719f, 0.f, 0.f, 0.f, 1.33333337f, -16.f, 16.f, -1.60000002f, -1.60000002f, 9.99999996e+11f};

inline constexpr float kTorchBceWeightedMean = 13.3691874f;
inline const std::vector<float> kTorchBceWeightedMeanGradInput{-0.0833333358f, 0.190476194f, -0.095238097f, 0.f, 0.f, 0.f, 0.111111112f, -2.f, 0.666666687f, -0.266666681f, -0.13333334f, 1.24999999e+11f};
inline constexpr float kTorchBceWeightedSum = 160.430252f;
inline const std::vector<float> kTorchBceWeightedSumGradInput{-1.f, 2.28571439f, -1.14285719f, 0.f, 0.f, 0.f, 1.33333337f, -24.f, 8.f, -3.20000005f, -1.60000002f, 1.50000003e+12f};

inline constexpr float kTorchMultiMarginP1Mean = 0.25f;
inline const std::vector<float> kTorchMultiMarginP1MeanGradInput{0.f, 0.f, -0.0666666701f, 0.f, 0.0666666701f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.0666666701f, 0.0666666701f, 0.0666666701f, 0.f, -0.200000018f};
inline constexpr float kTorchMultiMarginP1Sum = 0.75f;
inline const std::vector<float> kTorchMultiMarginP1SumGradInput{0.f, 0.f, -0.200000003f, 0.f, 0.200000003f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.200000003f, 0.200000003f, 0.200000003f, 0.f, -0.600000024f};

inline constexpr float kTorchMultiMarginP2Mean = 0.141666666f;
inline const std::vector<float> kTorchMultiMarginP2MeanGradInput{0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.100000009f, 0.166666672f, 0.f, -0.266666681f};
inline constexpr float kTorchMultiMarginP2Sum = 0.425000012f;
inline const std::vector<float> kTorchMultiMarginP2SumGradInput{0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.300000012f, 0.5f, 0.f, -0.800000012f};

inline constexpr float kTorchMultiMarginWeightedMean = 0.470833331f;
inline const std::vector<float> kTorchMultiMarginWeightedMeanGradInput{0.13333334f, 0.f, -0.400000036f, 0.13333334f, 0.13333334f, -0.0666666701f, 0.f, 0.f, 0.0666666701f, 0.f, 0.0166666675f, 0.0166666675f, 0.0166666675f, 0.f, -0.0500000045f};
inline constexpr float kTorchMultiMarginWeightedSum = 1.41250002f;
inline const std::vector<float> kTorchMultiMarginWeightedSumGradInput{0.400000006f, 0.f, -1.20000005f, 0.400000006f, 0.400000006f, -0.200000003f, 0.f, 0.f, 0.200000003f, 0.f, 0.0500000007f, 0.0500000007f, 0.0500000007f, 0.f, -0.150000006f};

}  // namespace nn::test
