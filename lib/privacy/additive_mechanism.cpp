#include "dpstream/privacy/additive_mechanism.hpp"

#include <cmath>
#include <string>

#include "dpstream/base/format.hpp"
#include "dpstream/base/errors.hpp"

namespace dpstream::privacy {

void AdditiveMechanism::add_noise(Eigen::Ref<Eigen::VectorXd> value, NoiseSource& noise,
                                  const Budget& budget) const {
  add_noise(value, noise, budget, label_);
}

void AdditiveMechanism::add_noise(Eigen::Ref<Eigen::VectorXd> value, NoiseSource& noise,
                                  const Budget& budget, const std::string& label) const {
  for (Eigen::Index i = 0; i < value.size(); ++i) {
    if (!std::isfinite(value[i]))
      throw InvalidParameter(std::string(name_) + ": value[" + std::to_string(i) + "] is not finite, got " +
                             base::format_value(value[i]));
  }
  check_release(value.size());
  if (budget.accounted()) charge(*budget.accountant(), label);  // throws BudgetExhausted before any draw
  perturb(value, noise);
}

Eigen::VectorXd AdditiveMechanism::release(const Eigen::Ref<const Eigen::VectorXd>& value, NoiseSource& noise,
                                           const Budget& budget) const {
  return release(value, noise, budget, label_);
}

Eigen::VectorXd AdditiveMechanism::release(const Eigen::Ref<const Eigen::VectorXd>& value, NoiseSource& noise,
                                           const Budget& budget, const std::string& label) const {
  Eigen::VectorXd noisy = value;
  add_noise(noisy, noise, budget, label);
  return noisy;
}

double AdditiveMechanism::release(double value, NoiseSource& noise, const Budget& budget) const {
  return release(value, noise, budget, label_);
}

double AdditiveMechanism::release(double value, NoiseSource& noise, const Budget& budget,
                                  const std::string& label) const {
  Eigen::VectorXd one(1);
  one[0] = value;
  add_noise(one, noise, budget, label);
  return one[0];
}

}  // namespace dpstream::privacy
