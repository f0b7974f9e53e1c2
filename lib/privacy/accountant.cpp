#include "dpstream/privacy/accountant.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include <sodium.h>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/message_seal.hpp"
#include "dpstream/base/saved_state.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"
#include "dpstream/privacy/calibration.hpp"
#include "dpstream/base/text.hpp"
#include "privacy_ledger.pb.h"

namespace dpstream::privacy {

using base::format_value;
using base::require_positive;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Relative slack for float round-off when comparing a spent total with the budget: k charges of
// ρ/k sum to ρ only up to ~k ulps, and the conversion adds a few more; 1e-9 is far above that and far
// below any meaningful privacy difference.
constexpr double kSlack = 1e-9;

bool within(double spent, double budget) { return spent <= budget * (1.0 + kSlack); }

// A charge's identity for restore(): 64 random bits from the OS (libsodium), never 0 (0 marks a
// charge read from a ledger written before ids).
std::uint64_t fresh_charge_id() {
  if (sodium_init() < 0) throw std::runtime_error("privacy accountant: libsodium failed to initialise");
  std::uint64_t id = 0;
  while (id == 0) randombytes_buf(&id, sizeof id);
  return id;
}

// Domain of a ledger entry; `bad` receives the reason when false.
bool valid_charge(const Charge& c, std::string& bad) {
  if (c.rho.has_value() && !(std::isfinite(*c.rho) && *c.rho > 0.0)) {
    bad = "rho must be finite and > 0, got " + format_value(*c.rho);
    return false;
  }
  if (!(c.epsilon >= 0.0)) {  // NaN fails; +inf passes (the charge counts only through ρ)
    bad = "epsilon must be >= 0 (or +inf), got " + format_value(c.epsilon);
    return false;
  }
  if (!(c.delta >= 0.0 && c.delta < 1.0)) {
    bad = "delta must be in [0, 1), got " + format_value(c.delta);
    return false;
  }
  if (!c.rho.has_value() && std::isinf(c.epsilon)) {
    bad = "a charge without rho must have a finite epsilon";
    return false;
  }
  if (c.gaussian && !c.rho.has_value()) {
    bad = "a Gaussian charge must have rho";
    return false;
  }
  return true;
}

}  // namespace

const char* to_string(ZcdpConversion conversion) noexcept {
  return conversion == ZcdpConversion::cks2020 ? "cks2020" : "standard";
}

ZcdpConversion parse_zcdp_conversion(const std::string& text) {
  for (const ZcdpConversion c : {ZcdpConversion::cks2020, ZcdpConversion::standard})
    if (text == to_string(c)) return c;
  throw InvalidParameter("zCDP conversion '" + base::printable(text) + "': expected cks2020 or standard");
}

PrivacyAccountant::PrivacyAccountant(EpsDelta budget, ZcdpConversion conversion)
    : budget_(budget), conversion_(conversion) {
  if (conversion != ZcdpConversion::cks2020 && conversion != ZcdpConversion::standard) {
    throw InvalidParameter("conversion must be cks2020 or standard");
  }
}

