// What an estimator promises, in one value: the (ε, δ) target of the whole call or pass, how its
// noise is calibrated to it, the neighbouring relation the guarantee is stated for, the bound every
// row's norm must respect (the sensitivity follows from it and the relation), and where the noise
// comes from. Estimators' options carry it as `privacy`; each estimator states which relations it
// accepts and its default (a one-shot estimator add_remove_row, a stream zero_out_row).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "dpstream/privacy/noise_source.hpp"
#include "dpstream/privacy/params.hpp"

namespace dpstream::privacy {

// Where the noise comes from.
struct NoiseSpec {
  // set: a SeededNoiseSource (reproducible, NOT secure); unset: the secure source (OS-keyed ChaCha20).
  std::optional<std::uint64_t> seed;

  std::unique_ptr<NoiseSource> make_source() const;
};

struct PrivacySpec {
  EpsDelta target{1.0, 1e-6};
  Calibration calibration = Calibration::tight;
  Neighbours relation = Neighbours::add_remove_row;
  double row_norm_bound = 1.0;  // L: every row ‖a‖₂ ≤ L
  NoiseSpec noise{};

  // The checks every estimator shares, each InvalidParameter naming `who` and the field:
  // "<who> row_norm_bound must be finite and > 0, got <L>".
  void validate(std::string_view who) const;
  // For Gaussian noise (never pure DP): validate(), then "<who>: target.delta must be > 0 (Gaussian
  // noise is never pure DP), got 0".
  void validate_gaussian(std::string_view who) const;
};

}  // namespace dpstream::privacy
