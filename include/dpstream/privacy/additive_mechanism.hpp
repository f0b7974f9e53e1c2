// The release protocol every additive noise mechanism shares (Gaussian, Laplace, Huber).
//
// Contract of add_noise / release, the same for each mechanism:
//  1. every entry of the value must be finite: else InvalidParameter "<name>: value[i] is not finite,
//     got <v>", nothing charged, nothing drawn;
//  2. the mechanism's own pre-charge checks (check_release) may refuse the size: nothing charged;
//  3. the budget's accountant (unless the budget is unaccounted) is charged the mechanism's cost under
//     `label` (charge); a charge past the budget throws BudgetExhausted and nothing is drawn or released;
//  4. the noise is added and the result snapped to the mechanism's grid (perturb; snap.hpp).
// The neighbouring relation is the caller's, through the sensitivity the mechanism was built with.
#pragma once

#include <string>

#include <Eigen/Core>

#include "dpstream/linalg/dense_kernels.hpp"
#include "dpstream/privacy/budget.hpp"
#include "dpstream/privacy/noise_source.hpp"

namespace dpstream::privacy {

class AdditiveMechanism {
 public:
  virtual ~AdditiveMechanism() = default;

  // Adds noise in place, in the order above. The label defaults to the mechanism's short name.
  void add_noise(Eigen::Ref<Eigen::VectorXd> value, NoiseSource& noise,
                 const Budget& budget) const;
  void add_noise(Eigen::Ref<Eigen::VectorXd> value, NoiseSource& noise, const Budget& budget,
                 const std::string& label) const;
  Eigen::VectorXd release(const Eigen::Ref<const Eigen::VectorXd>& value, NoiseSource& noise,
                          const Budget& budget) const;
  Eigen::VectorXd release(const Eigen::Ref<const Eigen::VectorXd>& value, NoiseSource& noise,
                          const Budget& budget, const std::string& label) const;
  double release(double value, NoiseSource& noise, const Budget& budget) const;
  double release(double value, NoiseSource& noise, const Budget& budget,
                 const std::string& label) const;

 protected:
  // `name` heads the errors ("gaussian mechanism"); `label` is the default ledger label ("gaussian").
  AdditiveMechanism(const char* name, const char* label) : name_(name), label_(label) {}
  AdditiveMechanism(const AdditiveMechanism&) = default;
  AdditiveMechanism& operator=(const AdditiveMechanism&) = default;

  virtual void check_release(Eigen::Index /*coordinates*/) const {}
  virtual void charge(PrivacyAccountant& accountant, const std::string& label) const = 0;
  virtual void perturb(Eigen::Ref<Eigen::VectorXd> value, NoiseSource& noise) const = 0;

 private:
  const char* name_;
  const char* label_;
};

}  // namespace dpstream::privacy
