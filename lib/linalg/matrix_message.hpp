// Dense and packed symmetric matrices to and from their Protobuf messages (learner_states.proto's
// Matrix and SymmetricMatrix), for the save / load pairs of the types whose states hold them. A
// library-internal header: the generated message types are not part of the public API.
#pragma once

#include <cstdint>
#include <string>

#include <Eigen/Core>

#include "dpstream/base/errors.hpp"
#include "dpstream/linalg/packed_triangle.hpp"
#include "learner_states.pb.h"

namespace dpstream::linalg {

inline void save(const Eigen::MatrixXd& m, proto::Matrix& out) {
  out.set_rows(m.rows());
  out.set_cols(m.cols());
  out.mutable_values()->Add(m.data(), m.data() + m.size());
}

// CorruptInput naming `field` if the values do not match the shape.
inline Eigen::MatrixXd load(const proto::Matrix& m, const std::string& field) {
  if (m.rows() < 0 || m.cols() < 0 || m.values_size() != m.rows() * m.cols())
    throw CorruptInput(field + ": " + std::to_string(m.values_size()) + " values for a " + std::to_string(m.rows()) +
                       " x " + std::to_string(m.cols()) + " matrix");
  return Eigen::Map<const Eigen::MatrixXd>(m.values().data(), m.rows(), m.cols());
}

inline Eigen::VectorXd values_of(const google::protobuf::RepeatedField<double>& v) {
  return Eigen::Map<const Eigen::VectorXd>(v.data(), v.size());
}

// A packed triangle (pack_lower's layout) as it is; InvalidParameter naming `what` if its size is
// no d(d+1)/2.
inline void save_packed(const Eigen::Ref<const Eigen::VectorXd>& packed, proto::SymmetricMatrix& out,
                        const std::string& what) {
  out.set_size(packed_side(packed.size(), what));
  out.mutable_lower()->Add(packed.data(), packed.data() + packed.size());
}

// A packed triangle's values, as they are (their count checked against the size: CorruptInput
// naming `field`).
inline Eigen::Map<const Eigen::VectorXd> load_packed(const proto::SymmetricMatrix& m, const std::string& field) {
  const std::int64_t n = m.size();
  if (n < 0 || m.lower_size() != n * (n + 1) / 2)
    throw CorruptInput(field + ": " + std::to_string(m.lower_size()) + " values for the lower triangle of a " +
                       std::to_string(n) + " x " + std::to_string(n) + " matrix");
  return {m.lower().data(), m.lower_size()};
}

}  // namespace dpstream::linalg
