#include "dpstream/privacy/privacy_spec.hpp"

#include <string>

#include "dpstream/base/errors.hpp"
#include "dpstream/base/format.hpp"
#include "dpstream/base/validate.hpp"

namespace dpstream::privacy {

std::unique_ptr<NoiseSource> NoiseSpec::make_source() const {
  if (seed) return std::make_unique<SeededNoiseSource>(*seed);
  return make_secure_noise_source();
}

void PrivacySpec::validate(std::string_view who) const {
  base::require_positive(std::string(who) + " row_norm_bound", row_norm_bound);
}

void PrivacySpec::validate_gaussian(std::string_view who) const {
  validate(who);
  if (!(target.delta() > 0.0))
    throw InvalidParameter(std::string(who) + ": target.delta must be > 0 (Gaussian noise is never pure DP), got " +
                           base::format_value(target.delta()));
}

}  // namespace dpstream::privacy
