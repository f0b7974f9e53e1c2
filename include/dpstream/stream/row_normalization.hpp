// How rows are brought under the norm bound L every sensitivity rests on, by name — as the tools'
// --normalize / --clip-norm and the Python package's normalize= / clip_norm= give it:
//   unit: a/‖a‖ (zero rows stay zero), L = 1; clip: rows over clip_norm scaled down to it, L =
//   clip_norm; none: rows over clip_norm refused, L = clip_norm.
#pragma once

#include <string>

#include <Eigen/Core>

#include "dpstream/stream/row_guard.hpp"

namespace dpstream::stream {

struct RowNormalization {
  std::string normalize = "unit";  // unit | clip | none
  double clip_norm = 1.0;
  bool clip_norm_given = false;    // clip_norm was given (refused with unit, which ignores it)

  // InvalidParameter naming the setting (--normalize, --clip-norm) for an unknown name, a clip norm
  // that is not finite and > 0, or a clip norm given with unit.
  void validate() const;
  // The bound L rows are held to: 1 for unit, clip_norm otherwise.
  double norm_bound() const { return normalize == "unit" ? 1.0 : clip_norm; }
  // The guard's options for rows of `dimension` (validate() first).
  RowGuardOptions guard_options(Eigen::Index dimension, bool nonnegative) const;
};

}  // namespace dpstream::stream
