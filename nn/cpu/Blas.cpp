// Row-major single-precision matrix products through OpenBLAS, and the loading of OpenBLAS with
// the kernels of the CPU it runs on.
#include "nn/cpu/Blas.h"

#include <cblas.h>
#include <dlfcn.h>
#include <strings.h>
#ifdef __F16C__
#include <immintrin.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>
#include <vector>

#include "nn/cpu/Bf16Gemm.h"
#include "nn/math/Half.h"
#include "nn/runtime/Autocast.h"
#include "nn/runtime/MatmulPrecision.h"
#include "nn/tensor/Error.h"

// Note [Choosing OpenBLAS's kernels]
// A distribution's OpenBLAS holds the kernels of every x86-64 generation (DYNAMIC_ARCH) and
// picks one set as it is loaded, from a table of the CPU models its release knew: a CPU newer
// than the table gets old kernels (Debian 12's 0.3.21 runs its SSE3 kernels, Prescott, on an
// Emerald Rapids Xeon, at a third of the CPU's rate). What it reads at that moment is
// OPENBLAS_CORETYPE, the name of the kernels to run. So the library does not link OpenBLAS: it
// loads it (dlopen, from a constructor, before main) with OPENBLAS_CORETYPE set to the kernels
// that the CPU's features call for (kernelsFor), and takes the variable away again, so that
// child processes choose for themselves. A user's OPENBLAS_CORETYPE is obeyed; NN_CPU_ISA lowers
// the choice with our own kernels' level, so that a run at avx2 has an AVX2 machine's GEMMs too.
// AVX-512 CPUs get the AVX-512 kernels, AMD's included: on Zen 4 they train the benchmarks'
// networks faster than the Zen kernels (bench/README.md). Where the kernels that run are below
// the level wanted (a user's choice, an OpenBLAS without the kernels asked for, a program that
// had loaded OpenBLAS before the library), stderr says so once, naming both.

