// dpstream-recommend on a 100,000-rating MovieLens-format file: the time limits (ALS rank 10,
// 20 iterations < 10 s; Frank–Wolfe T = 10 < 30 s on this 2-core machine), measured end to end by
// running the tool, and each training's rate against a limit measured in the same run.
//
// The file: movielens_like_ratings(943, 1682, 100000, rank 10) written as MovieLens-100K's u.data
// (tab-separated user, item, rating, timestamp); no MovieLens file ships with Debian.
// Runs (all --seed 1, --test-fraction 0.1, so 90,000 training ratings):
//   als   rank 10, 20 iterations, rigorous Gaussian, ξ = 200   (the ALS time criterion)
//   als   the same, faithful Gaussian
//   irls  rank 10, 20 iterations, K = 2, rigorous Gaussian, ξ = 200
//   fw    T = 10, tight Gaussian, exact eigensolver             (the Frank–Wolfe time criterion)
// Figures:
//   *_seconds_over_limit   the tool's wall time (reading, split, training, scoring) / its time limit;
//   als_gflops_over_gemm   ALS's useful FLOP rate (Gram accumulation Σ|Ω|·r² and the LDLT solves, both
//                          sides, per iteration) over a dense Eigen GEMM's rate on 256 × 256 matrices;
//   fw_seconds_over_eigen  Frank–Wolfe's training time over T dense symmetric eigendecompositions of
//                          the same n × n size (the exact solver's floor: one per round).
// Last line: JSON with the figures. Exit status 1 if a criterion is missed or a run fails.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "dpstream/completion/synthetic_ratings.hpp"
#include "dpstream/linalg/decompositions.hpp"
#include "dpstream/privacy/noise_source.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;
namespace linalg = dpstream::linalg;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// One number from the tool's final JSON line.
double json_number(const std::string& json, const std::string& key) {
  const auto at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return std::nan("");
  return std::strtod(json.c_str() + at + key.size() + 3, nullptr);
}

struct ToolRun {
  std::string json;
  double wall = 0.0;
  bool ok = false;
};

ToolRun run_tool(const fs::path& tool, const std::string& args, const fs::path& out) {
  const std::string command = tool.string() + " " + args + " > " + out.string() + " 2>&1";
  const auto t0 = Clock::now();
  const int status = std::system(command.c_str());
  ToolRun r;
  r.wall = seconds_since(t0);
  std::ifstream in(out);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line.front() == '{') r.json = line;
  r.ok = status == 0 && !r.json.empty();
  if (!r.ok) std::printf("FAILED: %s (status %d)\n", command.c_str(), status);
  return r;
}

double gemm_gflops(Eigen::Index n) {
  dpstream::privacy::SeededNoiseSource noise(7);
  Eigen::MatrixXd a(n, n), b(n, n), c(n, n);
  for (Eigen::Index k = 0; k < a.size(); ++k) a.data()[k] = noise.gaussian(), b.data()[k] = noise.gaussian();
  c.noalias() = a * b;  // warm-up
  int reps = 0;
  const auto t0 = Clock::now();
  do {
    c.noalias() += a * b;
    ++reps;
  } while (seconds_since(t0) < 0.5);
  return 2.0 * static_cast<double>(n * n * n) * reps / seconds_since(t0) / 1e9;
}

double eigen_seconds(Eigen::Index n) {
  dpstream::privacy::SeededNoiseSource noise(8);
  Eigen::MatrixXd m(n, n);
  for (Eigen::Index k = 0; k < m.size(); ++k) m.data()[k] = noise.gaussian();
  m = (m + m.transpose()).eval();
  const auto t0 = Clock::now();
  linalg::SymmetricEigenSolver solver(m);
  const double s = seconds_since(t0);
  std::printf("limit: one %lld x %lld symmetric eigendecomposition %.3f s (top eigenvalue %.1f)\n", (long long)n,
              (long long)n, s, solver.eigenvalues()(n - 1));
  return s;
}

}  // namespace

