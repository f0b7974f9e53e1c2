#include "common/cli.hpp"

#include "common/text.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/staged_file.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/privacy/accountant.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/stream/row_normalization.hpp"

namespace dpstream::tools {

std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, const char* tool) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::fprintf(stderr, "%s: error: %s (see --help)\n", tool, printable(e.what()).c_str());
    return 2;
  }
  return std::nullopt;
}

void refuse_unusable(const std::string& message) {
  try {
    throw;
  } catch (const ResourceLimit&) {
    throw ResourceLimit(message);
  } catch (const std::exception&) {
    throw UsageError(message);
  }
}

int run_tool(const char* tool, const std::function<int()>& run) {
  base::remove_temporaries_on_signal();  // SIGINT / SIGTERM leave no OUTPUT.tmp-* behind
  try {
    return run();
  } catch (const UsageError& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", tool, printable(e.what()).c_str());
    return 2;
  } catch (const ResourceLimit& e) {  // a component refused before allocating: nothing was done
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s (--max-memory)\n", tool, printable(e.what()).c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: error: %s\n", tool, printable(e.what()).c_str());
    return 1;
  }
}

void flush_stdout() {
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout);
  if (failed) throw std::runtime_error(std::string("cannot write stdout: ") + std::strerror(errno));
}

CLI::Validator at_least(long long minimum) {
  return CLI::Validator(
      [minimum](std::string& text) -> std::string {
        char* end = nullptr;
        const long double value = std::strtold(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || value >= static_cast<long double>(minimum)) return {};
        return "must be >= " + std::to_string(minimum) + ", got " + text;
      },
      "");
}

privacy::Calibration PrivacyFlags::calibration_value() const {
  return privacy::parse_calibration(calibration);
}

std::string PrivacyFlags::noise_text() const {
  return seed ? "seeded (seed " + std::to_string(*seed) + "): reproducible, NOT secure"
              : std::string("secure (libsodium ChaCha20, OS-keyed)");
}

void add_privacy_options(CLI::App& app, PrivacyFlags& flags, const std::string& scope) {
  const std::string of = scope.empty() ? "" : " of " + scope;
  app.add_option("--epsilon", flags.epsilon, "privacy: epsilon" + of)->capture_default_str();
  app.add_option("--delta", flags.delta, "privacy: delta" + of + ", in (0, 1)")->capture_default_str();
  app.add_option("--calibration", flags.calibration, "tight (analytic Gaussian) or paper (the formulas as printed)")
      ->check(CLI::IsMember({"tight", "paper"}))
      ->capture_default_str();
  app.add_option("--seed", flags.seed,
                 "seed the noise: reproducible, NOT secure (default: the secure source, OS-keyed ChaCha20)")
      ->check(at_least(0));
}

void validate(const PrivacyFlags& flags) {
  if (!std::isfinite(flags.epsilon) || flags.epsilon <= 0)
    throw UsageError("--epsilon must be finite and > 0, got " + base::format_value(flags.epsilon));
  if (!(flags.delta > 0 && flags.delta < 1))
    throw UsageError("--delta must be in (0, 1), got " + base::format_value(flags.delta));
  // The accountant in floating point: one Gaussian release calibrated to the target and charged
  // against it must be representable (at ε = 1e200 the spent ε overflows; under the paper calibration
  // at ε = 1e-300, ρ underflows to 0). Found now, not at a mechanism's charge after the rows were read.
  try {
    const privacy::EpsDelta target = flags.target();
    privacy::PrivacyAccountant probe(target);
    probe.charge_gaussian("probe", 1.0, privacy::gaussian_sigma(1.0, target, flags.calibration_value()), target);
  } catch (const InvalidParameter& e) {
    throw calibration_refused(flags, "", e.what());
  } catch (const BudgetExhausted& e) {
    throw calibration_refused(flags, "", e.what());
  }
}

UsageError calibration_refused(const PrivacyFlags& flags, const std::string& others, const std::string& reason) {
  return UsageError("--epsilon " + base::format_value(flags.epsilon) + ", --delta " +
                    base::format_value(flags.delta) + ", --calibration " + flags.calibration +
                    (others.empty() ? "" : ", " + others) + " give no usable noise: " + reason);
}

stream::RowGuardOptions NormalizeFlags::guard_options(Eigen::Index dimension, bool nonnegative) const {
  return stream::RowNormalization{normalize, clip_norm, clip_norm_given}.guard_options(dimension, nonnegative);
}

std::string NormalizeFlags::text() const {
  if (normalize == "unit") return "normalised to unit norm";
  if (normalize == "clip") return "clipped to norm " + base::format_value(clip_norm);
  return "norm bound " + base::format_value(clip_norm) + " (reject)";
}

CLI::Option* add_normalize_options(CLI::App& app, NormalizeFlags& flags) {
  app.add_option("--normalize", flags.normalize,
                 "unit: a/|a| (zero rows stay zero); clip: scale rows over --clip-norm down to it; none: reject "
                 "rows over --clip-norm")
      ->check(CLI::IsMember({"unit", "clip", "none"}))
      ->capture_default_str();
  return app.add_option("--clip-norm", flags.clip_norm, "row norm bound L for clip / none")->capture_default_str();
}

void validate(const NormalizeFlags& flags) {
  try {
    stream::RowNormalization{flags.normalize, flags.clip_norm, flags.clip_norm_given}.validate();
  } catch (const InvalidParameter& e) {
    throw UsageError(e.what());
  }
}

}  // namespace dpstream::tools