namespace nn::blas {

using cpu::Isa;

namespace {

// The names OpenBLAS's shared library goes by: Debian's and most distributions', then the
// unversioned one of a build from source.
const char* const kLibraryNames[] = {"libopenblas.so.0", "libopenblas.so"};

struct OpenBlas {
  decltype(&cblas_sgemm) sgemm = nullptr;
  decltype(&openblas_set_num_threads) setNumThreads = nullptr;
  decltype(&openblas_get_num_threads) getNumThreads = nullptr;
  Report report;
  // Why OpenBLAS could not be loaded; empty where it was.
  std::string error;
};

int rank(Isa level) { return static_cast<int>(level); }

// How a level reads in a message about x86-64 kernels.
const char* levelWords(Isa level) {
  switch (level) {
    case Isa::avx512:
      return "AVX-512";
    case Isa::avx2:
      return "AVX2";
    default:
      return "below AVX2";
  }
}

// The library's name and version: the first two words of OpenBLAS's configuration string
// ("OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64").
std::string libraryName(const char* config) {
  std::istringstream words(config ? config : "");
  std::string name, version;
  words >> name >> version;
  return name.empty() ? "OpenBLAS" : version.empty() ? name : name + " " + version;
}

template <typename Function>
void resolve(void* handle, const char* symbol, Function& function, std::string& error) {
  function = reinterpret_cast<Function>(dlsym(handle, symbol));
  if (!function && error.empty()) error = std::string("nn: the OpenBLAS library loaded has no ") + symbol;
}

OpenBlas load() {
  OpenBlas blas;
  Report& report = blas.report;
  void* handle = nullptr;
  for (const char* name : kLibraryNames)
    if ((handle = dlopen(name, RTLD_NOW | RTLD_NOLOAD))) break;
  if (!handle) {
    const char* user = std::getenv("OPENBLAS_CORETYPE");
    const char* asked = nullptr;
    if (user && *user) {
      report.chosenBy = Chooser::environment;
      asked = user;
    } else if ((asked = kernelsFor(cpu::cpuFeatures(), wantedLevel()))) {
      report.chosenBy = Chooser::features;
      setenv("OPENBLAS_CORETYPE", asked, 1);
    }
    if (asked) report.asked = asked;
    std::string errors;
    for (const char* name : kLibraryNames) {
      if ((handle = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
      if (const char* why = dlerror()) errors += std::string(errors.empty() ? "" : "; ") + why;
    }
    if (report.chosenBy == Chooser::features) {
      if (user)
        setenv("OPENBLAS_CORETYPE", "", 1);  // it was set, empty
      else
        unsetenv("OPENBLAS_CORETYPE");
    }
    if (!handle) {
      blas.error = "nn: cannot load OpenBLAS (" + errors + "); Debian's package libopenblas0 provides it";
      return blas;
    }
  }
  decltype(&openblas_get_corename) corename = nullptr;
  decltype(&openblas_get_config) config = nullptr;
  resolve(handle, "cblas_sgemm", blas.sgemm, blas.error);
  resolve(handle, "openblas_set_num_threads", blas.setNumThreads, blas.error);
  resolve(handle, "openblas_get_num_threads", blas.getNumThreads, blas.error);
  resolve(handle, "openblas_get_corename", corename, blas.error);
  resolve(handle, "openblas_get_config", config, blas.error);
  if (!blas.error.empty()) return blas;
  report.library = libraryName(config());
  const char* kernels = corename();
  report.kernels = kernels ? kernels : "";
  report.warning = belowLevelWarning(report, wantedLevel(), cpu::cpuFeatures());
  if (!report.warning.empty()) std::fputs(report.warning.c_str(), stderr);
  return blas;
}

const OpenBlas& library() {
  static const OpenBlas blas = load();
  return blas;
}

const OpenBlas& loaded() {
  const OpenBlas& blas = library();
  NN_CHECK(blas.error.empty(), blas.error);
  return blas;
}

// Loads OpenBLAS before main, while the program has no other thread that could read the
// environment as OPENBLAS_CORETYPE is set and taken away; the first use loads it where a
// program's constructors use the library first.
__attribute__((constructor)) void loadAtStart() { library(); }

}  // namespace

namespace {

// The stored rows x cols block of a matrix of row stride ld, each element rounded to float16 and
// widened back, into `out` (row stride cols): the thread's own buffer, grown to the largest
// operand it has seen, so that a training step allocates nothing after the first.
// F16C's conversions (the build's x86-64 baseline has them) round as math::floatToHalf does, eight
// at a time.
const float* roundedToHalf(const float* x, int64_t rows, int64_t cols, int64_t ld, std::vector<float>& out) {
  const size_t count = static_cast<size_t>(rows) * static_cast<size_t>(cols);
  if (out.size() < count) out.resize(count);
  for (int64_t i = 0; i < rows; ++i) {
    const float* row = x + i * ld;
    float* to = out.data() + i * cols;
    int64_t j = 0;
#ifdef __F16C__
    for (; j + 8 <= cols; j += 8)
      _mm256_storeu_ps(to + j, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(row + j), _MM_FROUND_TO_NEAREST_INT)));
#endif
    for (; j < cols; ++j) to[j] = math::halfToFloat(math::floatToHalf(row[j]));
  }
  return out.data();
}

}  // namespace

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
          const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  NN_CHECK(m >= 0 && n >= 0 && k >= 0 && m < (int64_t{1} << 31) && n < (int64_t{1} << 31) && k < (int64_t{1} << 31),
           "nn::blas::gemm: sizes out of range: m=" << m << " n=" << n << " k=" << k);
  if (m == 0 || n == 0) return;
  if (bf16Products()) return cpu::bf16Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (fp16Products() && k > 0) {
    // float16 autocast: the operands rounded to float16, multiplied and summed in float32 (Autocast.h).
    thread_local std::vector<float> halfA, halfB;
    const int64_t aRows = transA ? k : m, aCols = transA ? m : k, bRows = transB ? n : k, bCols = transB ? k : n;
    a = roundedToHalf(a, aRows, aCols, lda, halfA);
    b = roundedToHalf(b, bRows, bCols, ldb, halfB);
    lda = aCols;
    ldb = bCols;
  }
  loaded().sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans,
                 static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b,
                 static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

bool bf16Products() {
  const DType autocast = autocastType();
  if (autocast == DType::Float16) return false;
  const bool scope = autocast == DType::BFloat16;
  if (!scope && float32MatmulPrecision() != MatmulPrecision::medium) return false;
  if (cpu::bf16GemmRuns()) return true;
  static std::once_flag saidMedium, saidAutocast;
  std::call_once(scope ? saidAutocast : saidMedium, [scope] {
    std::fprintf(stderr, "nn: %s: the CPU's products stay float32: %s\n",
                 scope ? "autocast bfloat16" : "float32 matmul precision medium", cpu::bf16GemmMissing().c_str());
  });
  return false;
}

bool fp16Products() {
  if (autocastType() != DType::Float16) return false;
  static std::once_flag said;
  std::call_once(said, [] {
    std::fprintf(stderr,
                 "nn: autocast float16: no CPU multiplies float16 faster than float32; the CPU's products round "
                 "their operands to float16 and multiply them in float32\n");
  });
  return true;
}

bool reducedProducts() { return bf16Products() || fp16Products(); }

void setNumThreads(int threads) {
  NN_CHECK(threads >= 1, "nn::blas::setNumThreads: expected at least 1 thread, got " << threads);
  loaded().setNumThreads(threads);
}

int numThreads() { return loaded().getNumThreads(); }

const char* kernelName() { return loaded().report.kernels.c_str(); }

const Report& report() { return loaded().report; }

const char* kernelsFor(const cpu::CpuFeatures& cpu, Isa level) {
  if (!cpu.avx2) return nullptr;  // not an x86-64 CPU that the build runs on
  if (rank(level) >= rank(Isa::avx512) && cpu.avx512) return cpu.avx512bf16 ? "Cooperlake" : "SkylakeX";
  return cpu.vendor == cpu::Vendor::amd || cpu.vendor == cpu::Vendor::hygon ? "Zen" : "Haswell";
}

Isa kernelsLevel(const std::string& name) {
  for (const char* avx512 : {"SkylakeX", "Cooperlake", "SapphireRapids"})
    if (strcasecmp(name.c_str(), avx512) == 0) return Isa::avx512;
  for (const char* avx2 : {"Haswell", "Zen"})
    if (strcasecmp(name.c_str(), avx2) == 0) return Isa::avx2;
  return Isa::generic;
}

Isa wantedLevel() {
  const Isa cpuLevel = cpu::featureLevel(cpu::cpuFeatures());
  const char* asked = std::getenv("NN_CPU_ISA");
  if (!asked) return cpuLevel;
  // A name that is not a level is the kernels' error at their first use (cpu::isa()); here the
  // CPU's level stands.
  for (Isa level : {Isa::generic, Isa::avx2, Isa::avx512})
    if (std::strcmp(asked, cpu::isaName(level)) == 0) return rank(level) < rank(cpuLevel) ? level : cpuLevel;
  return cpuLevel;
}

std::string belowLevelWarning(const Report& report, Isa wanted, const cpu::CpuFeatures& cpu) {
  if (!cpu.avx2) return "";  // off x86-64 OpenBLAS's choice stands
  const Isa running = kernelsLevel(report.kernels);
  if (rank(running) >= rank(wanted)) return "";
  std::ostringstream s;
  s << "nn: " << report.library << " runs its " << report.kernels << " kernels (" << levelWords(running)
    << ") where this CPU (" << cpu::featureNames(cpu) << ") runs " << levelWords(wanted)
    << " ones, so its GEMMs run slower than the CPU allows: ";
  switch (report.chosenBy) {
    case Chooser::environment:
      s << "OPENBLAS_CORETYPE=" << report.asked
        << " asked for them (without it the library chooses by the CPU's features; NN_CPU_ISA lowers the level)";
      break;
    case Chooser::features:
      s << "the library asked for " << report.asked << ", which this OpenBLAS does not have (a newer one has them)";
      break;
    case Chooser::openblas:
      s << "the program had loaded OpenBLAS before the library could choose (OPENBLAS_CORETYPE="
        << kernelsFor(cpu, wanted) << " in its environment chooses them)";
      break;
  }
  s << "\n";
  return s.str();
}

}  // namespace nn::blas