int main() {
  const fs::path self = fs::read_symlink("/proc/self/exe");
  const fs::path tool = self.parent_path().parent_path() / "tools" / "dpstream-recommend";
  if (!fs::exists(tool)) {
    std::printf("cannot find %s (build the tools first)\n", tool.c_str());
    return 1;
  }
  // A fresh private directory (mkdtemp: mode 0700, a name nobody could plant beforehand).
  std::string dir_template = (fs::temp_directory_path() / "dpstream-bench-recommend-XXXXXX").string();
  if (::mkdtemp(dir_template.data()) == nullptr) {
    std::printf("cannot create a directory in %s\n", fs::temp_directory_path().c_str());
    return 1;
  }
  const fs::path dir = dir_template;
  const fs::path data = dir / "u.data";
  {
    const auto set = dpstream::completion::movielens_like_ratings(943, 1682, 100000, 10, 1);
    std::ofstream out(data);
    long timestamp = 874724710;
    for (const auto& r : set.ratings)
      out << r.user + 1 << '\t' << r.item + 1 << '\t' << static_cast<int>(r.value) << '\t' << timestamp++ << '\n';
  }
  std::printf("file: %s, 100000 ratings (943 users x 1682 items, MovieLens-100K's u.data format)\n", data.c_str());

  const double gflops = gemm_gflops(256);
  std::printf("limit: dense GEMM 256 x 256: %.1f GFLOP/s\n", gflops);
  const double eigen = eigen_seconds(1682);

  // The generated file's items are public (its generator's parameters): --items-public.
  const std::string common = "--input " + data.string() + " --items-public --seed 1 --test-fraction 0.1 ";
  struct Case {
    std::string name, args;
    double limit;
  };
  const std::vector<Case> cases{
      {"als", "--method als --mechanism gaussian --mode rigorous --rank 10 --iters 20 --max-per-user 200", 10.0},
      {"als_faithful", "--method als --mechanism gaussian --mode faithful --rank 10 --iters 20", 10.0},
      {"irls", "--method irls --mechanism gaussian --mode rigorous --rank 10 --iters 20 --irls-iters 2 --max-per-user 200", 10.0},
      // k = 630: the former default B_r/4·√(943 × 1682), now given (a file's count of users is private).
      {"fw", "--method fw --mechanism gaussian --mode rigorous --iters 10 --nuclear-norm 630", 30.0},
  };
  bool all_ok = true;
  std::string json = "{";
  for (const Case& c : cases) {
    const ToolRun r = run_tool(tool, common + c.args, dir / (c.name + ".out"));
    all_ok = all_ok && r.ok;
    const double train = json_number(r.json, "train_seconds");
    const double ratio = r.wall / c.limit;
    all_ok = all_ok && ratio < 1.0;
    std::printf("%-13s wall %6.2f s (training %6.2f s) = %.3f of the %.0f s limit; test RMSE %.4f (item mean %.4f)\n",
                c.name.c_str(), r.wall, train, ratio, c.limit, json_number(r.json, "rmse"),
                json_number(r.json, "rmse_item_mean"));
    if (json.size() > 1) json += ',';
    json += '"';
    json += c.name;
    json += "_seconds_over_limit\":";
    json += std::to_string(ratio);
    if (c.name == "als") {
      // Per iteration, each side: Σ over rows of |Ω_row|·r² for the Gram (r(r+1)/2 multiply-adds, as
      // FLOPs r² + r) and r³/3 per LDLT; users and items both. 90,000 ratings, 943 + 1682 solves.
      const double r = 10, omega = 90000, solves = 943 + 1682;
      const double flops = 20 * (2 * omega * (r * r + 2 * r) + solves * (r * r * r / 3 + 2 * r * r));
      const double rate = flops / train / 1e9;
      std::printf("              useful %.2f GFLOP/s = %.4f of the dense GEMM rate\n", rate, rate / gflops);
      json += ",\"als_gflops_over_gemm\":" + std::to_string(rate / gflops);
    }
    if (c.name == "fw") {
      std::printf("              training = %.2f x T dense eigendecompositions\n", train / (10 * eigen));
      json += ",\"fw_seconds_over_eigen\":" + std::to_string(train / (10 * eigen));
    }
  }
  fs::remove_all(dir);
  std::printf("%s}\n", json.c_str());
  return all_ok ? 0 : 1;
}
