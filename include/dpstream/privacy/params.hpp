// Privacy parameters, validated at construction.
#pragma once

#include <string>

namespace dpstream::privacy {

// (ε, δ)-differential privacy: Pr[M(D) ∈ O] ≤ e^ε Pr[M(D') ∈ O] + δ for neighbouring D, D'.
// ε must be finite and > 0; δ must be in [0, 1). δ = 0 is pure ε-DP.
class EpsDelta {
 public:
  EpsDelta(double epsilon, double delta);
  double epsilon() const noexcept { return epsilon_; }
  double delta() const noexcept { return delta_; }
  std::string to_string() const;  // "(epsilon=1, delta=1e-06)"

 private:
  double epsilon_;
  double delta_;
};

// ρ-zero-concentrated DP (Bun & Steinke 2016): D_α(M(D) ‖ M(D')) ≤ ρα for all α > 1.
// ρ must be finite and > 0.
class Zcdp {
 public:
  explicit Zcdp(double rho);
  double rho() const noexcept { return rho_; }
  std::string to_string() const;  // "rho=0.5"

 private:
  double rho_;
};

// How noise is calibrated to a target (ε, δ).
//  paper: σ = Δ·√(2 ln(1.25/δ))/ε exactly as the implemented papers print it (Dwork–Roth Thm A.1);
//         refused for ε ≥ 1, where its proof does not hold.
//  tight: the analytic Gaussian mechanism (Balle & Wang 2018) for one release, zCDP for compositions.
enum class Calibration { paper, tight };

// Which datasets are neighbours. Sensitivities are stated per relation.
enum class Neighbours {
  add_remove_row,  // D' = D with one row added or removed (a streamed row replaced by 0 counts as removed)
  replace_row,     // D' = D with one row replaced by another
};

const char* to_string(Calibration c) noexcept;  // "paper" | "tight"
const char* to_string(Neighbours n) noexcept;   // "add_remove_row" | "replace_row"
// The inverses; any other text: InvalidParameter naming it and the accepted names.
Calibration parse_calibration(const std::string& text);
Neighbours parse_neighbours(const std::string& text);

// Throws InvalidParameter naming `name` unless `value` is finite and > 0. The message is
// "<name> must be finite and > 0, got <value>".
void require_positive(const char* name, double value);

// The shortest decimal text that reads back as exactly `value` ("0.1", "-1", "1e-06", "inf", "nan"):
// the form every dpstream error message uses for a received value.
std::string format_value(double value);

}  // namespace dpstream::privacy
