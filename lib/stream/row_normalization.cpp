#include "dpstream/stream/row_normalization.hpp"

#include <cmath>

#include "dpstream/base/errors.hpp"
#include "dpstream/privacy/params.hpp"
#include "dpstream/base/format.hpp"

namespace dpstream::stream {

void RowNormalization::validate() const {
  if (normalize != "unit" && normalize != "clip" && normalize != "none")
    throw InvalidParameter("--normalize '" + normalize + "': expected unit, clip or none");
  if (!std::isfinite(clip_norm) || clip_norm <= 0)
    throw InvalidParameter("--clip-norm must be finite and > 0, got " + base::format_value(clip_norm));
  if (clip_norm_given && normalize == "unit")
    throw InvalidParameter("--clip-norm applies to --normalize clip or none (unit scales every row to norm 1)");
}

RowGuardOptions RowNormalization::guard_options(Eigen::Index dimension, bool nonnegative) const {
  RowGuardOptions o;
  o.dimension = dimension;
  o.norm_bound = norm_bound();
  o.over_norm = normalize == "none" ? OverNormPolicy::reject : OverNormPolicy::clip;
  o.nonnegative = nonnegative;
  o.scaling = normalize == "unit" ? RowScaling::unit : RowScaling::none;
  return o;
}

}  // namespace dpstream::stream