Spent PrivacyAccountant::compute(const std::vector<Charge>& ledger, const Charge* extra) const {
  double basic_eps = 0.0, basic_delta = 0.0;  // all charges
  double rho = 0.0;                            // charges with ρ
  double other_eps = 0.0, other_delta = 0.0;   // charges without ρ
  const auto add = [&](const Charge& c) {
    basic_eps += c.epsilon;
    basic_delta += c.delta;
    if (c.rho.has_value()) {
      rho += *c.rho;
    } else {
      other_eps += c.epsilon;
      other_delta += c.delta;
    }
  };
  for (const Charge& c : ledger) add(c);
  if (extra != nullptr) add(*extra);

  const double budget_delta = budget_.delta();
  // zCDP bound: the charges without ρ compose basically; the ρ part is converted at the δ they leave.
  double zcdp_eps = kInf;
  double zcdp_delta = budget_delta;
  if (rho == 0.0) {
    // Nothing to convert: the bound is the basic composition of the charges without ρ.
    if (within(other_delta, budget_delta)) {
      zcdp_eps = other_eps;
      zcdp_delta = other_delta;
    }
  } else {
    const double delta_left = budget_delta - other_delta;
    if (delta_left > 0.0 && std::isfinite(rho)) {
      const double conv = conversion_ == ZcdpConversion::cks2020 ? epsilon_from_rho_cks(rho, delta_left)
                                                                 : epsilon_from_rho_standard(rho, delta_left);
      zcdp_eps = other_eps + conv;
    }
  }

  Spent s{};
  s.basic_epsilon = basic_eps;
  s.basic_delta = basic_delta;
  s.zcdp_epsilon = zcdp_eps;
  s.rho = rho;
  const bool basic_ok = within(basic_delta, budget_delta) && !std::isnan(basic_eps);
  const bool basic_better = basic_ok && (basic_eps < zcdp_eps || (basic_eps == zcdp_eps && basic_delta <= zcdp_delta));
  if (basic_better) {
    s.epsilon = basic_eps;
    s.delta = basic_delta;
  } else {
    s.epsilon = zcdp_eps;  // +inf when neither bound applies at the budget's δ
    s.delta = std::isfinite(zcdp_eps) ? zcdp_delta : budget_delta;
  }
  s.gdp_epsilon = gdp_epsilon(ledger, extra);
  if (s.gdp_epsilon < s.epsilon) {
    s.epsilon = s.gdp_epsilon;
    s.delta = budget_delta;
  }
  return s;
}

double PrivacyAccountant::gdp_epsilon(const std::vector<Charge>& ledger, const Charge* extra) const {
  double mu_squared = 0.0;  // Σ μ_i² = Σ 2ρ_i
  const auto add = [&](const Charge& c) {
    if (!c.gaussian || !c.rho.has_value()) return false;
    mu_squared += 2.0 * *c.rho;
    return true;
  };
  for (const Charge& c : ledger)
    if (!add(c)) return kInf;
  if (extra != nullptr && !add(*extra)) return kInf;
  if (!(mu_squared > 0.0) || !std::isfinite(mu_squared)) return kInf;
  // A Gaussian's privacy profile has δ(ε) > 0 at every finite ε: at a pure budget (δ = 0) no ε bounds it.
  if (!(budget_.delta() > 0.0)) return kInf;
  return epsilon_from_gdp(std::sqrt(mu_squared), budget_.delta());
}

Spent PrivacyAccountant::spent_with(const Charge& extra) const {
  std::string bad;
  if (!valid_charge(extra, bad)) throw InvalidParameter("charge '" + extra.label + "': " + bad);
  return compute(ledger_, &extra);
}

Spent PrivacyAccountant::spent() const { return compute(ledger_, nullptr); }

double PrivacyAccountant::remaining_epsilon() const {
  return std::max(0.0, budget_.epsilon() - spent().epsilon);
}

void PrivacyAccountant::charge(Charge c) {
  const Spent s = spent_with(c);
  if (!within(s.epsilon, budget_.epsilon())) {
    throw BudgetExhausted("privacy budget exhausted: charge '" + c.label + "' would bring the spent epsilon to " +
                          format_value(s.epsilon) + " (basic " + format_value(s.basic_epsilon) + " at delta " +
                          format_value(s.basic_delta) + ", zCDP " + format_value(s.zcdp_epsilon) + ", GDP " +
                          format_value(s.gdp_epsilon) + ") against the budget " + budget_.to_string() +
                          "; nothing was charged");
  }
  c.id = fresh_charge_id();
  ledger_.push_back(std::move(c));
}

