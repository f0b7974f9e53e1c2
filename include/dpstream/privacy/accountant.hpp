// Privacy accountant: a ledger of every release, its guarantee, and what the whole run has spent.
//
// Accounting (what a caller gets):
//  * Each charge carries the guarantees known for it: a zCDP ρ (Gaussian: Δ²/(2σ²); pure ε: ε²/2)
//    and a single-release (ε_i, δ_i) (Gaussian: its calibration target, or the analytic profile;
//    pure: (ε, 0)).
//  * Two valid bounds on the composition are computed at the budget's δ, and the smaller is used:
//      basic:  (Σ ε_i, Σ δ_i)                              (Dwork & Roth 2014, Thm 3.16)
//      zCDP:   Σ ε_i over charges without ρ  +  conv(Σ ρ over charges with ρ, δ − Σ δ_i of the former)
//    where conv is the CKS 2020 conversion (or the standard one, as configured). When EVERY charge
//    is Gaussian (charge_gaussian: a Gaussian mechanism or an adaptive composition of them, μ_i =
//    √(2ρ_i)), a third bound:
//      GDP:    the ε at the budget's δ of the exact Gaussian profile of μ = √(Σ μ_i²)
//    (Dong, Roth & Su 2022: μ_i-GDP mechanisms compose adaptively to √(Σ μ_i²)-GDP; the profile is
//    analytic_gaussian_delta). It is exact for such a ledger, tighter than the zCDP conversion, and is
//    what lets Gaussian shares split under GDP (gdp_share_target) compose to the budget. Any charge
//    that is not Gaussian (pure, approx, zCDP-only, or a restored ledger entry written before the
//    flag existed) switches it off, and so does a pure budget (δ = 0: a Gaussian's δ(ε) is > 0 at
//    every finite ε, so GDP gives +inf there, as zCDP does). All bounds hold for the same run, so the minimum holds too.
//    A bound is used only where its δ is within the budget's δ: basic needs Σ δ_i ≤ δ; zCDP needs
//    δ − Σ δ_i (of charges without ρ) > 0 when there is any ρ, else it is +inf. With no ρ charged,
//    the zCDP bound is the basic composition of the charges without ρ.
//  * A charge is refused with BudgetExhausted (naming its label, the ε it would reach and the budget;
//    the ledger is unchanged) when the smaller valid bound's ε exceeds the budget's ε. Comparisons
//    with the budget (ε, and Σ δ_i against δ) allow a relative 1e-9 for float round-off.
//  * charge_gaussian with `single` checks that the claim holds for σ (analytic_gaussian_delta at its ε
//    ≤ its δ, relative slack 1e-6) and throws InvalidParameter otherwise.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dpstream/base/message_seal.hpp"
#include "dpstream/privacy/params.hpp"

namespace dpstream::proto {
class PrivacyLedger;
}

namespace dpstream::privacy {

enum class ZcdpConversion { cks2020, standard };
const char* to_string(ZcdpConversion conversion) noexcept;  // "cks2020" | "standard"
// The inverse; any other text: InvalidParameter naming it and the accepted names.
ZcdpConversion parse_zcdp_conversion(const std::string& text);

struct Charge {
  std::string label;            // what was released, for the ledger ("covariance tree node", ...)
  std::optional<double> rho;    // zCDP guarantee, if the mechanism has one
  double epsilon = 0.0;         // single-release (ε, δ) guarantee
  double delta = 0.0;
  bool gaussian = false;        // a Gaussian mechanism (or composition of them): μ-GDP, μ = √(2ρ)
  // Which release this is: random, drawn when the charge is made (0 in ledgers written before ids).
  // restore() takes two entries for one release only if their ids and fields agree, so two equal
  // mechanisms charged on two accountants stay two charges when their ledgers meet.
  std::uint64_t id = 0;
};

struct Spent {
  double epsilon;        // the smaller of the two bounds, at δ = delta
  double delta;          // the budget's δ (or Σ δ_i if basic composition is the smaller and uses less)
  double basic_epsilon;  // Σ ε_i
  double basic_delta;    // Σ δ_i
  double zcdp_epsilon;   // the zCDP bound at the budget's δ (+inf if not applicable)
  double rho;            // Σ ρ over charges that have one
  double gdp_epsilon;    // the GDP bound at the budget's δ (+inf unless every charge is Gaussian and δ > 0)
};

class PrivacyAccountant {
 public:
  explicit PrivacyAccountant(EpsDelta budget, ZcdpConversion conversion = ZcdpConversion::cks2020);

