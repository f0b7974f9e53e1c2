#include "dpstream/privacy/additive_mechanism.hpp"

#include <cmath>
#include <string>

#include "dpstream/base/format.hpp"
#include "dpstream/base/errors.hpp"

namespace dpstream::privacy {

void AdditiveMechanism::add_noise(Eigen::Ref<Eigen::VectorXd> value, NoiseSource& noise,
                                  PrivacyAccountant* accountant) const {
  add_noise(value, noise, accountant, label_);
}

void AdditiveMechanism::add_noise(Eigen::Ref<Eigen::VectorXd> value, NoiseSource& noise,
                                  PrivacyAccountant* accountant, const std::string& label) const {
  for (Eigen::Index i = 0; i < value.size(); ++i) {
    if (!std::isfinite(value[i]))
      throw InvalidParameter(std::string(name_) + ": value[" + std::to_string(i) + "] is not finite, got " +
                             base::format_value(value[i]));
  }
  check_release(value.size());
  if (accountant != nullptr) charge(*accountant, label);  // throws BudgetExhausted before any draw
  perturb(value, noise);
}

Eigen::VectorXd AdditiveMechanism::release(const Eigen::Ref<const Eigen::VectorXd>& value, NoiseSource& noise,
                                           PrivacyAccountant* accountant) const {
  return release(value, noise, accountant, label_);
}

Eigen::VectorXd AdditiveMechanism::release(const Eigen::Ref<const Eigen::VectorXd>& value, NoiseSource& noise,
                                           PrivacyAccountant* accountant, const std::string& label) const {
  Eigen::VectorXd noisy = value;
  add_noise(noisy, noise, accountant, label);
  return noisy;
}

double AdditiveMechanism::release(double value, NoiseSource& noise, PrivacyAccountant* accountant) const {
  return release(value, noise, accountant, label_);
}

double AdditiveMechanism::release(double value, NoiseSource& noise, PrivacyAccountant* accountant,
                                  const std::string& label) const {
  Eigen::VectorXd one(1);
  one[0] = value;
  add_noise(one, noise, accountant, label);
  return one[0];
}

}  // namespace dpstream::privacy