void PrivacyAccountant::charge_gaussian(const std::string& label, double l2_sensitivity, double sigma,
                                        std::optional<EpsDelta> single) {
  Charge c;
  c.label = label;
  c.rho = gaussian_rho(l2_sensitivity, sigma);  // validates Δ and σ
  c.gaussian = true;
  if (single.has_value()) {
    // A claimed single-release guarantee must hold for this σ (exact profile, Balle & Wang 2018), or the
    // basic bound would undercount. Relative slack 1e-6 on δ: calibrations are solved to ~1e-12.
    const double true_delta = analytic_gaussian_delta(l2_sensitivity, sigma, single->epsilon());
    if (!(true_delta <= single->delta() * (1.0 + 1e-6))) {
      throw InvalidParameter("charge '" + label + "': the Gaussian mechanism with l2_sensitivity " +
                             format_value(l2_sensitivity) + " and sigma " + format_value(sigma) +
                             " is not " + single->to_string() + "-DP (its delta at that epsilon is " +
                             format_value(true_delta) + ")");
    }
    c.epsilon = single->epsilon();
    c.delta = single->delta();
  } else {
    c.epsilon = kInf;
    c.delta = 0.0;
  }
  charge(std::move(c));
}

void PrivacyAccountant::charge_pure(const std::string& label, double epsilon) {
  Charge c;
  c.label = label;
  c.rho = pure_epsilon_rho(epsilon);  // validates ε
  c.epsilon = epsilon;
  c.delta = 0.0;
  charge(std::move(c));
}

void PrivacyAccountant::charge_approx(const std::string& label, const EpsDelta& guarantee) {
  Charge c;
  c.label = label;
  c.epsilon = guarantee.epsilon();
  c.delta = guarantee.delta();
  charge(std::move(c));
}

void PrivacyAccountant::charge_zcdp(const std::string& label, double rho) {
  require_positive("rho", rho);
  Charge c;
  c.label = label;
  c.rho = rho;
  c.epsilon = kInf;
  c.delta = 0.0;
  charge(std::move(c));
}

void PrivacyAccountant::save(dpstream::proto::PrivacyLedger& msg) const {
  msg.set_format_version(kSealed.format_version);
  msg.set_budget_epsilon(budget_.epsilon());
  msg.set_budget_delta(budget_.delta());
  msg.set_conversion(conversion_ == ZcdpConversion::cks2020 ? dpstream::proto::PrivacyLedger::CKS2020
                                                            : dpstream::proto::PrivacyLedger::STANDARD);
  for (const Charge& c : ledger_) {
    auto* pc = msg.add_charges();
    pc->set_label(c.label);
    pc->set_has_rho(c.rho.has_value());
    pc->set_rho(c.rho.value_or(0.0));
    pc->set_epsilon(c.epsilon);
    pc->set_delta(c.delta);
    pc->set_gaussian(c.gaussian);
    pc->set_id(c.id);
  }
}

std::string PrivacyAccountant::save() const {
  dpstream::proto::PrivacyLedger msg;
  save(msg);
  return base::seal(std::move(msg), kSealed);
}

PrivacyAccountant PrivacyAccountant::load(const std::string& bytes) {
  return load(base::unseal<dpstream::proto::PrivacyLedger>(bytes, kSealed));  // a ledger cut after a charge would parse
}