  // Charge a Gaussian release: ρ = Δ²/(2σ²). `single` is its single-release (ε, δ) guarantee when
  // known (the calibration target); without it the charge counts in the basic bound as ε_i = +inf,
  // i.e. only through ρ.
  void charge_gaussian(const std::string& label, double l2_sensitivity, double sigma,
                       std::optional<EpsDelta> single = std::nullopt);
  // Charge a pure ε-DP release (Laplace, Huber): ρ = ε²/2 and (ε, 0).
  void charge_pure(const std::string& label, double epsilon);
  // Charge a release known only as (ε, δ)-DP (no zCDP guarantee).
  void charge_approx(const std::string& label, const EpsDelta& guarantee);
  // Charge a release known as ρ-zCDP only.
  void charge_zcdp(const std::string& label, double rho);

  // What the ledger would spend with `extra` added; does not change the ledger. `extra` must be in
  // the ledger's domain (see load), else InvalidParameter.
  Spent spent_with(const Charge& extra) const;
  Spent spent() const;
  double remaining_epsilon() const;
  const EpsDelta& budget() const noexcept { return budget_; }
  ZcdpConversion conversion() const noexcept { return conversion_; }
  const std::vector<Charge>& ledger() const noexcept { return ledger_; }

  // Persistence (base/message_seal.hpp): the ledger as its message (lib/proto/privacy_ledger.proto),
  // and as sealed bytes (format_version 1). load throws CorruptInput on unparsable bytes, another
  // format_version, an invalid budget or conversion, entries out of domain (ρ present but not finite
  // > 0; ρ set without has_rho; ε NaN or < 0; ε = +inf without ρ; δ outside [0, 1)), or a ledger that
  // spends more than its own budget.
  static constexpr base::SealedKind kSealed{"privacy ledger", 1};
  void save(proto::PrivacyLedger& out) const;
  static PrivacyAccountant load(const proto::PrivacyLedger& in);
  std::string save() const;
  static PrivacyAccountant load(const std::string& bytes);

  // Restoring a checkpoint's ledger (`ledger_bytes`, save()'s bytes) onto this accountant,
  // which may have been charged since the checkpoint was written (by other mechanisms sharing it,
  // or in a new process). The ledger rule of a stream's restore (stream/restore_rules.hpp, which every
  // stream's restore path goes through), for Python's restore too: a restore never lowers
  // what this accountant has spent, nor what the checkpoint's ledger had spent.
  //  * Charges are compared in order, entry by entry (their random id, label, ρ, ε and δ, bit for
  //    bit); P is the longest common prefix. The result is P, then this ledger's entries after P,
  //    then the checkpoint's entries after P: this ledger extends the checkpoint's → unchanged; the
  //    checkpoint's extends this one (a fresh accountant: empty) → the checkpoint's is adopted;
  //    otherwise every charge either side made stays charged (a release that may have happened is
  //    never dropped). The id tells two equal mechanisms charged separately apart: a stream rebuilt
  //    beside its own restored checkpoint counts twice, as it should. Entries of ledgers written
  //    before ids (id 0) match on their fields alone.
  //  * Refused, with nothing changed: bytes load() refuses (CorruptInput); a ledger with
  //    another budget or conversion (CorruptInput: the checkpoint belongs to another accounting);
  //    a merged ledger that spends more than the budget (BudgetExhausted naming the ε reached).
  void restore(const std::string& ledger_bytes);

 private:
  void charge(Charge c);
  Spent compute(const std::vector<Charge>& ledger, const Charge* extra) const;
  double gdp_epsilon(const std::vector<Charge>& ledger, const Charge* extra) const;

  EpsDelta budget_;
  ZcdpConversion conversion_;
  std::vector<Charge> ledger_;
};

}  // namespace dpstream::privacy
