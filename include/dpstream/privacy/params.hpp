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
//  add_remove_row: D' = D with one row added or removed, the other rows unchanged and, where order
//                  matters, in the same order. Holds for mechanisms whose output depends on the set of
//                  rows only (one-shot sums, PCA, completion); a stream's releases depend on where
//                  each row falls, and a removal there shifts every later row: not covered.
//  zero_out_row:   the streams' relation (ContinualSum, StreamingPrivateOja, FPL online PCA, the
//                  replay): D' = D with one row replaced by zeros, its slot kept, every other row in
//                  its place. Same sensitivity as add/remove (‖a − 0‖ ≤ L).
//  replace_row:    D' = D with one row replaced by another in the same slot.
enum class Neighbours {
  add_remove_row,
  replace_row,
  zero_out_row,
};

const char* to_string(Calibration c) noexcept;  // "paper" | "tight"
const char* to_string(Neighbours n) noexcept;   // "add_remove_row" | "replace_row" | "zero_out_row"
// The relation in words, for summaries and JSON ("one row zeroed, its slot kept (a removal that
// shifts later rows is not covered)", ...).
const char* describe(Neighbours n) noexcept;
// The inverses; any other text: InvalidParameter naming it and the accepted names.
Calibration parse_calibration(const std::string& text);
Neighbours parse_neighbours(const std::string& text);
// A stream checkpoint's relation field as the current names read it: checkpoints written before
// zero_out_row existed stored "add_remove_row" for the streams' zero-out relation (the only one they
// implemented besides replace), so that text reads as "zero_out_row"; any other text is unchanged.
std::string stream_relation_from_checkpoint(const std::string& stored);
// Streams (whose releases depend on each row's slot) take zero_out_row or replace_row; any other
// relation: InvalidParameter "<who>: relation add_remove_row is not a stream's guarantee ...".
void require_stream_relation(const char* who, Neighbours relation);

}  // namespace dpstream::privacy
