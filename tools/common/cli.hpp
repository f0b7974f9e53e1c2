// The command-line contract every dpstream tool follows, and the option groups they share.
//
// Exit status: 0 success; 2 a bad command line, an input that cannot be opened, or a run over the
// memory limit (nothing was read, no noise drawn, no budget spent); 1 the run started and then stopped: data found malformed,
// an I/O error. Each failure is one line on stderr, "TOOL: error: what".
//
// The option groups fill the library's option structs, so that a flag means the same in every tool
// and is validated once, naming the flag, before any input is read.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

#include "common/cli_fwd.hpp"

#include "common/text.hpp"  // printable: every message quoting input bytes

#include "dpstream/privacy/params.hpp"
#include "dpstream/stream/row_guard.hpp"

namespace dpstream::tools {

// A bad command line, or an input that cannot be used: exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Inside a catch block, for an input or output that cannot be used: a UsageError with `message`,
// except that a ResourceLimit stays one (exit 2 naming --max-memory: the memory limit refused it,
// not the input).
[[noreturn]] void refuse_unusable(const std::string& message);

// Parses argv into `app`: nullopt to go on, or the exit status (0 after --help, 2 on an error).
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, const char* tool);


// Runs `run` (returning the exit status) under the exit contract: UsageError and ResourceLimit (a
// component refused before allocating) → 2, any other exception → 1, each one line on stderr.
int run_tool(const char* tool, const std::function<int()>& run);

// Flushes stdout; std::runtime_error (exit 1) if anything printed could not be written (a full disk,
// a closed pipe): a summary or JSON line that never arrived is a failed run, not a success.
void flush_stdout();

// A validator for integer options: "must be >= minimum, got TEXT" (CLI11 would read -1 into an
// unsigned option as 2^64 - 1; its own range validators print the whole double range). Text that is
// not a number passes, for the option's conversion to refuse.
CLI::Validator at_least(long long minimum);

// --epsilon, --delta, --calibration, --seed.
struct PrivacyFlags {
  double epsilon = 1.0;
  double delta = 1e-6;
  std::string calibration = "tight";
  std::optional<std::uint64_t> seed;  // none: the secure source

  privacy::EpsDelta target() const { return privacy::EpsDelta(epsilon, delta); }
  privacy::Calibration calibration_value() const;
  // "seeded (seed N): reproducible, NOT secure" or "secure (libsodium ChaCha20, OS-keyed)".
  std::string noise_text() const;
};
void add_privacy_options(CLI::App& app, PrivacyFlags& flags, const std::string& scope = "");
// UsageError naming the flag for ε ∉ (0, ∞) or δ ∉ (0, 1).
void validate(const PrivacyFlags& flags);

// The library refused the noise's calibration for the flags as given (a σ that underflows for a huge
// ε, overflows for a tiny δ or a huge bound, a μ the target does not admit): exit 2, before any noise,
// naming the privacy flags and `others` (the tool's flags that enter the calibration), then the reason.
UsageError calibration_refused(const PrivacyFlags& flags, const std::string& others, const std::string& reason);

// --normalize unit|clip|none, --clip-norm L: how rows are brought under the norm bound every
// sensitivity rests on.
struct NormalizeFlags {
  std::string normalize = "unit";
  double clip_norm = 1.0;
  bool clip_norm_given = false;  // set after parsing (see add_normalize_options)

  // The bound L rows are held to: 1 for unit, --clip-norm otherwise.
  double norm_bound() const { return normalize == "unit" ? 1.0 : clip_norm; }
  // The guard's options for rows of `dimension`.
  stream::RowGuardOptions guard_options(Eigen::Index dimension, bool nonnegative) const;
  // "normalised to unit norm", "clipped to norm L", "norm bound L (reject)".
  std::string text() const;
};
// Returns the --clip-norm option so that the caller can set clip_norm_given after parsing.
CLI::Option* add_normalize_options(CLI::App& app, NormalizeFlags& flags);
void validate(const NormalizeFlags& flags);

}  // namespace dpstream::tools
