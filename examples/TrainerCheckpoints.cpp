// The training program's checkpoints: written where the parameters are finite, resumed with
// --resume, and the files a run writes kept apart.
#include "examples/TrainerParts.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace examples::trainer {

namespace {

// Parameters that are NaN or infinite, of all the model's.
int64_t nonFinite(nn::Module& model) {
  int64_t count = 0;
  for (const nn::Tensor& p : model.parameters().first)
    for (float v : p.toVector()) count += !std::isfinite(v);
  return count;
}

// Whether paths `a` and `b` name one file: through links where both exist, else once the links
// of the folders above them are resolved.
bool sameFile(const std::string& a, const std::string& b) {
  std::error_code error;
  if (std::filesystem::equivalent(a, b, error)) return true;
  const std::filesystem::path first = std::filesystem::weakly_canonical(a, error);
  if (error) return a == b;
  const std::filesystem::path second = std::filesystem::weakly_canonical(b, error);
  return error ? a == b : first == second;
}

}  // namespace

// Saves a checkpoint at `path`, unless the parameters hold NaN or infinite values: then beside
// it, at path.nonfinite, with a warning, so that `path` keeps the last finite checkpoint.
void saveFinite(const nn::TrainingState& state, const std::string& path) {
  const int64_t bad = nonFinite(*state.model);
  if (bad == 0) {
    nn::saveCheckpoint(state, path);
    return;
  }
  const std::string beside = path + ".nonfinite";
  nn::saveCheckpoint(state, beside);
  std::fprintf(stderr,
               "\nwarning: %lld parameters are NaN or infinite; this checkpoint went to %s, and %s keeps the "
               "last finite one\n",
               static_cast<long long>(bad), beside.c_str(), path.c_str());
}

// --save, --metrics and --export-onnx write a file each, and --resume's file may be written only
// by --save (a checkpoint continued in place): two of them naming one file would destroy a
// checkpoint (metrics appended to it, a network exported over it).
void checkSeparateFiles(const Options& o, const std::string& program) {
  const std::vector<std::pair<std::string, std::string>> files{
      {"--save", o.save}, {"--metrics", o.metrics}, {"--export-onnx", o.exportOnnx}, {"--resume", o.resume}};
  for (size_t i = 0; i < files.size(); ++i)
    for (size_t j = i + 1; j < files.size(); ++j) {
      const auto& [flag, path] = files[i];
      const auto& [otherFlag, otherPath] = files[j];
      if (path.empty() || otherPath.empty() || (flag == "--save" && otherFlag == "--resume")) continue;
      NN_CHECK(!sameFile(path, otherPath), program << ": " << flag << " " << path << " and " << otherFlag << " "
                                                   << otherPath << " are one file; each needs a file of its own");
    }
}

// What a checkpoint holds; with --resume, as the checkpoint left it.
void resume(Run& r) {
  r.scheduler = makeScheduler(r.o, *r.optimizer, r.batches->batchesPerEpoch());
  r.state = nn::TrainingState{r.local.get(), r.optimizer.get(), &*r.batches, 0};
  r.state.scheduler = r.scheduler.get();
  r.state.average = r.average.get();
  r.state.scaler = r.scaler.get();
  if (r.o.resume.empty()) return;
  nn::loadCheckpoint(r.state, r.o.resume);
  if (r.lead)
    std::printf("resumed from %s after %lld epoch(s)%s\n", r.o.resume.c_str(),
                static_cast<long long>(r.state.epochsDone),
                r.state.epochSteps > 0 ? " and some steps of the next" : "");
}

}  // namespace examples::trainer
