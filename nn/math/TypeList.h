// A list of types (the activations, the point-wise losses) and a type's place in it. The
// backends build their kernel tables from such a list, in its order, and a module finds its
// entry by its type's place: no table is written out by hand, so no two entries can be swapped.
#pragma once

#include <type_traits>

namespace nn::math {

/// The types T..., in order, as a type: a value of it is passed only to deduce T... from.
template <typename... T>
struct TypeList {
  /// How many types the list holds.
  static constexpr int kCount = sizeof...(T);
};

/// The place of F in the list, from 0; -1 where it is not listed.
template <typename F, typename... T>
constexpr int indexIn(TypeList<T...>) {
  int at = -1, i = 0;
  ((std::is_same_v<F, T> && at < 0 ? at = i : 0, ++i), ...);
  return at;
}

}  // namespace nn::math
