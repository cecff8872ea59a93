// FunctionRef: a non-owning reference to a callable, like std::function without its
// allocation; the thread pools hand each thread its part of a step through one of these.
#pragma once

#include <type_traits>

namespace nn {

template <typename Signature>
class FunctionRef;

/// A non-owning reference to a callable of signature R(Args...) (see the top of this file). It
/// holds the callable's address only: the callable must outlive every call, so pass one as an
/// argument (a lambda written in the call is fine) and do not keep it.
template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  /// Refers to `f`, any callable with this signature (a lambda, a function object); implicit.
  template <typename F>
  FunctionRef(F&& f)  // NOLINT: converts from any callable, as std::function does
      : object_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, Args... args) -> R { return (*static_cast<std::remove_reference_t<F>*>(o))(args...); }) {}
  /// Calls the callable referred to.
  R operator()(Args... args) const { return call_(object_, args...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace nn