PrivacyAccountant PrivacyAccountant::load(const dpstream::proto::PrivacyLedger& msg) {
  if (msg.format_version() != kSealed.format_version)
    base::refuse_format_version("privacy ledger", msg.format_version(), kSealed.format_version);
  ZcdpConversion conversion;
  switch (msg.conversion()) {
    case dpstream::proto::PrivacyLedger::CKS2020: conversion = ZcdpConversion::cks2020; break;
    case dpstream::proto::PrivacyLedger::STANDARD: conversion = ZcdpConversion::standard; break;
    default:
      throw CorruptInput("privacy ledger: unknown conversion " + std::to_string(static_cast<int>(msg.conversion())));
  }
  // Every value below comes from the bytes: a refusal of one (the budget's EpsDelta, a conversion at
  // its δ) is CorruptInput, never InvalidParameter (base/saved_state.hpp).
  return base::from_saved_state("privacy ledger", [&] {
    std::optional<PrivacyAccountant> acc;
    base::from_saved_state("privacy ledger: budget",
                           [&] { acc.emplace(EpsDelta(msg.budget_epsilon(), msg.budget_delta()), conversion); });
    acc->ledger_.reserve(static_cast<std::size_t>(msg.charges_size()));
    for (int i = 0; i < msg.charges_size(); ++i) {
      const auto& pc = msg.charges(i);
      Charge c;
      c.label = pc.label();
      if (pc.has_rho()) {
        c.rho = pc.rho();
      } else if (pc.rho() != 0.0) {
        throw CorruptInput("privacy ledger: charge " + std::to_string(i) + " ('" + pc.label() +
                           "'): rho is set but has_rho is false");
      }
      c.epsilon = pc.epsilon();
      c.delta = pc.delta();
      c.gaussian = pc.gaussian();
      c.id = pc.id();
      std::string bad;
      if (!valid_charge(c, bad)) {
        throw CorruptInput("privacy ledger: charge " + std::to_string(i) + " ('" + pc.label() + "'): " + bad);
      }
      acc->ledger_.push_back(std::move(c));
    }
    const Spent s = acc->spent();
    if (!within(s.epsilon, acc->budget_.epsilon())) {
      throw CorruptInput("privacy ledger: its charges spend epsilon " + format_value(s.epsilon) +
                         ", more than its own budget " + acc->budget_.to_string());
    }
    return std::move(*acc);
  });
}

namespace {

bool same_charge(const Charge& a, const Charge& b) {
  const auto bits = [](double x) {
    std::uint64_t w;
    std::memcpy(&w, &x, sizeof w);
    return w;
  };
  return a.id == b.id && a.label == b.label && a.rho.has_value() == b.rho.has_value() &&
         (!a.rho || bits(*a.rho) == bits(*b.rho)) && bits(a.epsilon) == bits(b.epsilon) && bits(a.delta) == bits(b.delta);
}

}  // namespace

void PrivacyAccountant::restore(const std::string& ledger_bytes) {
  const PrivacyAccountant saved = load(ledger_bytes);  // CorruptInput for bad bytes
  if (saved.budget_.epsilon() != budget_.epsilon() || saved.budget_.delta() != budget_.delta() ||
      saved.conversion_ != conversion_)
    throw CorruptInput("privacy ledger: the checkpoint's accountant has budget " + saved.budget_.to_string() + " (" +
                       to_string(saved.conversion_) + "), this one " + budget_.to_string() + " (" +
                       to_string(conversion_) + "): the checkpoint belongs to another accounting; nothing restored");
  std::size_t common = 0;
  while (common < ledger_.size() && common < saved.ledger_.size() && same_charge(ledger_[common], saved.ledger_[common]))
    ++common;
  std::vector<Charge> merged = ledger_;  // P, then this ledger's own entries after P
  merged.insert(merged.end(), saved.ledger_.begin() + static_cast<std::ptrdiff_t>(common), saved.ledger_.end());
  const Spent s = compute(merged, nullptr);
  if (!within(s.epsilon, budget_.epsilon()))
    throw BudgetExhausted("privacy budget exhausted: restoring the checkpoint's ledger (" +
                          std::to_string(saved.ledger_.size()) + " charges, " + std::to_string(common) +
                          " in common with this accountant's " + std::to_string(ledger_.size()) +
                          ") would bring the spent epsilon to " + format_value(s.epsilon) + " against the budget " +
                          budget_.to_string() + "; nothing was restored");
  ledger_ = std::move(merged);
}

}  // namespace dpstream::privacy
